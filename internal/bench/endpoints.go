package bench

import (
	"context"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	mcsv1alpha1 "github.com/karmada-go/karmada/api/multicluster/v1alpha1"
	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
)

// EndpointsOptions describe an endpoints run: a Service exported from
// Provider and imported into Consumers, scaled Changes times.
type EndpointsOptions struct {
	Provider  string
	Consumers []string
	Changes   int
	// ChangeTimeout bounds the wait for one change to reach every consumer.
	ChangeTimeout time.Duration
	Log           io.Writer
}

// EndpointsReport is what an endpoints run measured.
type EndpointsReport struct {
	Provider  string   `json:"provider"`
	Consumers []string `json:"consumers"`
	Changes   int      `json:"changes"`
	// Latency: from the provider's EndpointSlice showing a change (a
	// ready endpoint added or removed, as a watch on the provider
	// delivers it) to every consumer's derived-<name> slices showing the
	// same ready endpoints.
	Latency Summary `json:"latency"`
	// Control-plane API server requests per change (all, and writes).
	RequestsPerChange         float64 `json:"requestsPerChange"`
	MutatingRequestsPerChange float64 `json:"mutatingRequestsPerChange"`
	Error                     string  `json:"error,omitempty"`
}

// Print writes the report for people.
func (r *EndpointsReport) Print(out io.Writer) {
	fmt.Fprintf(out, "endpoints: %d changes of %s's Service, imported into %s\n", r.Changes, r.Provider, strings.Join(r.Consumers, ", "))
	fmt.Fprintf(out, "  provider slice -> every consumer: p50 %s  p90 %s  p99 %s  max %s\n", r.Latency.P50, r.Latency.P90, r.Latency.P99, r.Latency.Max)
	fmt.Fprintf(out, "  karmada-apiserver requests per change: %.1f (%.1f writes)\n", r.RequestsPerChange, r.MutatingRequestsPerChange)
	if r.Error != "" {
		fmt.Fprintf(out, "  error: %s\n", r.Error)
	}
}

// addressSets follows the ready addresses of one cluster's slices of a
// Service, and when they last changed.
type addressSets struct {
	mu      sync.Mutex
	slices  map[string][]string
	changed time.Time
	notify  chan struct{}
}

func (a *addressSets) set(name string, s *discoveryv1.EndpointSlice) {
	var addrs []string
	if s != nil {
		for _, e := range s.Endpoints {
			if e.Conditions.Ready == nil || *e.Conditions.Ready {
				addrs = append(addrs, e.Addresses...)
			}
		}
	}
	a.mu.Lock()
	if s == nil {
		delete(a.slices, name)
	} else {
		a.slices[name] = addrs
	}
	a.changed = time.Now()
	a.mu.Unlock()
	select {
	case a.notify <- struct{}{}:
	default:
	}
}

// current returns the sorted ready addresses and when they last changed.
func (a *addressSets) current() (string, time.Time) {
	a.mu.Lock()
	defer a.mu.Unlock()
	var all []string
	for _, s := range a.slices {
		all = append(all, s...)
	}
	sort.Strings(all)
	return strings.Join(all, ","), a.changed
}

// follow starts an informer on the cluster's EndpointSlices of service in
// ns, feeding a.
func follow(ctx context.Context, kc kubernetes.Interface, ns, service string, a *addressSets) {
	f := informers.NewSharedInformerFactoryWithOptions(kc, 0, informers.WithNamespace(ns), informers.WithTweakListOptions(func(o *metav1.ListOptions) {
		o.LabelSelector = discoveryv1.LabelServiceName + "=" + service
	}))
	inf := f.Discovery().V1().EndpointSlices().Informer()
	on := func(o any, deleted bool) {
		if t, ok := o.(cache.DeletedFinalStateUnknown); ok {
			o = t.Obj
		}
		s, ok := o.(*discoveryv1.EndpointSlice)
		if !ok {
			return
		}
		if deleted {
			a.set(s.Name, nil)
		} else {
			a.set(s.Name, s)
		}
	}
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(o any) { on(o, false) }, UpdateFunc: func(_, o any) { on(o, false) }, DeleteFunc: func(o any) { on(o, true) }})
	go inf.Run(ctx.Done())
}

