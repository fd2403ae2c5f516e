package cluster

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	workv1alpha1 "github.com/karmada-go/karmada/api/work/v1alpha1"
	"github.com/karmada-go/karmada/internal/scheme"
)

// A Work the cache has not seen yet keeps the execution namespace: the
// namespace goes only when the API server itself holds no Work in it.
func TestRemoveWaitsForWorksTheCacheLacks(t *testing.T) {
	now := metav1.NewTime(time.Now())
	cl := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "m2", Finalizers: []string{Finalizer}, DeletionTimestamp: &now}}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: workv1alpha1.ExecutionNamespace("m2")}}
	work := &workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: "leftover"}}

	for _, tc := range []struct {
		name          string
		live          []client.Object
		wantNamespace bool
	}{
		{"a Work only the API server has", []client.Object{work}, true},
		{"no Work anywhere", nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cached := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(cl.DeepCopy(), ns.DeepCopy()).Build()
			live := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(tc.live...).Build()
			r := &Reconciler{Client: cached, Reader: live}
			got := &clusterv1alpha1.Cluster{}
			if err := cached.Get(context.Background(), client.ObjectKey{Name: "m2"}, got); err != nil {
				t.Fatal(err)
			}
			res, err := r.remove(context.Background(), got)
			if err != nil {
				t.Fatal(err)
			}
			err = cached.Get(context.Background(), client.ObjectKeyFromObject(ns), &corev1.Namespace{})
			if kept := !apierrors.IsNotFound(err); kept != tc.wantNamespace {
				t.Errorf("namespace kept = %v (get: %v), want %v", kept, err, tc.wantNamespace)
			}
			if res.RequeueAfter == 0 {
				t.Errorf("result %+v, want a requeue while the namespace goes", res)
			}
		})
	}
}
