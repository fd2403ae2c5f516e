//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
	"github.com/karmada-go/karmada/internal/testenv"
)

// A workload placed by the first of two affinity groups moves to the second
// when the first group's cluster is tainted not-ready:NoExecute (by hand,
// while it is Ready: the fleet's ClusterTaintPolicy leaves such a taint
// alone) and its toleration runs out.
func TestFailoverToTheNextAffinityGroup(t *testing.T) {
	ctx := context.Background()
	c := karmadaClient(t)
	d := deploymentNamed("next-group-"+rand.String(5), 1)
	propagate(ctx, t, d, policyv1alpha1.Placement{
		ClusterTolerations: []corev1.Toleration{{Key: "cluster.karmada.io/not-ready", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](2)}},
		ClusterAffinities: []policyv1alpha1.ClusterAffinityTerm{
			{AffinityName: "group1", ClusterAffinity: policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1"}}},
			{AffinityName: "group2", ClusterAffinity: policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member2"}}},
		},
	})
	waitMemberDeployment(ctx, t, "member1", d.Name, 1)
	if out, err := karmadactl("taint", "clusters", "member1", "cluster.karmada.io/not-ready:NoExecute"); err != nil {
		t.Fatalf("taint: %v\n%s", err, out)
	}
	t.Cleanup(func() {
		// The next tests need member1 untainted: the removal is checked.
		testenv.Eventually(t, 30*time.Second, "member1's not-ready taint removed", func(ctx context.Context) error {
			if out, err := karmadactl("taint", "clusters", "member1", "cluster.karmada.io/not-ready:NoExecute-"); err != nil && !strings.Contains(out, "not found") {
				return fmt.Errorf("%v: %s", err, out)
			}
			if keys := taintKeys(getCluster(ctx, t, c, "member1")); slices.Contains(keys, "cluster.karmada.io/not-ready") {
				return fmt.Errorf("taints %v", keys)
			}
			return nil
		})
	})
	waitMemberDeployment(ctx, t, "member2", d.Name, 1)
	rb, err := getBinding(ctx, c, d.Name)
	if err != nil {
		t.Fatal(err)
	}
	if rb.Status.SchedulerObservingAffinityName != "group2" {
		t.Errorf("observed affinity %q, want group2", rb.Status.SchedulerObservingAffinityName)
	}
	cl := getCluster(ctx, t, c, "member1")
	if !meta.IsStatusConditionTrue(cl.Status.Conditions, clusterv1alpha1.ClusterConditionReady) || !strings.Contains(strings.Join(taintKeys(cl), ","), "cluster.karmada.io/not-ready") {
		t.Errorf("member1 should be Ready with the taint added by hand kept: taints %v", taintKeys(cl))
	}
}

// The aggregated status of a LoadBalancer Service, an Ingress, a Job, a
// DaemonSet and a PodDisruptionBudget, as Karmada reports it: the
// load-balancer points of every cluster, cluster by cluster (written in the
// members as their own controllers would), and the counts added up.
func TestStatusCollectionAsKarmada(t *testing.T) {
	ctx := context.Background()
	c := karmadaClient(t)
	suffix := rand.String(5)
	app := map[string]string{"app": "collected-" + suffix}
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "lb-" + suffix},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, Selector: app, Ports: []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromInt32(8080)}}}}
	prefix := networkingv1.PathTypePrefix
	ing := &networkingv1.Ingress{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "ing-" + suffix}, Spec: networkingv1.IngressSpec{Rules: []networkingv1.IngressRule{{
		Host: "e2e.example.com", IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{Paths: []networkingv1.HTTPIngressPath{{
			Path: "/", PathType: &prefix, Backend: networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{Name: svc.Name, Port: networkingv1.ServiceBackendPort{Number: 80}}}}}}}}}}}
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "job-" + suffix}, Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{
		Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "c", Image: "perl"}}}}}}
	ds := &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "ds-" + suffix}, Spec: appsv1.DaemonSetSpec{
		Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"ds": suffix}},
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"ds": suffix}}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}}}}}
	deploy := deploymentNamed("pdb-app-"+suffix, 2)
	deploy.Spec.Selector.MatchLabels, deploy.Spec.Template.Labels = app, app
	pdb := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "pdb-" + suffix},
		Spec: policyv1.PodDisruptionBudgetSpec{MaxUnavailable: ptr.To(intstr.FromString("50%")), Selector: &metav1.LabelSelector{MatchLabels: app}}}
	sel := func(apiVersion, kind, name string) policyv1alpha1.ResourceSelector {
		return policyv1alpha1.ResourceSelector{APIVersion: apiVersion, Kind: kind, Name: name}
	}
	pp := namespacedPolicy("collected-"+suffix, policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: allMembers}},
		sel("v1", "Service", svc.Name), sel("networking.k8s.io/v1", "Ingress", ing.Name), sel("batch/v1", "Job", job.Name),
		sel("apps/v1", "DaemonSet", ds.Name), sel("apps/v1", "Deployment", deploy.Name), sel("policy/v1", "PodDisruptionBudget", pdb.Name))
	createUntilCleanup(ctx, t, c, pp, svc, ing, job, ds, deploy, pdb)

	// The members' own controllers would write these; the test writes them.
	var wantSvc, wantIng []string
	for i, m := range allMembers {
		svcIP, ingIP := fmt.Sprintf("172.19.1.%d", i+6), fmt.Sprintf("172.19.2.%d", i+6)
		wantSvc, wantIng = append(wantSvc, svcIP), append(wantIng, ingIP)
		kc := kube(t, m)
		testenv.Eventually(t, 60*time.Second, "the load-balancer points in "+m, func(ctx context.Context) error {
			s, err := kc.CoreV1().Services("default").Get(ctx, svc.Name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			s.Status.LoadBalancer = corev1.LoadBalancerStatus{Ingress: []corev1.LoadBalancerIngress{{IP: svcIP}}}
			if _, err := kc.CoreV1().Services("default").UpdateStatus(ctx, s, metav1.UpdateOptions{}); err != nil {
				return err
			}
			g, err := kc.NetworkingV1().Ingresses("default").Get(ctx, ing.Name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			g.Status.LoadBalancer = networkingv1.IngressLoadBalancerStatus{Ingress: []networkingv1.IngressLoadBalancerIngress{{IP: ingIP}}}
			_, err = kc.NetworkingV1().Ingresses("default").UpdateStatus(ctx, g, metav1.UpdateOptions{})
			return err
		})
	}
	testenv.Eventually(t, 90*time.Second, "every status collected as Karmada collects it", func(ctx context.Context) error {
		var problems []string
		// Both statuses as {ip, hostname} lists, compared as JSON.
		points := func(kind string, obj client.Object, path func() any, want []string) error {
			if err := c.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
				return err
			}
			raw, _ := json.Marshal(path())
			var got []struct{ IP, Hostname string }
			_ = json.Unmarshal(raw, &got)
			var ips []string
			for _, p := range got {
				ips = append(ips, p.IP+p.Hostname)
			}
			if strings.Join(ips, ",") != strings.Join(want, ",") {
				problems = append(problems, fmt.Sprintf("%s points %v, want %v", kind, ips, want))
			}
			return nil
		}
		s, g := &corev1.Service{}, &networkingv1.Ingress{}
		s.Namespace, s.Name, g.Namespace, g.Name = svc.Namespace, svc.Name, ing.Namespace, ing.Name
		if err := points("Service", s, func() any { return s.Status.LoadBalancer.Ingress }, wantSvc); err != nil {
			return err
		}
		if err := points("Ingress", g, func() any { return g.Status.LoadBalancer.Ingress }, wantIng); err != nil {
			return err
		}
		j := &batchv1.Job{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(job), j); err != nil {
			return err
		}
		if j.Status.Succeeded != int32(len(allMembers)) {
			problems = append(problems, fmt.Sprintf("Job succeeded %d, want %d", j.Status.Succeeded, len(allMembers)))
		}
		d := &appsv1.DaemonSet{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(ds), d); err != nil {
			return err
		}
		nodes, err := daemonNodes(ctx, t)
		if err != nil {
			return err
		}
		if d.Status.DesiredNumberScheduled != nodes || d.Status.CurrentNumberScheduled != nodes || d.Status.UpdatedNumberScheduled != nodes {
			problems = append(problems, fmt.Sprintf("DaemonSet desired/current/updated %d/%d/%d, want %d (a pod per node of every member)",
				d.Status.DesiredNumberScheduled, d.Status.CurrentNumberScheduled, d.Status.UpdatedNumberScheduled, nodes))
		}
		// Every field Karmada aggregates is the members' sum, and
		// observedGeneration the template's generation.
		var sum appsv1.DaemonSetStatus
		for _, m := range allMembers {
			md, err := kube(t, m).AppsV1().DaemonSets("default").Get(ctx, ds.Name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			sum.CurrentNumberScheduled += md.Status.CurrentNumberScheduled
			sum.DesiredNumberScheduled += md.Status.DesiredNumberScheduled
			sum.NumberAvailable += md.Status.NumberAvailable
			sum.NumberMisscheduled += md.Status.NumberMisscheduled
			sum.NumberReady += md.Status.NumberReady
			sum.UpdatedNumberScheduled += md.Status.UpdatedNumberScheduled
			sum.NumberUnavailable += md.Status.NumberUnavailable
		}
		sum.ObservedGeneration = d.Generation
		got := d.Status
		got.Conditions, got.CollisionCount = nil, nil
		if !equality.Semantic.DeepEqual(got, sum) {
			problems = append(problems, fmt.Sprintf("DaemonSet status %+v, want the members' sum %+v", got, sum))
		}
		p := &policyv1.PodDisruptionBudget{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(pdb), p); err != nil {
			return err
		}
		if wantPods, wantAllowed := int32(2*len(allMembers)), int32(len(allMembers)); p.Status.ExpectedPods != wantPods || p.Status.DisruptionsAllowed != wantAllowed {
			problems = append(problems, fmt.Sprintf("PDB expected pods %d, disruptions allowed %d; want %d and %d", p.Status.ExpectedPods, p.Status.DisruptionsAllowed, wantPods, wantAllowed))
		}
		if len(problems) > 0 {
			return fmt.Errorf("%s", strings.Join(problems, "; "))
		}
		return nil
	})
}

// daemonNodes counts the members' nodes a DaemonSet's pod runs on now:
// those without a NoSchedule or NoExecute taint but the ones the DaemonSet
// controller tolerates by itself (a node a busy kwok lets go NotReady for a
// moment is tainted not-ready:NoSchedule and left out, as the controller
// leaves it out).
func daemonNodes(ctx context.Context, t *testing.T) (int32, error) {
	tolerated := map[string]corev1.TaintEffect{
		"node.kubernetes.io/not-ready": corev1.TaintEffectNoExecute, "node.kubernetes.io/unreachable": corev1.TaintEffectNoExecute,
		"node.kubernetes.io/disk-pressure": corev1.TaintEffectNoSchedule, "node.kubernetes.io/memory-pressure": corev1.TaintEffectNoSchedule,
		"node.kubernetes.io/pid-pressure": corev1.TaintEffectNoSchedule, "node.kubernetes.io/unschedulable": corev1.TaintEffectNoSchedule,
	}
	var n int32
	for _, m := range allMembers {
		list, err := kube(t, m).CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil {
			return 0, err
		}
	node:
		for _, node := range list.Items {
			for _, tn := range node.Spec.Taints {
				if tn.Effect != corev1.TaintEffectPreferNoSchedule && tolerated[tn.Key] != tn.Effect {
					continue node
				}
			}
			n++
		}
	}
	return n, nil
}

// A ClusterOverridePolicy's labelsOverrider selecting a Namespace reaches
// that namespace's copy in the member its rule targets (as Karmada's
// namespace sync applies overrides), and only there.
func TestClusterOverridePolicyOnNamespace(t *testing.T) {
	ctx := context.Background()
	c := karmadaClient(t)
	ns := "e2e-cop-ns-" + rand.String(5)
	cop := &policyv1alpha1.ClusterOverridePolicy{ObjectMeta: metav1.ObjectMeta{Name: ns},
		Spec: policyv1alpha1.OverrideSpec{
			ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "v1", Kind: "Namespace", Name: ns}},
			OverrideRules: []policyv1alpha1.RuleWithCluster{{
				TargetCluster: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1"}},
				Overriders: policyv1alpha1.Overriders{LabelsOverrider: []policyv1alpha1.LabelAnnotationOverrider{{
					Operator: policyv1alpha1.OverriderOpAdd, Value: map[string]string{"e2e-cop": "yes"}}}},
			}},
		}}
	createUntilCleanup(ctx, t, c, cop, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	testenv.Eventually(t, 60*time.Second, "member1's namespace labelled, member2's not", func(ctx context.Context) error {
		n1, err := kube(t, "member1").CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
		if err != nil {
			return err
		}
		n2, err := kube(t, "member2").CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if n1.Labels["e2e-cop"] != "yes" || n2.Labels["e2e-cop"] != "" {
			return fmt.Errorf("member1 labels %v, member2 labels %v", n1.Labels, n2.Labels)
		}
		return nil
	})
}