// Endpoints runs the scenario: the Service's Deployment scaled between 2
// and 3 replicas Changes times, each change timed from the provider's
// slice to every consumer's.
func Endpoints(ctx context.Context, f *Fleet, o EndpointsOptions) *EndpointsReport {
	r := &EndpointsReport{Provider: o.Provider, Consumers: o.Consumers, Changes: o.Changes}
	ns := "karmada-bench-mcs-" + utilrand.String(5)
	err := endpointsRun(ctx, f, o, ns, r)
	if cerr := f.Karmada.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{}); cerr != nil && !apierrors.IsNotFound(cerr) && err == nil {
		err = cerr
	}
	if err != nil {
		r.Error = err.Error()
	}
	return r
}

func endpointsRun(ctx context.Context, f *Fleet, o EndpointsOptions, ns string, r *EndpointsReport) error {
	for _, m := range append([]string{o.Provider}, o.Consumers...) {
		if f.Members[m] == nil {
			return fmt.Errorf("cluster %s is not among --members", m)
		}
	}
	if err := mcsSetUp(ctx, f, o, ns); err != nil {
		return err
	}
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	provider := &addressSets{slices: map[string][]string{}, notify: make(chan struct{}, 1)}
	follow(rctx, f.Members[o.Provider], ns, "serve", provider)
	consumers := map[string]*addressSets{}
	for _, c := range o.Consumers {
		consumers[c] = &addressSets{slices: map[string][]string{}, notify: make(chan struct{}, 1)}
		follow(rctx, f.Members[c], ns, mcsv1alpha1.DerivedServiceName("serve"), consumers[c])
	}
	fmt.Fprintf(o.Log, "endpoints: waiting for the first endpoints in %s\n", strings.Join(o.Consumers, ", "))
	if _, err := reached(ctx, provider, consumers, "", 2*time.Minute); err != nil {
		return fmt.Errorf("the first endpoints: %w", err)
	}
	before, err := ScrapeRequests(ctx, f.Karmada, "")
	if err != nil {
		return err
	}
	var latencies []time.Duration
	replicas := int32(2)
	for i := 0; i < o.Changes; i++ {
		prev, _ := provider.current()
		replicas = 5 - replicas // 2, 3, 2, ...
		if _, err := f.Karmada.AppsV1().Deployments(ns).UpdateScale(ctx, "serve", &autoscalingv1.Scale{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "serve"}, Spec: autoscalingv1.ScaleSpec{Replicas: replicas}}, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("change %d: scaling to %d: %w", i+1, replicas, err)
		}
		d, err := reached(ctx, provider, consumers, prev, o.ChangeTimeout)
		if err != nil {
			return fmt.Errorf("change %d: %w", i+1, err)
		}
		latencies = append(latencies, d)
	}
	after, err := ScrapeRequests(ctx, f.Karmada, "")
	if err != nil {
		return err
	}
	r.Latency = Summarize(latencies)
	if n := float64(len(latencies)); n > 0 {
		r.RequestsPerChange = (after.Total - before.Total) / n
		r.MutatingRequestsPerChange = (after.Mutating - before.Mutating) / n
	}
	return nil
}

// reached waits until the provider's ready endpoints differ from prev and
// every consumer shows the same, and returns the time from the provider's
// change to the last consumer's.
func reached(ctx context.Context, provider *addressSets, consumers map[string]*addressSets, prev string, timeout time.Duration) (time.Duration, error) {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		want, since := provider.current()
		if want != prev && want != "" && len(strings.Split(want, ",")) >= 2 {
			last, all := since, true
			for _, c := range consumers {
				got, at := c.current()
				if got != want {
					all = false
					break
				}
				if at.After(last) {
					last = at
				}
			}
			if all {
				return last.Sub(since), nil
			}
		}
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-deadline.C:
			want, _ := provider.current()
			var got []string
			for n, c := range consumers {
				s, _ := c.current()
				got = append(got, n+"="+s)
			}
			sort.Strings(got)
			return 0, fmt.Errorf("not within %s: the provider shows [%s], the consumers %v", timeout, want, got)
		case <-tick.C:
		case <-provider.notify:
		}
	}
}

