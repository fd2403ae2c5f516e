package integration

import (
	"context"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/karmada-go/karmada/config/crd"
	"github.com/karmada-go/karmada/internal/controlplane"
	"github.com/karmada-go/karmada/internal/testenv"
)

// CRDs are upgraded in place: a CRD as an older release left it (another
// schema, no printer columns) is brought to this release's, keeping its
// objects; Helm's crds/ would have left it as it was.
func TestCRDsAreUpgradedInPlace(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	env := testenv.StartMember(t)
	if err := controlplane.InstallCRDs(ctx, env.Config); err != nil {
		t.Fatal(err)
	}
	api, err := apiextensionsclient.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	crds := api.ApiextensionsV1().CustomResourceDefinitions()
	const name = "clusters.cluster.karmada.io"
	old, err := crds.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// An older release's: no printer columns and a schema without spec.
	old.Spec.Versions[0].AdditionalPrinterColumns = nil
	delete(old.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties, "spec")
	old, err = crds.Update(ctx, old, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	uid := old.UID
	if err := controlplane.InstallCRDs(ctx, env.Config); err != nil {
		t.Fatal(err)
	}
	got, err := crds.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	all, err := crd.All()
	if err != nil {
		t.Fatal(err)
	}
	var want *apiextensionsv1.CustomResourceDefinition
	for _, c := range all {
		if c.Name == name {
			want = c
		}
	}
	if got.UID != uid {
		t.Errorf("the CRD was recreated (its objects would be gone), not updated")
	}
	if len(got.Spec.Versions[0].AdditionalPrinterColumns) != len(want.Spec.Versions[0].AdditionalPrinterColumns) || len(want.Spec.Versions[0].AdditionalPrinterColumns) == 0 {
		t.Errorf("printer columns %v, want this release's %v", got.Spec.Versions[0].AdditionalPrinterColumns, want.Spec.Versions[0].AdditionalPrinterColumns)
	}
	if _, ok := got.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"]; !ok {
		t.Errorf("the schema was not upgraded: no spec")
	}
}
