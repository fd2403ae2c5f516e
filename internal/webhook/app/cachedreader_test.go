package app

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilcache "k8s.io/apimachinery/pkg/util/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
	"github.com/karmada-go/karmada/internal/scheme"
)

// staleCache is an informer cache that fell behind: it holds only what it
// was given.
type staleCache struct {
	cache.Cache
	reader client.Reader
}

func (s staleCache) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	return s.reader.List(ctx, list, opts...)
}

// countingReader counts the lists it answers.
type countingReader struct {
	client.Reader
	lists int
}

func (c *countingReader) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	c.lists++
	return c.Reader.List(ctx, list, opts...)
}

func quotaIn(ns, name string) *policyv1alpha1.FederatedResourceQuota {
	return &policyv1alpha1.FederatedResourceQuota{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
}

// A quota the stale cache lacks is found live, once per namespace and TTL;
// a namespace the cache has quotas in is never asked live.
func TestCachedReaderConfirmsAMissLive(t *testing.T) {
	ctx := context.Background()
	live := &countingReader{Reader: fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(quotaIn("tenant", "team"), quotaIn("other", "q")).Build()}
	cached := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(quotaIn("other", "q")).Build()
	r := &cachedReader{cache: staleCache{reader: cached}, live: live, lookups: utilcache.NewLRUExpireCache(16)}
	r.synced.Store(true)

	for i := 0; i < 3; i++ {
		list := &policyv1alpha1.FederatedResourceQuotaList{}
		if err := r.List(ctx, list, client.InNamespace("tenant")); err != nil {
			t.Fatal(err)
		}
		if len(list.Items) != 1 || list.Items[0].Name != "team" {
			t.Fatalf("list %d of tenant: %v, want the quota the cache lacks", i, list.Items)
		}
		// What a caller does with the items must not reach the kept answer.
		list.Items[0].Name = "changed"
	}
	if live.lists != 1 {
		t.Errorf("%d live lists for three placements in one namespace, want 1", live.lists)
	}
	list := &policyv1alpha1.FederatedResourceQuotaList{}
	if err := r.List(ctx, list, client.InNamespace("other")); err != nil || len(list.Items) != 1 {
		t.Fatalf("other: %v %v", list.Items, err)
	}
	if live.lists != 1 {
		t.Errorf("a namespace the cache has quotas in was asked live (%d lists)", live.lists)
	}
	empty := &policyv1alpha1.FederatedResourceQuotaList{}
	if err := r.List(ctx, empty, client.InNamespace("none")); err != nil || len(empty.Items) != 0 || live.lists != 2 {
		t.Errorf("a namespace without quotas: %v %v, %d live lists (want 2)", empty.Items, err, live.lists)
	}
}
