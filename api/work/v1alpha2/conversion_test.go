package v1alpha2

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/randfill"

	workv1alpha1 "github.com/karmada-go/karmada/api/work/v1alpha1"
)

// filler makes random bindings of either version whose every field can be
// set; values that have a canonical form on the wire (times, quantities, raw
// JSON) are made valid, and the conversion annotation is never set by it.
func filler(seed int64) *randfill.Filler {
	return randfill.NewWithSeed(seed).NilChance(0.3).NumElements(0, 3).MaxDepth(12).Funcs(
		func(m *metav1.ObjectMeta, c randfill.Continue) {
			m.Name, m.Namespace = c.String(12), c.String(8)
			m.UID = types.UID(c.String(8))
			m.ResourceVersion = fmt.Sprint(c.Uint64() % 1000)
			m.Generation = int64(c.Uint64() % 100)
			c.Fill(&m.Labels)
			c.Fill(&m.Annotations)
			delete(m.Annotations, ConversionAnnotation)
			c.Fill(&m.Finalizers)
		},
		func(t *metav1.Time, c randfill.Continue) {
			*t = metav1.NewTime(time.Unix(int64(c.Uint64()%2000000000), 0).UTC())
		},
		func(q *resource.Quantity, c randfill.Continue) {
			*q = *resource.NewMilliQuantity(int64(c.Uint64()%1000000), resource.DecimalSI)
		},
		func(r *runtime.RawExtension, c randfill.Continue) {
			r.Raw = []byte(fmt.Sprintf(`{"replicas":%d,"ready":%q}`, c.Uint64()%10, c.String(5)))
		},
		func(j *apiextensionsv1.JSON, c randfill.Continue) {
			j.Raw = []byte(fmt.Sprintf(`%q`, c.String(6)))
		},
		func(h *workv1alpha1.ResourceHealth, c randfill.Continue) {
			*h = []workv1alpha1.ResourceHealth{"", workv1alpha1.ResourceHealthy, workv1alpha1.ResourceUnhealthy, workv1alpha1.ResourceUnknownHealth}[c.Uint64()%4]
		},
	)
}

func wire(t *testing.T, obj any) string {
	t.Helper()
	b, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// checkRoundTrips converts random bindings made from seed both ways and
// back, and fails unless what comes back is what went in, on the wire.
func checkRoundTrips(t *testing.T, seed int64) {
	t.Helper()
	f := filler(seed)

	rb := &ResourceBinding{}
	f.Fill(rb)
	rb.TypeMeta = metav1.TypeMeta{APIVersion: SchemeGroupVersion.String(), Kind: "ResourceBinding"}
	v1 := &workv1alpha1.ResourceBinding{}
	if err := rb.ConvertTo(v1); err != nil {
		t.Fatal(err)
	}
	back := &ResourceBinding{}
	if err := back.ConvertFrom(v1); err != nil {
		t.Fatal(err)
	}
	if got, want := wire(t, back), wire(t, rb); got != want {
		t.Fatalf("seed %d: v1alpha2 -> v1alpha1 -> v1alpha2 changed the ResourceBinding\n got: %s\nwant: %s\nvia: %s", seed, got, want, wire(t, v1))
	}

	crb := &ClusterResourceBinding{}
	f.Fill(crb)
	crb.TypeMeta = metav1.TypeMeta{APIVersion: SchemeGroupVersion.String(), Kind: "ClusterResourceBinding"}
	v1c := &workv1alpha1.ClusterResourceBinding{}
	if err := crb.ConvertTo(v1c); err != nil {
		t.Fatal(err)
	}
	backc := &ClusterResourceBinding{}
	if err := backc.ConvertFrom(v1c); err != nil {
		t.Fatal(err)
	}
	if got, want := wire(t, backc), wire(t, crb); got != want {
		t.Fatalf("seed %d: v1alpha2 -> v1alpha1 -> v1alpha2 changed the ClusterResourceBinding\n got: %s\nwant: %s", seed, got, want)
	}

	old := &workv1alpha1.ResourceBinding{}
	f.Fill(old)
	old.TypeMeta = metav1.TypeMeta{APIVersion: workv1alpha1.SchemeGroupVersion.String(), Kind: "ResourceBinding"}
	v2 := &ResourceBinding{}
	if err := v2.ConvertFrom(old); err != nil {
		t.Fatal(err)
	}
	oldBack := &workv1alpha1.ResourceBinding{}
	if err := v2.ConvertTo(oldBack); err != nil {
		t.Fatal(err)
	}
	if got, want := wire(t, oldBack), wire(t, old); got != want {
		t.Fatalf("seed %d: v1alpha1 -> v1alpha2 -> v1alpha1 changed the ResourceBinding\n got: %s\nwant: %s\nvia: %s", seed, got, want, wire(t, v2))
	}

	oldc := &workv1alpha1.ClusterResourceBinding{}
	f.Fill(oldc)
	oldc.TypeMeta = metav1.TypeMeta{APIVersion: workv1alpha1.SchemeGroupVersion.String(), Kind: "ClusterResourceBinding"}
	v2c := &ClusterResourceBinding{}
	if err := v2c.ConvertFrom(oldc); err != nil {
		t.Fatal(err)
	}
	oldcBack := &workv1alpha1.ClusterResourceBinding{}
	if err := v2c.ConvertTo(oldcBack); err != nil {
		t.Fatal(err)
	}
	if got, want := wire(t, oldcBack), wire(t, oldc); got != want {
		t.Fatalf("seed %d: v1alpha1 -> v1alpha2 -> v1alpha1 changed the ClusterResourceBinding\n got: %s\nwant: %s", seed, got, want)
	}
}

// TestConversionRoundTrip: 2,000 random bindings of each kind and version
// come back unchanged from a round trip through the other version.
func TestConversionRoundTrip(t *testing.T) {
	seed := time.Now().UnixNano()
	r := rand.New(rand.NewSource(seed))
	t.Logf("seed of the seeds: %d", seed)
	for i := 0; i < 2000; i++ {
		checkRoundTrips(t, r.Int63())
	}
}

// FuzzConversionRoundTrip is the same check driven by `go test -fuzz`.
func FuzzConversionRoundTrip(f *testing.F) {
	for _, s := range []int64{0, 1, 42, 1 << 40} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, seed int64) { checkRoundTrips(t, seed) })
}

