package features

import (
	"strings"
	"testing"

	"k8s.io/component-base/featuregate"
)

// Karmada's gates with Karmada's stages and defaults (v1.19), but for those
// not implemented here, which are off and refused on.
func TestGatesAreKarmadas(t *testing.T) {
	for _, tc := range []struct {
		name  featuregate.Feature
		on    bool
		stage featuregate.FeatureSpec
	}{
		{"Failover", false, featuregate.FeatureSpec{PreRelease: featuregate.Beta}},
		{"GracefulEviction", true, featuregate.FeatureSpec{PreRelease: featuregate.Beta}},
		{"PropagateDeps", true, featuregate.FeatureSpec{PreRelease: featuregate.Beta}},
		{"CustomizedClusterResourceModeling", true, featuregate.FeatureSpec{PreRelease: featuregate.Beta}},
		{"PropagationPolicyPreemption", false, featuregate.FeatureSpec{PreRelease: featuregate.Alpha}},
		{"MultiClusterService", false, featuregate.FeatureSpec{PreRelease: featuregate.Alpha}},
		{"ResourceQuotaEstimate", false, featuregate.FeatureSpec{PreRelease: featuregate.Alpha}},
		{"StatefulFailoverInjection", false, featuregate.FeatureSpec{PreRelease: featuregate.Alpha}},
		{"FederatedQuotaEnforcement", false, featuregate.FeatureSpec{PreRelease: featuregate.Alpha}},
		{"MultiplePodTemplatesScheduling", false, featuregate.FeatureSpec{PreRelease: featuregate.Alpha}},
		{"WorkloadAffinity", false, featuregate.FeatureSpec{PreRelease: featuregate.Alpha}},
		{"ContextualLogging", true, featuregate.FeatureSpec{PreRelease: featuregate.Beta}},
		{"LoggingAlphaOptions", false, featuregate.FeatureSpec{PreRelease: featuregate.Alpha}},
		{"LoggingBetaOptions", true, featuregate.FeatureSpec{PreRelease: featuregate.Beta}},
		{"PriorityBasedScheduling", true, featuregate.FeatureSpec{PreRelease: featuregate.Beta}},
		{"ControllerPriorityQueue", true, featuregate.FeatureSpec{PreRelease: featuregate.Beta}},
	} {
		spec, ok := Specs[tc.name]
		if !ok {
			t.Errorf("%s: not registered", tc.name)
			continue
		}
		if spec.Default != tc.on || spec.PreRelease != tc.stage.PreRelease {
			t.Errorf("%s: default %v %s, want %v %s", tc.name, spec.Default, spec.PreRelease, tc.on, tc.stage.PreRelease)
		}
		if _, refused := NotImplemented[tc.name]; refused && spec.Default {
			t.Errorf("%s: not implemented but on by default", tc.name)
		}
	}
	if len(Specs) != 16 {
		t.Errorf("%d gates registered, want Karmada's 16", len(Specs))
	}
}

func TestCheckRefusesWhatIsNotImplemented(t *testing.T) {
	if len(NotImplemented) != 0 {
		t.Errorf("not implemented: %v (every gate of Karmada's is)", NotImplemented)
	}
	NotImplemented[MultiClusterService] = "a missing feature"
	defer delete(NotImplemented, MultiClusterService)
	for _, tc := range []struct {
		set    string
		refuse string
	}{
		{"", ""},
		{"Failover=true,PropagationPolicyPreemption=true,ResourceQuotaEstimate=true", ""},
		{"ControllerPriorityQueue=false", ""},
		{"ControllerPriorityQueue=true", ""},
		// A gate whose feature is missing (MultiClusterService stands in
		// for one below) is refused by name when turned on.
		{"MultiClusterService=false", ""},
		{"MultiClusterService=true", "MultiClusterService (a missing feature): not implemented"},
		{"PriorityBasedScheduling=true,MultiClusterService=true,WorkloadAffinity=true", "--feature-gates: MultiClusterService (a missing feature): not implemented"},
		{"PriorityBasedScheduling=false", ""},
	} {
		g := featuregate.NewFeatureGate()
		if err := g.Add(Specs); err != nil {
			t.Fatal(err)
		}
		if tc.set != "" {
			if err := g.Set(tc.set); err != nil {
				t.Fatal(err)
			}
		}
		err := CheckGate(g)
		switch {
		case tc.refuse == "" && err != nil:
			t.Errorf("%q refused: %v", tc.set, err)
		case tc.refuse != "" && (err == nil || !strings.Contains(err.Error(), tc.refuse)):
			t.Errorf("%q: %v, want a refusal naming %q", tc.set, err, tc.refuse)
		}
	}
	// An unknown gate is refused by the flag itself.
	g := featuregate.NewFeatureGate()
	if err := g.Add(Specs); err != nil {
		t.Fatal(err)
	}
	if err := g.Set("Bogus=true"); err == nil || !strings.Contains(err.Error(), "unrecognized feature gate: Bogus") {
		t.Errorf("an unknown gate: %v", err)
	}
}
