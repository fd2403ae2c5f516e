package binding

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"

	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
	"github.com/karmada-go/karmada/internal/propagation/bindings"
)

// A binding synced from a template cache that was behind it is sent back
// once, by the cache's next copy of that template, to the controller of its
// kind; copies of other templates send nothing.
func TestBindingWaitsForTheTemplateCache(t *testing.T) {
	r := &Reconciler{kicks: map[bool]chan event.GenericEvent{false: make(chan event.GenericEvent, 4), true: make(chan event.GenericEvent, 4)}}
	deploy := schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}
	role := schema.GroupVersionKind{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRole"}
	rb := &workv1alpha2.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web-deployment"}}
	crb := &workv1alpha2.ClusterResourceBinding{ObjectMeta: metav1.ObjectMeta{Name: "view-clusterrole"}}
	for _, obj := range []client.Object{rb, crb} {
		b, err := bindings.Of(obj)
		if err != nil {
			t.Fatal(err)
		}
		ref := workv1alpha2.ObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "shop", Name: "web"}
		if b.ClusterScoped() {
			ref = workv1alpha2.ObjectReference{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole", Name: "view"}
		}
		r.awaitTemplate(b, ref)
	}
	got := func(clusterScoped bool) []string {
		var names []string
		for {
			select {
			case e := <-r.kicks[clusterScoped]:
				names = append(names, client.ObjectKeyFromObject(e.Object).String())
			default:
				return names
			}
		}
	}
	// Another template of the same kind, or the same name in another kind.
	r.templateCached(deploy, client.ObjectKey{Namespace: "shop", Name: "api"})
	r.templateCached(role, client.ObjectKey{Namespace: "shop", Name: "web"})
	if n, c := got(false), got(true); len(n)+len(c) != 0 {
		t.Fatalf("other templates sent %v %v", n, c)
	}
	r.templateCached(deploy, client.ObjectKey{Namespace: "shop", Name: "web"})
	r.templateCached(role, client.ObjectKey{Name: "view"})
	if n, c := got(false), got(true); len(n) != 1 || n[0] != "shop/web-deployment" || len(c) != 1 || c[0] != "/view-clusterrole" {
		t.Fatalf("the templates' copies sent %v (ResourceBindings) and %v (ClusterResourceBindings); want each binding once", n, c)
	}
	// Once: the sync it causes waits again if it must.
	r.templateCached(deploy, client.ObjectKey{Namespace: "shop", Name: "web"})
	if n := got(false); len(n) != 0 {
		t.Errorf("a second copy sent %v again", n)
	}
}

// Without a template cache to wait for (a Client reads templates), nothing
// is remembered.
func TestNoWaitingWithoutTheCache(t *testing.T) {
	r := &Reconciler{}
	b, _ := bindings.Of(&workv1alpha2.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web-deployment"}})
	r.awaitTemplate(b, workv1alpha2.ObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "shop", Name: "web"})
	n := 0
	r.behind.Range(func(any, any) bool { n++; return true })
	if n != 0 {
		t.Errorf("%d waiters without a cache", n)
	}
}
