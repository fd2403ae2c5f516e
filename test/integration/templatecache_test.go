package integration

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	workv1alpha1 "github.com/karmada-go/karmada/api/work/v1alpha1"
	"github.com/karmada-go/karmada/internal/cache/templatecache"
	"github.com/karmada-go/karmada/internal/testenv"
)

// The template cache returns templates whole (spec, status, labels) as the
// API server holds them, follows changes and deletions, and refuses what it
// cannot answer with an error naming it.
func TestTemplateCache(t *testing.T) {
	t.Parallel()
	env := testenv.Start(t)
	c := env.Client
	var store *templatecache.Store
	env.RunManager(t, func(ctx context.Context, mgr manager.Manager) error {
		var err error
		store, err = templateStore(mgr)
		return err
	})
	ctx := context.Background()
	createNamespace(ctx, t, c, "shop")
	web := deployment("shop", "web", 2)
	web.Annotations = map[string]string{"note": strings.Repeat("x", 100)}
	if err := c.Create(ctx, web); err != nil {
		t.Fatal(err)
	}
	gvk := schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}
	read := func(ctx context.Context, name string) (*unstructured.Unstructured, error) {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(gvk)
		return u, store.Get(ctx, client.ObjectKey{Namespace: "shop", Name: name}, u)
	}
	// GetIfSynced starts the kind's informer but does not wait for it.
	testenv.Eventually(t, deadline, "the template from GetIfSynced", func(ctx context.Context) error {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(gvk)
		ok, err := store.GetIfSynced(ctx, client.ObjectKey{Namespace: "shop", Name: "web"}, u)
		if err != nil || !ok {
			return fmt.Errorf("answered %v, %v", ok, err)
		}
		if u.GetUID() != web.UID {
			return fmt.Errorf("uid %s, want %s", u.GetUID(), web.UID)
		}
		return nil
	})
	testenv.Eventually(t, deadline, "the template from the cache", func(ctx context.Context) error {
		u, err := read(ctx, "web")
		if err != nil {
			return err
		}
		r, _, _ := unstructured.NestedInt64(u.Object, "spec", "replicas")
		image, _, _ := unstructured.NestedString(u.Object, "spec", "template", "spec", "containers", "0", "image")
		if u.GetUID() != web.UID || r != 2 || u.GetAnnotations()["note"] != web.Annotations["note"] || u.GetLabels()["app"] != "web" {
			return fmt.Errorf("uid %s, replicas %d, annotations %v, labels %v, image %q", u.GetUID(), r, u.GetAnnotations(), u.GetLabels(), image)
		}
		if u.GetAPIVersion() != "apps/v1" || u.GetKind() != "Deployment" || len(u.GetManagedFields()) != 0 {
			return fmt.Errorf("apiVersion %q, kind %q, %d managedFields", u.GetAPIVersion(), u.GetKind(), len(u.GetManagedFields()))
		}
		return nil
	})
	// Changes to the spec and the status arrive.
	web.Spec.Replicas = ptr.To(int32(5))
	if err := c.Update(ctx, web); err != nil {
		t.Fatal(err)
	}
	web.Status.Replicas, web.Status.ReadyReplicas, web.Status.AvailableReplicas = 5, 3, 3
	if err := c.Status().Update(ctx, web); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, deadline, "the changed template", func(ctx context.Context) error {
		u, err := read(ctx, "web")
		if err != nil {
			return err
		}
		r, _, _ := unstructured.NestedInt64(u.Object, "spec", "replicas")
		a, _, _ := unstructured.NestedInt64(u.Object, "status", "availableReplicas")
		if r != 5 || a != 3 || u.GetResourceVersion() != web.ResourceVersion {
			return fmt.Errorf("replicas %d, available %d, resourceVersion %s (want %s)", r, a, u.GetResourceVersion(), web.ResourceVersion)
		}
		return nil
	})
	// Each read is a new object: changing one changes nothing cached.
	u, err := read(ctx, "web")
	if err != nil {
		t.Fatal(err)
	}
	u.SetLabels(map[string]string{"changed": "here"})
	if again, err := read(ctx, "web"); err != nil || again.GetLabels()["changed"] != "" {
		t.Fatalf("a read's change reached the cache: %v, %v", again.GetLabels(), err)
	}
	if _, err := read(ctx, "nothing"); !apierrors.IsNotFound(err) {
		t.Fatalf("a template that does not exist: want NotFound, got %v", err)
	}
	if err := c.Delete(ctx, web); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, deadline, "the deletion", func(ctx context.Context) error {
		if _, err := read(ctx, "web"); !apierrors.IsNotFound(err) {
			return fmt.Errorf("want NotFound, got %v", err)
		}
		return nil
	})
	// Other kinds are cached as they are read: a Work (a custom resource).
	createNamespace(ctx, t, c, "karmada-es-member1")
	w := &workv1alpha1.Work{}
	w.Namespace, w.Name = "karmada-es-member1", "w"
	if err := c.Create(ctx, w); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, deadline, "a Work from the cache", func(ctx context.Context) error {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(workv1alpha1.SchemeGroupVersion.WithKind("Work"))
		if err := store.Get(ctx, client.ObjectKey{Namespace: w.Namespace, Name: "w"}, u); err != nil {
			return err
		}
		if u.GetUID() != w.UID {
			return fmt.Errorf("uid %s, want %s", u.GetUID(), w.UID)
		}
		return nil
	})
	// What it cannot answer: a kind the API server does not serve, an
	// object that is not unstructured.
	tctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	nope := &unstructured.Unstructured{}
	nope.SetGroupVersionKind(schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Nothing"})
	if err := store.Get(tctx, client.ObjectKey{Namespace: "shop", Name: "x"}, nope); err == nil || !strings.Contains(err.Error(), "Nothing") {
		t.Fatalf("an unknown kind: want an error naming it, got %v", err)
	}
	if err := store.Get(tctx, client.ObjectKey{Namespace: "shop", Name: "web"}, deployment("shop", "web", 1)); err == nil || !strings.Contains(err.Error(), "not an unstructured object") {
		t.Fatalf("a typed object: want an error, got %v", err)
	}
}
