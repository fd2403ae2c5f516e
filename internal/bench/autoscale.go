package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"

	autoscalingv1alpha1 "github.com/karmada-go/karmada/api/autoscaling/v1alpha1"
	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
)

// kwokUsageCPUAnnotation is kwok's usage annotation, which a karmada-local
// fleet's kwok emulates a container's cpu from (as `karmada-local usage
// set` writes it).
const kwokUsageCPUAnnotation = "kwok.x-k8s.io/usage-cpu"

// AutoscaleOptions describe an autoscale run: Workloads Deployments of 2
// replicas divided over the members, each with a FederatedHPA, whose pods'
// emulated cpu is raised past the target at once.
type AutoscaleOptions struct {
	Workloads int
	// Timeout bounds the wait for every workload to scale.
	Timeout time.Duration
	Log     io.Writer
}

// AutoscaleReport is what an autoscale run measured.
type AutoscaleReport struct {
	Workloads int      `json:"workloads"`
	Members   []string `json:"members"`
	// Latency: from the pods' usage annotations written (kwok emulates
	// it, each member's metrics-server serves it) to every member running
	// the workload's new replica count, summed, above 2.
	Latency Summary `json:"latency"`
	Error   string  `json:"error,omitempty"`
}

// Print writes the report for people.
func (r *AutoscaleReport) Print(out io.Writer) {
	fmt.Fprintf(out, "autoscale: %d FederatedHPAs over %v\n", r.Workloads, r.Members)
	fmt.Fprintf(out, "  usage change → new replicas in every member: p50 %s, p90 %s, p99 %s, max %s (%d)\n",
		r.Latency.P50, r.Latency.P90, r.Latency.P99, r.Latency.Max, r.Latency.Count)
	if r.Error != "" {
		fmt.Fprintf(out, "  error: %s\n", r.Error)
	}
}

// Autoscale runs the measurement in a namespace of its own, deleted at
// the end.
func Autoscale(ctx context.Context, f *Fleet, o AutoscaleOptions) *AutoscaleReport {
	r := &AutoscaleReport{Workloads: o.Workloads, Members: f.MemberNames}
	ns := "karmada-bench-hpa-" + utilrand.String(5)
	err := autoscaleRun(ctx, f, o, ns, r)
	if cerr := f.Karmada.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{}); cerr != nil && !apierrors.IsNotFound(cerr) && err == nil {
		err = cerr
	}
	if err != nil {
		r.Error = err.Error()
	}
	return r
}

// autoscaledWorkloads makes the run's namespace, a policy dividing its
// Deployments over the members, and o.Workloads Deployments of 2 replicas,
// each with a FederatedHPA on 50 % cpu; it returns their names.
func autoscaledWorkloads(ctx context.Context, f *Fleet, o AutoscaleOptions, ns string) ([]string, error) {
	if _, err := f.Karmada.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		return nil, err
	}
	var weights []policyv1alpha1.StaticClusterWeight
	for _, m := range f.MemberNames {
		weights = append(weights, policyv1alpha1.StaticClusterWeight{TargetCluster: policyv1alpha1.ClusterAffinity{ClusterNames: []string{m}}, Weight: 1})
	}
	pp := &policyv1alpha1.PropagationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "all"},
		Spec: policyv1alpha1.PropagationSpec{ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment"}},
			Placement: policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: f.MemberNames},
				ReplicaScheduling: &policyv1alpha1.ReplicaSchedulingStrategy{ReplicaSchedulingType: policyv1alpha1.ReplicaSchedulingTypeDivided,
					ReplicaDivisionPreference: policyv1alpha1.ReplicaDivisionPreferenceWeighted,
					WeightPreference:          &policyv1alpha1.ClusterPreferences{StaticWeightList: weights}}}}}
	if err := f.KarmadaCRs.Create(ctx, pp); err != nil {
		return nil, err
	}
	names := make([]string, o.Workloads)
	for i := range names {
		names[i] = fmt.Sprintf("hpa-%d", i)
		labels := map[string]string{"app": names[i]}
		d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: names[i]},
			Spec: appsv1.DeploymentSpec{Replicas: ptr.To(int32(2)), Selector: &metav1.LabelSelector{MatchLabels: labels},
				Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
					Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "app",
						Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}}}}}}}}
		if _, err := f.Karmada.AppsV1().Deployments(ns).Create(ctx, d, metav1.CreateOptions{}); err != nil {
			return nil, err
		}
		hpa := &autoscalingv1alpha1.FederatedHPA{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: names[i]},
			Spec: autoscalingv1alpha1.FederatedHPASpec{ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: names[i]},
				MinReplicas: ptr.To(int32(2)), MaxReplicas: 4,
				Metrics: []autoscalingv2.MetricSpec{{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{Name: corev1.ResourceCPU,
					Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptr.To(int32(50))}}}}}}
		if err := f.KarmadaCRs.Create(ctx, hpa); err != nil {
			return nil, err
		}
	}
	return names, nil
}

func autoscaleRun(ctx context.Context, f *Fleet, o AutoscaleOptions, ns string, r *AutoscaleReport) error {
	names, err := autoscaledWorkloads(ctx, f, o, ns)
	if err != nil {
		return err
	}
	// Every pod running in the members, and sampled at 1m (below the
	// target: no scale yet).
	err = wait.PollUntilContextTimeout(ctx, time.Second, o.Timeout, true, func(ctx context.Context) (bool, error) {
		n := 0
		for _, m := range f.MemberNames {
			pods, err := f.Members[m].CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
			if err != nil {
				return false, nil
			}
			for _, p := range pods.Items {
				if p.Status.Phase == corev1.PodRunning {
					n++
				}
			}
		}
		return n == 2*o.Workloads, nil
	})
	if err != nil {
		return fmt.Errorf("the %d workloads' pods never all ran: %w", o.Workloads, err)
	}
	fmt.Fprintf(o.Log, "%d workloads running in %v; raising their cpu to 150%% of the requests\n", o.Workloads, f.MemberNames)
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{kwokUsageCPUAnnotation: "150m"}}})
	start := time.Now()
	for _, m := range f.MemberNames {
		pods, err := f.Members[m].CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		for _, p := range pods.Items {
			if _, err := f.Members[m].CoreV1().Pods(ns).Patch(ctx, p.Name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
				return err
			}
		}
	}
	var mu sync.Mutex
	var latencies []time.Duration
	var wg sync.WaitGroup
	errs := make(chan error, o.Workloads)
	for _, name := range names {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, o.Timeout, true, func(ctx context.Context) (bool, error) {
				var sum int32
				for _, m := range f.MemberNames {
					d, err := f.Members[m].AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
					if err != nil {
						return false, nil
					}
					sum += ptr.Deref(d.Spec.Replicas, 0)
				}
				return sum > 2, nil
			})
			if err != nil {
				errs <- fmt.Errorf("%s did not scale within %s", name, o.Timeout)
				return
			}
			mu.Lock()
			latencies = append(latencies, time.Since(start))
			mu.Unlock()
		}()
	}
	wg.Wait()
	close(errs)
	r.Latency = Summarize(latencies)
	for err := range errs {
		return err
	}
	return nil
}
