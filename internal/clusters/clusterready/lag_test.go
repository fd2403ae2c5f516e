package clusterready

import (
	"context"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	"github.com/karmada-go/karmada/internal/scheme"
)

// A Cluster created a moment ago may not be listed by the informer yet:
// Get must find it in the API server rather than answer NotFound (the
// execution controller let the Works of such a cluster go).
func TestClustersConfirmsWhatTheInformerLacks(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	inf := toolscache.NewSharedIndexInformer(&toolscache.ListWatch{
		ListFunc:  func(metav1.ListOptions) (runtime.Object, error) { return &clusterv1alpha1.ClusterList{}, nil },
		WatchFunc: func(metav1.ListOptions) (watch.Interface, error) { return watch.NewFake(), nil },
	}, &clusterv1alpha1.Cluster{}, 0, toolscache.Indexers{})
	go inf.Run(ctx.Done())
	if !toolscache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		t.Fatal("the informer never synced")
	}
	live := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(&clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "new"}}).Build()
	c := &Clusters{informer: inf, reader: live, live: live}
	deadline, stop := context.WithTimeout(ctx, 5*time.Second)
	defer stop()
	got, err := c.Get(deadline, "new")
	if err != nil || got.Name != "new" {
		t.Fatalf("Get of a Cluster the informer has not listed yet: %v, %v; want it from the API server", got, err)
	}
	if _, err := c.Get(deadline, "absent"); !apierrors.IsNotFound(err) {
		t.Fatalf("Get of a Cluster that does not exist: %v, want NotFound", err)
	}
}
