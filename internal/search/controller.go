package search

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/client-go/dynamic"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	searchv1alpha1 "github.com/karmada-go/karmada/api/search/v1alpha1"
	"github.com/karmada-go/karmada/internal/apiserverapp"
	"github.com/karmada-go/karmada/internal/clusters/clusteraffinity"
	"github.com/karmada-go/karmada/internal/clusters/clusterclient"
	"github.com/karmada-go/karmada/internal/search/cache"
)

// SyncPeriod is how often the registries and Clusters are read again.
const SyncPeriod = 2 * time.Second

// controller keeps the cache what the registries select, and says so in
// their Ready condition.
type controller struct {
	registries *genericregistry.Store
	status     *apiserverapp.StatusREST
	karmada    client.Reader
	members    *clusterclient.Cache
	manager    *cache.Manager
}

func (c *controller) run(ctx context.Context) {
	wait.UntilWithContext(ctx, c.sync, SyncPeriod)
}

// registryPlan is what one registry wants and what stands in the way.
type registryPlan struct {
	reg      *searchv1alpha1.ResourceRegistry
	wants    []cache.Want
	problems []string
}

func (c *controller) sync(ctx context.Context) {
	ctx = genericapirequest.WithNamespace(ctx, "")
	obj, err := c.registries.List(ctx, &metainternalversion.ListOptions{})
	if err != nil {
		klog.ErrorS(err, "Listing ResourceRegistries")
		return
	}
	regs := obj.(*searchv1alpha1.ResourceRegistryList).Items
	clusters := &clusterv1alpha1.ClusterList{}
	if err := c.karmada.List(ctx, clusters); err != nil {
		klog.ErrorS(err, "Listing Clusters")
		return
	}
	members := map[string]*clusterclient.Member{}
	memberErrs := map[string]error{}
	member := func(cl *clusterv1alpha1.Cluster) (*clusterclient.Member, error) {
		if m, ok := members[cl.Name]; ok {
			return m, nil
		}
		if err, ok := memberErrs[cl.Name]; ok {
			return nil, err
		}
		m, err := c.members.Get(ctx, cl)
		if err != nil {
			memberErrs[cl.Name] = err
			return nil, err
		}
		members[cl.Name] = m
		return m, nil
	}
	var plans []*registryPlan
	var all []cache.Want
	for i := range regs {
		p := &registryPlan{reg: &regs[i]}
		plans = append(plans, p)
		if !regs[i].DeletionTimestamp.IsZero() {
			continue
		}
		for j := range clusters.Items {
			cl := &clusters.Items[j]
			if !clusteraffinity.Matches(&p.reg.Spec.TargetCluster, cl) {
				continue
			}
			if cl.Spec.SyncMode == clusterv1alpha1.Pull {
				p.problems = append(p.problems, fmt.Sprintf("cluster %s is in Pull mode: karmada-search caches push members only", cl.Name))
				continue
			}
			m, err := member(cl)
			if err != nil {
				p.problems = append(p.problems, fmt.Sprintf("cluster %s: %v", cl.Name, err))
				continue
			}
			for _, s := range p.reg.Spec.ResourceSelectors {
				gv, err := schema.ParseGroupVersion(s.APIVersion)
				if err != nil {
					continue // refused at admission
				}
				mapping, err := m.Mapper.RESTMapping(gv.WithKind(s.Kind).GroupKind(), gv.Version)
				if err != nil {
					if meta.IsNoMatchError(err) {
						m.Mapper.Reset()
					}
					p.problems = append(p.problems, fmt.Sprintf("cluster %s does not serve %s %s", cl.Name, s.APIVersion, s.Kind))
					continue
				}
				ns := s.Namespace
				if mapping.Scope.Name() != meta.RESTScopeNameNamespace {
					ns = ""
				}
				w := cache.Want{Cluster: cl.Name, Resource: mapping.Resource, Kind: s.Kind, Namespace: ns}
				p.wants = append(p.wants, w)
				all = append(all, w)
			}
		}
	}
	errs := c.manager.Ensure(context.Background(), all, func(w cache.Want) (dynamic.ResourceInterface, error) {
		m, ok := members[w.Cluster]
		if !ok {
			return nil, fmt.Errorf("cluster %s is not reachable", w.Cluster)
		}
		if w.Namespace != "" {
			return m.Dynamic.Resource(w.Resource).Namespace(w.Namespace), nil
		}
		return m.Dynamic.Resource(w.Resource), nil
	})
	for _, p := range plans {
		if p.reg.DeletionTimestamp.IsZero() {
			c.report(ctx, p, errs)
		}
	}
}

// report writes a registry's Ready condition when it changed.
func (c *controller) report(ctx context.Context, p *registryPlan, errs map[cache.Want]error) {
	problems := append([]string(nil), p.problems...)
	waiting := 0
	for _, w := range p.wants {
		if err := errs[w]; err != nil {
			problems = append(problems, fmt.Sprintf("%s: %v", w, err))
			continue
		}
		synced, err, _ := c.manager.Status(w)
		switch {
		case err != nil && !synced:
			problems = append(problems, fmt.Sprintf("%s: %v", w, err))
		case !synced:
			waiting++
		}
	}
	sort.Strings(problems)
	cond := metav1.Condition{Type: searchv1alpha1.ConditionReady, Status: metav1.ConditionTrue, Reason: "Cached",
		Message: fmt.Sprintf("%d stores cached", len(p.wants)), ObservedGeneration: p.reg.Generation}
	switch {
	case len(problems) > 0:
		cond.Status, cond.Reason, cond.Message = metav1.ConditionFalse, "CacheFailed", strings.Join(problems, "; ")
	case waiting > 0:
		cond.Status, cond.Reason, cond.Message = metav1.ConditionFalse, "Caching", fmt.Sprintf("%d of %d stores listing", waiting, len(p.wants))
	}
	if old := meta.FindStatusCondition(p.reg.Status.Conditions, cond.Type); old != nil &&
		old.Status == cond.Status && old.Reason == cond.Reason && old.Message == cond.Message && old.ObservedGeneration == cond.ObservedGeneration {
		return
	}
	reg := p.reg.DeepCopy()
	meta.SetStatusCondition(&reg.Status.Conditions, cond)
	_, _, err := c.status.Update(ctx, reg.Name, rest.DefaultUpdatedObjectInfo(reg), rest.ValidateAllObjectFunc, rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{})
	if err != nil && !apierrors.IsConflict(err) && !apierrors.IsNotFound(err) {
		klog.ErrorS(err, "Writing a ResourceRegistry's status", "registry", reg.Name)
	}
}
