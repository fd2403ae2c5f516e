// Package thirdparty holds the customizations we ship for third-party
// workloads (OpenKruise, Argo, Flink, Spark, Ray, Kubeflow, Volcano, Flux,
// Kyverno), written by us as ResourceInterpreterCustomizations. They form
// the interpreter layer behind the user's customizations and interpreter
// webhooks and in front of the built-in knowledge: a user's customization
// for the same kind and operation takes precedence, operation by
// operation.
package thirdparty

import (
	"bytes"
	"embed"
	"fmt"
	"io/fs"
	"sort"
	"sync"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	configv1alpha1 "github.com/karmada-go/karmada/api/config/v1alpha1"
	"github.com/karmada-go/karmada/internal/interpreter"
	"github.com/karmada-go/karmada/internal/interpreter/customization"
	"github.com/karmada-go/karmada/internal/interpreter/luavm"
)

//go:embed customizations/*.yaml
var files embed.FS

// Customizations are the shipped customizations, by file name.
func Customizations() ([]configv1alpha1.ResourceInterpreterCustomization, error) {
	names, err := fs.Glob(files, "customizations/*.yaml")
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	out := make([]configv1alpha1.ResourceInterpreterCustomization, 0, len(names))
	for _, name := range names {
		data, err := files.ReadFile(name)
		if err != nil {
			return nil, err
		}
		var ric configv1alpha1.ResourceInterpreterCustomization
		if err := yaml.UnmarshalStrict(bytes.TrimSpace(data), &ric); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		out = append(out, ric)
	}
	return out, nil
}

var (
	once     sync.Once
	registry interpreter.Registry
	buildErr error
)

// Layer is the shipped customizations as an interpreter layer, compiled on
// first use.
type Layer struct{}

// Lookup implements interpreter.Layer.
func (Layer) Lookup(gk schema.GroupKind) *interpreter.Kind {
	once.Do(build)
	return registry[gk]
}

func build() {
	rics, err := Customizations()
	if err != nil {
		buildErr = err
		registry = interpreter.Registry{}
		return
	}
	registry, buildErr = customization.NewCompiler(luavm.Default).Build(rics)
}

// Err is why a shipped customization could not be used (never, unless a
// test says otherwise).
func Err() error {
	once.Do(build)
	return buildErr
}

// Kinds are the kinds the shipped customizations interpret.
func Kinds() []schema.GroupKind {
	once.Do(build)
	out := make([]schema.GroupKind, 0, len(registry))
	for gk := range registry {
		out = append(out, gk)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}

// Resources are the resources (resource.group) of the shipped kinds, as
// karmadactl join --propagate-kinds takes them: the local fleet lets
// Karmada write them in its members, so that a CloneSet or a
// FlinkDeployment can be tried there as it is.
var Resources = []string{
	"clonesets.apps.kruise.io", "statefulsets.apps.kruise.io", "daemonsets.apps.kruise.io",
	"workflows.argoproj.io", "flinkdeployments.flink.apache.org", "sparkapplications.sparkoperator.k8s.io",
	"rayclusters.ray.io", "rayjobs.ray.io", "pytorchjobs.kubeflow.org", "tfjobs.kubeflow.org",
	"jobs.batch.volcano.sh", "helmreleases.helm.toolkit.fluxcd.io", "kustomizations.kustomize.toolkit.fluxcd.io",
	"policies.kyverno.io", "clusterpolicies.kyverno.io",
}
