// Package orphans sweeps the members for objects Karmada manages whose Work
// no longer exists or no longer holds them: copies a removed Cluster, a
// crash, an earlier version or a Work whose manifest changed identity left
// behind. It reports them (a metric, a log line and a Warning event on
// the Cluster) and, when asked, removes those still orphaned at the next
// sweep: deleted when Karmada created them, released when it adopted them.
package orphans

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	workv1alpha1 "github.com/karmada-go/karmada/api/work/v1alpha1"
	"github.com/karmada-go/karmada/internal/cache/compactobj"
	"github.com/karmada-go/karmada/internal/clusters/clusterclient"
	"github.com/karmada-go/karmada/internal/clusters/clusterready"
	"github.com/karmada-go/karmada/internal/events"
	"github.com/karmada-go/karmada/internal/names"
)

// ControllerName is the name --controllers knows it by.
const ControllerName = "orphanSweep"

// listInterval spaces the list requests of a sweep to one member.
const listInterval = 100 * time.Millisecond

var orphanedGauge = prometheus.NewGaugeVec(prometheus.GaugeOpts{
	Name: "karmada_orphaned_member_objects",
	Help: "Objects marked as Karmada's in a member whose Work no longer exists, at the last sweep.",
}, []string{"member_cluster"})

func init() { metrics.Registry.MustRegister(orphanedGauge) }

// Sweeper looks for orphans every Interval.
type Sweeper struct {
	Client   client.Client
	Members  *clusterclient.Cache
	Recorder record.EventRecorder
	Interval time.Duration
	// Remove deletes (or, when adopted, releases) an object found orphaned
	// in two sweeps in a row; otherwise orphans are only reported.
	Remove bool
	// ListSpacing spaces the list requests to a member (default
	// listInterval): a sweep must not crowd the member's API server.
	ListSpacing time.Duration
	// PageSize is how many objects one list request returns (default
	// sweepPageSize).
	PageSize int64

	mu   sync.Mutex
	seen map[types.UID]bool
}

// NeedLeaderElection: one replica sweeps.
func (s *Sweeper) NeedLeaderElection() bool { return true }

// Start sweeps every Interval until ctx ends.
func (s *Sweeper) Start(ctx context.Context) error {
	t := time.NewTicker(s.Interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
			if err := s.Sweep(ctx); err != nil {
				klog.FromContext(ctx).Error(err, "Sweeping members for orphaned objects")
			}
		}
	}
}

// Sweep looks at every Ready push-mode cluster once. An object orphaned in
// this sweep and the one before is removed when Remove is set.
func (s *Sweeper) Sweep(ctx context.Context) error {
	clusters := &clusterv1alpha1.ClusterList{}
	if err := s.Client.List(ctx, clusters); err != nil {
		return err
	}
	seen := map[types.UID]bool{}
	var errs []string
	for i := range clusters.Items {
		c := &clusters.Items[i]
		if c.Spec.SyncMode == clusterv1alpha1.Pull || !clusterready.IsReady(c) || !c.DeletionTimestamp.IsZero() {
			continue
		}
		if err := s.sweepCluster(ctx, c, seen); err != nil {
			errs = append(errs, fmt.Sprintf("%s: %v", c.Name, err))
		}
	}
	s.mu.Lock()
	s.seen = seen
	s.mu.Unlock()
	if len(errs) > 0 {
		return fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return nil
}

func (s *Sweeper) sweepCluster(ctx context.Context, c *clusterv1alpha1.Cluster, seen map[types.UID]bool) error {
	log := klog.FromContext(ctx)
	m, err := s.Members.Get(ctx, c)
	if err != nil {
		return err
	}
	lists, err := m.Kube.Discovery().ServerPreferredResources()
	if err != nil && len(lists) == 0 {
		return err
	}
	var orphans []string
	for _, list := range lists {
		gv, err := schema.ParseGroupVersion(list.GroupVersion)
		if err != nil {
			continue
		}
		for _, res := range list.APIResources {
			if !slices.Contains(res.Verbs, "list") || strings.Contains(res.Name, "/") {
				continue
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(cmp.Or(s.ListSpacing, listInterval)):
			}
			// Metadata is all a sweep reads, a page at a time: a member
			// holding ten thousand copies is not decoded whole.
			items, err := listMetadata(ctx, m.Metadata.Resource(gv.WithResource(res.Name)), gv.WithKind(res.Kind), cmp.Or(s.PageSize, sweepPageSize))
			if err != nil {
				continue // a type that cannot be listed holds nothing to report
			}
			for _, obj := range items {
				orphan, err := s.orphaned(ctx, c.Name, obj)
				if err != nil {
					return err
				}
				if !orphan {
					continue
				}
				name := fmt.Sprintf("%s %s", res.Kind, key(obj))
				orphans = append(orphans, name)
				seen[obj.GetUID()] = true
				work, _ := names.WorkOf(obj.GetAnnotations())
				log.Info("Orphaned object in member", "cluster", c.Name, "object", name, "work", work.String())
				if s.Remove && s.seenBefore(obj.GetUID()) && res.Kind != "Namespace" {
					if err := remove(ctx, m, gv.WithResource(res.Name), obj); err != nil {
						return err
					}
				}
			}
		}
	}
	orphanedGauge.WithLabelValues(c.Name).Set(float64(len(orphans)))
	if len(orphans) > 0 {
		shown := orphans[:min(len(orphans), 5)]
		events.Warning(s.Recorder, c, events.OrphanedObjects, "%d objects marked as Karmada's have no Work any more (e.g. %s)%s",
			len(orphans), strings.Join(shown, ", "), map[bool]string{true: "; those seen in the last sweep too are removed", false: ""}[s.Remove])
	}
	return nil
}

// sweepPageSize is how many objects one list request of a sweep returns.
const sweepPageSize int64 = 500

// listMetadata lists the metadata of every object of a resource marked as
// Karmada's, page by page, as unstructured objects of kind gvk holding
// metadata only.
func listMetadata(ctx context.Context, ri metadata.ResourceInterface, gvk schema.GroupVersionKind, pageSize int64) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	opts := metav1.ListOptions{LabelSelector: workv1alpha1.ManagedLabel + "=true", Limit: pageSize}
	for {
		page, err := ri.List(ctx, opts)
		if err != nil {
			return nil, err
		}
		for i := range page.Items {
			out = append(out, compactobj.FromMetadata(&page.Items[i], gvk))
		}
		if page.Continue == "" {
			return out, nil
		}
		opts.Continue = page.Continue
	}
}