// TestConversionMapsFields checks where each v1alpha1 field lands, and that
// a binding v1alpha1 can hold whole carries no annotation.
func TestConversionMapsFields(t *testing.T) {
	old := &workv1alpha1.ResourceBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "web-deployment", Namespace: "shop"},
		Spec: workv1alpha1.ResourceBindingSpec{
			Resource: workv1alpha1.ObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "shop", Name: "web", ResourceVersion: "7",
				Replicas: 3, ReplicaResourceRequirements: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m")}},
			Clusters: []workv1alpha1.TargetCluster{{Name: "member1", Replicas: 2}, {Name: "member2", Replicas: 1}},
		},
		Status: workv1alpha1.ResourceBindingStatus{AggregatedStatus: []workv1alpha1.AggregatedStatusItem{{ClusterName: "member1", Applied: true}}},
	}
	rb := &ResourceBinding{}
	if err := rb.ConvertFrom(old); err != nil {
		t.Fatal(err)
	}
	if rb.Spec.Replicas != 3 || rb.Spec.ReplicaRequirements == nil || rb.Spec.ReplicaRequirements.ResourceRequest.Cpu().String() != "250m" ||
		len(rb.Spec.Clusters) != 2 || rb.Spec.Resource.Name != "web" || rb.Spec.Resource.ResourceVersion != "7" || !rb.Status.AggregatedStatus[0].Applied {
		t.Fatalf("v1alpha1 -> v1alpha2 mapped the fields wrongly: %s", wire(t, rb))
	}
	back := &workv1alpha1.ResourceBinding{}
	if err := rb.ConvertTo(back); err != nil {
		t.Fatal(err)
	}
	if _, ok := back.Annotations[ConversionAnnotation]; ok || back.Annotations != nil {
		t.Fatalf("a binding v1alpha1 holds whole got annotations %v", back.Annotations)
	}

	// A v1alpha1 client moves replicas between the clusters: the fields
	// only v1alpha2 has stay, matched by cluster name.
	rb.Spec.SchedulerName = "default-scheduler"
	rb.Spec.Clusters[0].Components = []ComponentReplicas{{Name: "worker", Replicas: 2}}
	rb.Status.AggregatedStatus[0].Health = workv1alpha1.ResourceHealthy
	if err := rb.ConvertTo(back); err != nil {
		t.Fatal(err)
	}
	if back.Annotations[ConversionAnnotation] == "" {
		t.Fatal("the v1alpha2 fields are not kept in the annotation")
	}
	back.Spec.Clusters[0].Replicas, back.Spec.Clusters[1].Replicas = 1, 2
	again := &ResourceBinding{}
	if err := again.ConvertFrom(back); err != nil {
		t.Fatal(err)
	}
	if again.Spec.SchedulerName != "default-scheduler" || again.Spec.Clusters[0].Replicas != 1 || len(again.Spec.Clusters[0].Components) != 1 ||
		again.Status.AggregatedStatus[0].Health != workv1alpha1.ResourceHealthy || again.Annotations != nil {
		t.Fatalf("the v1alpha1 client's change lost v1alpha2 fields: %s", wire(t, again))
	}
}