// Failover across clusterAffinities, as Karmada: a workload on its first
// term's cluster (member2) is evicted when that cluster gets a NoExecute
// taint it does not tolerate, and the scheduler moves it to the next term
// (member3); it stays there once the taint is gone (Karmada keeps a
// binding on the term it fell through to).
func TestFailoverAcrossClusterAffinities(t *testing.T) {
	ctx := context.Background()
	c := karmadaClient(t)
	d := deploymentNamed("affinities-"+rand.String(5), 1)
	placement := policyv1alpha1.Placement{ClusterAffinities: []policyv1alpha1.ClusterAffinityTerm{
		{AffinityName: "primary", ClusterAffinity: policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member2"}}},
		{AffinityName: "backup", ClusterAffinity: policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member3"}}},
	}}
	createUntilCleanup(ctx, t, c, placementPolicy(d.Name, placement), d)
	on := func(member string) {
		t.Helper()
		inMembers(t, "the Deployment", []string{member}, true, func(ctx context.Context, kc kubernetes.Interface) error {
			_, err := kc.AppsV1().Deployments("default").Get(ctx, d.Name, metav1.GetOptions{})
			return err
		})
	}
	on("member2")
	key := "e2e-affinities-" + rand.String(5)
	taint := func(add bool) {
		t.Helper()
		testenv.Eventually(t, 30*time.Second, "tainting member2", func(ctx context.Context) error {
			cl := &clusterv1alpha1.Cluster{}
			if err := c.Get(ctx, client.ObjectKey{Name: "member2"}, cl); err != nil {
				return err
			}
			cl.Spec.Taints = slices.DeleteFunc(cl.Spec.Taints, func(t corev1.Taint) bool { return t.Key == key })
			if add {
				cl.Spec.Taints = append(cl.Spec.Taints, corev1.Taint{Key: key, Effect: corev1.TaintEffectNoExecute})
			}
			return c.Update(ctx, cl)
		})
	}
	t.Cleanup(func() { taint(false) })
	taint(true)
	on("member3")
	inMembers(t, "the Deployment", []string{"member2"}, false, func(ctx context.Context, kc kubernetes.Interface) error {
		_, err := kc.AppsV1().Deployments("default").Get(ctx, d.Name, metav1.GetOptions{})
		return err
	})
	rb := &workv1alpha2.ResourceBinding{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: d.Name + "-deployment"}, rb); err != nil {
		t.Fatal(err)
	}
	if rb.Status.SchedulerObservingAffinityName != "backup" {
		t.Errorf("schedulerObservingAffinityName %q, want backup", rb.Status.SchedulerObservingAffinityName)
	}
	taint(false)
	testenv.Consistently(t, 5*time.Second, "the workload stays on the backup term", func(ctx context.Context) error {
		if err := c.Get(ctx, client.ObjectKeyFromObject(rb), rb); err != nil {
			return err
		}
		if got := placed(rb); len(got) != 1 || got["member3"] == 0 {
			return fmt.Errorf("placement %v", got)
		}
		return nil
	})
}