// orphaned reports whether a member object names a Work of this cluster
// that does not exist, or that no longer holds it (its manifest now names
// another object: the old copy is left over).
func (s *Sweeper) orphaned(ctx context.Context, cluster string, obj *unstructured.Unstructured) (bool, error) {
	key, ok := names.WorkOf(obj.GetAnnotations())
	if !ok || key.Namespace != workv1alpha1.ExecutionNamespace(cluster) {
		return false, nil
	}
	work := &workv1alpha1.Work{}
	err := s.Client.Get(ctx, key, work)
	if apierrors.IsNotFound(err) {
		return true, nil
	}
	if err != nil {
		return false, err
	}
	return !holds(work, obj), nil
}

// holds reports whether one of a Work's manifests is obj: the same group,
// kind, namespace and name. The count quota the execution controller puts
// into a namespace it is deleting comes with the namespace's Work.
func holds(work *workv1alpha1.Work, obj *unstructured.Unstructured) bool {
	gvk := obj.GroupVersionKind()
	if gvk.Group == "" && gvk.Kind == "ResourceQuota" && obj.GetName() == names.CountQuotaName {
		return true
	}
	for _, m := range work.Spec.Workload.Manifests {
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(m.Raw); err != nil {
			return true // cannot tell: not an orphan
		}
		if u.GroupVersionKind().GroupKind() == gvk.GroupKind() && u.GetNamespace() == obj.GetNamespace() && u.GetName() == obj.GetName() {
			return true
		}
	}
	return false
}

func (s *Sweeper) seenBefore(uid types.UID) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.seen[uid]
}

// remove deletes an orphan Karmada created, and releases one it adopted,
// with the object's UID as a precondition.
func remove(ctx context.Context, m *clusterclient.Member, gvr schema.GroupVersionResource, obj *unstructured.Unstructured) error {
	ri := m.Dynamic.Resource(gvr).Namespace(obj.GetNamespace())
	if obj.GetAnnotations()[workv1alpha1.AdoptedAnnotation] != "" {
		return clusterclient.Release(ctx, ri, obj)
	}
	uid := obj.GetUID()
	err := ri.Delete(ctx, obj.GetName(), metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return fmt.Errorf("removing orphan %s %s: %w", obj.GetKind(), key(obj), err)
	}
	return nil
}

func key(obj *unstructured.Unstructured) string {
	if obj.GetNamespace() == "" {
		return obj.GetName()
	}
	return obj.GetNamespace() + "/" + obj.GetName()
}