// mcsSetUp propagates the multi-cluster services' CRDs to the members, and
// makes in ns: serve (2 replicas) with its Service and ServiceExport in the
// provider, and its ServiceImport in the consumers.
func mcsSetUp(ctx context.Context, f *Fleet, o EndpointsOptions, ns string) error {
	c := f.KarmadaCRs
	all := append([]string{o.Provider}, o.Consumers...)
	crds := &policyv1alpha1.ClusterPropagationPolicy{ObjectMeta: metav1.ObjectMeta{Name: "karmada-bench-mcs-crds"},
		Spec: policyv1alpha1.PropagationSpec{ResourceSelectors: []policyv1alpha1.ResourceSelector{
			{APIVersion: "apiextensions.k8s.io/v1", Kind: "CustomResourceDefinition", Name: "serviceexports.multicluster.x-k8s.io"},
			{APIVersion: "apiextensions.k8s.io/v1", Kind: "CustomResourceDefinition", Name: "serviceimports.multicluster.x-k8s.io"}},
			Placement: policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: f.MemberNames}}}}
	if err := c.Create(ctx, crds); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	if err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		for _, m := range all {
			cl := &clusterv1alpha1.Cluster{}
			if err := c.Get(ctx, client.ObjectKey{Name: m}, cl); err != nil || !servesKind(cl, "serviceexports") || !servesKind(cl, "serviceimports") {
				return false, nil
			}
		}
		return true, nil
	}); err != nil {
		return fmt.Errorf("the members serving ServiceExports and ServiceImports: %w", err)
	}
	if _, err := f.Karmada.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		return err
	}
	labels := map[string]string{"app": "serve"}
	selector := func(kind, apiVersion string) policyv1alpha1.ResourceSelector {
		return policyv1alpha1.ResourceSelector{APIVersion: apiVersion, Kind: kind, Name: "serve"}
	}
	objs := []client.Object{
		&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "serve"}, Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](2),
			Selector: &metav1.LabelSelector{MatchLabels: labels}, Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "serve", Image: "serve:bench"}}}}}},
		&corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "serve"}, Spec: corev1.ServiceSpec{Selector: labels,
			Ports: []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080)}}}},
		&mcsv1alpha1.ServiceExport{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "serve"}},
		&policyv1alpha1.PropagationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "serve"}, Spec: policyv1alpha1.PropagationSpec{
			ResourceSelectors: []policyv1alpha1.ResourceSelector{selector("Deployment", "apps/v1"), selector("Service", "v1"), selector("ServiceExport", mcsv1alpha1.SchemeGroupVersion.String())},
			Placement:         policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{o.Provider}}}}},
		&mcsv1alpha1.ServiceImport{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "serve"},
			Spec: mcsv1alpha1.ServiceImportSpec{Type: mcsv1alpha1.ClusterSetIP, Ports: []mcsv1alpha1.ServicePort{{Name: "http", Port: 80}}}},
		&policyv1alpha1.PropagationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "serve-import"}, Spec: policyv1alpha1.PropagationSpec{
			ResourceSelectors: []policyv1alpha1.ResourceSelector{selector("ServiceImport", mcsv1alpha1.SchemeGroupVersion.String())},
			Placement:         policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: slices.Clone(o.Consumers)}}}},
	}
	for _, obj := range objs {
		if err := c.Create(ctx, obj); err != nil {
			return fmt.Errorf("creating %T %s: %w", obj, obj.GetName(), err)
		}
	}
	return nil
}

func servesKind(cl *clusterv1alpha1.Cluster, resource string) bool {
	for _, e := range cl.Status.APIEnablements {
		if e.GroupVersion != mcsv1alpha1.SchemeGroupVersion.String() {
			continue
		}
		for _, r := range e.Resources {
			if r.Name == resource {
				return true
			}
		}
	}
	return false
}
