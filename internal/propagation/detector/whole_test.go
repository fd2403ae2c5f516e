package detector

import (
	"context"
	"errors"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// templateReader answers every read with one object, or an error, or
// (unsynced) not yet.
type templateReader struct {
	obj      *unstructured.Unstructured
	err      error
	unsynced bool
	reads    int
}

func (r *templateReader) GetIfSynced(_ context.Context, _ client.ObjectKey, obj client.Object) (bool, error) {
	r.reads++
	if r.unsynced {
		return false, nil
	}
	if r.err != nil {
		return true, r.err
	}
	obj.(*unstructured.Unstructured).Object = r.obj.DeepCopy().Object
	return true, nil
}

func deploymentAt(rv, image string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"namespace": "shop", "name": "web", "resourceVersion": rv},
		"spec":     map[string]any{"template": map[string]any{"spec": map[string]any{"containers": []any{map[string]any{"name": "c", "image": image}}}}},
	}}
	return u
}

// The whole template comes from the cache only when it holds the version
// the metadata cache has; otherwise, or when the cache fails, from the API
// server.
func TestWholeReadsTheCacheOnlyAtTheSameVersion(t *testing.T) {
	gvr := schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	k := key{gvr: gvr, namespace: "shop", name: "web"}
	meta := deploymentAt("7", "")
	for _, tc := range []struct {
		name      string
		cache     *templateReader
		wantImage string
	}{
		{"same version cached", &templateReader{obj: deploymentAt("7", "cached")}, "cached"},
		{"older version cached", &templateReader{obj: deploymentAt("6", "cached")}, "live"},
		{"not cached yet", &templateReader{err: apierrors.NewNotFound(gvr.GroupResource(), "web")}, "live"},
		{"cache still listing", &templateReader{obj: deploymentAt("7", "cached"), unsynced: true}, "live"},
		{"cache failing", &templateReader{err: errors.New("not listed within 2m0s")}, "live"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dyn := dynamicfake.NewSimpleDynamicClient(runtime.NewScheme(), deploymentAt("7", "live"))
			d := &Detector{Templates: tc.cache}
			got, err := d.whole(context.Background(), dyn.Resource(gvr).Namespace("shop"), k, meta)
			if err != nil {
				t.Fatal(err)
			}
			var image string
			if c, _, _ := unstructured.NestedSlice(got.Object, "spec", "template", "spec", "containers"); len(c) == 1 {
				image, _ = c[0].(map[string]any)["image"].(string)
			}
			if image != tc.wantImage {
				t.Errorf("read the %q template, want the %q one", image, tc.wantImage)
			}
			if tc.cache.reads != 1 {
				t.Errorf("the cache was read %d times, want 1", tc.cache.reads)
			}
		})
	}
}
