package mcs

import (
	"context"
	"errors"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	mcsv1alpha1 "github.com/karmada-go/karmada/api/multicluster/v1alpha1"
	workv1alpha1 "github.com/karmada-go/karmada/api/work/v1alpha1"
	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
	"github.com/karmada-go/karmada/internal/clusters/clusterready"
	"github.com/karmada-go/karmada/internal/names"
)

// WriteDispatched creates the Work key holding the one manifest raw (with
// labels and annotations), or updates cur's manifest where it says
// something else: the Works serviceImport and multiclusterservice dispatch
// to consumers. A Work of that name the caller did not list (not its own,
// or not cached yet) is left alone: its event brings the caller back.
func WriteDispatched(ctx context.Context, c client.Client, key client.ObjectKey, labels, annotations map[string]string, raw []byte, cur *workv1alpha1.Work) error {
	manifests := []workv1alpha1.Manifest{{RawExtension: runtime.RawExtension{Raw: raw}}}
	if cur == nil {
		w := &workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name, Labels: labels, Annotations: annotations},
			Spec: workv1alpha1.WorkSpec{Workload: workv1alpha1.WorkloadTemplate{Manifests: manifests}}}
		if err := c.Create(ctx, w); err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
		return nil
	}
	if !cur.DeletionTimestamp.IsZero() {
		return errors.New("work " + key.String() + " is being deleted; dispatched again once it is gone")
	}
	if len(cur.Spec.Workload.Manifests) == 1 && SameManifest(cur.Spec.Workload.Manifests[0].Raw, raw) {
		return nil
	}
	next := cur.DeepCopy()
	next.Spec.Workload.Manifests = manifests
	return c.Update(ctx, next)
}

// Serves reports whether the named cluster's endpoints go to other
// clusters: it is Ready and no Remedy keeps traffic away from it
// (TrafficControl in its status.remedyActions).
func Serves(ctx context.Context, c client.Reader, name string) bool {
	cl := &clusterv1alpha1.Cluster{}
	return c.Get(ctx, client.ObjectKey{Name: name}, cl) == nil && clusterready.IsReady(cl) && !clusterready.TrafficBlocked(cl)
}

// Takes reports whether the control plane takes what cluster says of its
// export of the Service namespace/name (its endpoints, its export record):
// always for a push-mode cluster (the control plane collected them
// itself); for a pull-mode one, whose agent wrote them and is not trusted
// with other namespaces' traffic, only when a ServiceExport of the control
// plane is propagated to it. When not, it says why.
func Takes(ctx context.Context, c client.Reader, cluster, namespace, name string) (bool, string, error) {
	cl := &clusterv1alpha1.Cluster{}
	if err := c.Get(ctx, client.ObjectKey{Name: cluster}, cl); err != nil {
		if apierrors.IsNotFound(err) {
			return false, "the cluster is not registered", nil
		}
		return false, "", err
	}
	if cl.Spec.SyncMode != clusterv1alpha1.Pull {
		return true, "", nil
	}
	rb := &workv1alpha2.ResourceBinding{}
	err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: names.BindingName("ServiceExport", name)}, rb)
	if client.IgnoreNotFound(err) != nil {
		return false, "", err
	}
	res := rb.Spec.Resource
	if err == nil && res.APIVersion == mcsv1alpha1.SchemeGroupVersion.String() && res.Kind == "ServiceExport" && res.Name == name &&
		slices.ContainsFunc(rb.Spec.Clusters, func(t workv1alpha2.TargetCluster) bool { return t.Name == cluster }) {
		return true, "", nil
	}
	return false, "the control plane propagates no ServiceExport of that Service to this pull-mode cluster", nil
}
