package clusterready_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	"github.com/karmada-go/karmada/internal/clusters/clusterready"
	"github.com/karmada-go/karmada/internal/testenv"
)

func TestClustersReadsTheInformerWithoutCopying(t *testing.T) {
	env := testenv.Start(t)
	ctx := context.Background()
	cl := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "a", Labels: map[string]string{"zone": "one"}},
		Spec: clusterv1alpha1.ClusterSpec{SyncMode: clusterv1alpha1.Push}}
	if err := env.Client.Create(ctx, cl); err != nil {
		t.Fatal(err)
	}
	var clusters *clusterready.Clusters
	env.RunManager(t, func(ctx context.Context, mgr manager.Manager) error {
		var err error
		if clusters, err = clusterready.NewClusters(ctx, mgr); err != nil {
			return err
		}
		// Before the cache runs, a Cluster that exists must not read as
		// missing: a controller would take it for gone.
		if _, err := clusters.Get(ctx, "a"); err == nil || apierrors.IsNotFound(err) {
			return fmt.Errorf("Get before the cache started: got %v, want an error other than NotFound", err)
		}
		return nil
	})

	zone := func(want string) func(context.Context) error {
		return func(ctx context.Context) error {
			got, err := clusters.Get(ctx, "a")
			if err != nil {
				return err
			}
			if got.Labels["zone"] != want {
				return fmt.Errorf("labels %v, want zone=%s", got.Labels, want)
			}
			return nil
		}
	}
	testenv.Eventually(t, time.Minute, "cluster a read", zone("one"))
	first, err := clusters.Get(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	again, err := clusters.Get(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	if first != again {
		t.Error("two reads of an unchanged Cluster returned two objects: it was copied")
	}
	if _, err := clusters.Get(ctx, "b"); !apierrors.IsNotFound(err) {
		t.Errorf("Get of a Cluster that does not exist: got %v, want NotFound", err)
	}

	cl.Labels["zone"] = "two"
	if err := env.Client.Update(ctx, cl); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, time.Minute, "cluster a's new label read", zone("two"))
}
