//go:build hoste2e

package hoste2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
	"github.com/karmada-go/karmada/internal/estimator"
	estimatorclient "github.com/karmada-go/karmada/internal/estimator/client"
	"github.com/karmada-go/karmada/internal/estimator/pb"
	"github.com/karmada-go/karmada/internal/localup/pki"
	"github.com/karmada-go/karmada/internal/localup/plan"
	"github.com/karmada-go/karmada/internal/names"
	"github.com/karmada-go/karmada/internal/scheduler"
	"github.com/karmada-go/karmada/internal/testenv"
)

// Karmada's optional components of the chart (components: [search,
// schedulerEstimator, descheduler, metricsAdapter]) run as real pods on the host cluster,
// turned on by one `karmadactl addons enable` (an upgrade of the release
// with its own values) and off again by `karmadactl addons disable all`
// afterwards (both upgrades are the slow part: the parts share them);
// `karmadactl addons list` says disabled, enabled, disabled.
func TestOptionalComponentsOnTheHostCluster(t *testing.T) {
	ctx := t.Context()
	// member1's estimator reads member1 with an identity of its own, made
	// here as karmada-local makes it for its own estimators (the lane's
	// members are joined to the host's control plane, where karmada-local
	// runs none): a client certificate of member1's CA for
	// system:karmada:karmada-scheduler-estimator, with estimator.MemberRBAC.
	dir := t.TempDir()
	ca, err := pki.LoadOrCreateCA(filepath.Join(lane.fleetDir, "member1", "pki"), "member1-ca")
	if err != nil {
		t.Fatal(err)
	}
	crt, key, err := ca.Ensure(pki.CertSpec{Name: "hoste2e-estimator-client", CommonName: plan.EstimatorUser, Client: true})
	if err != nil {
		t.Fatal(err)
	}
	mc, err := client.New(configOf(lane.fleetKubeconfig, "member1"), client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range estimator.MemberRBAC(plan.EstimatorUser) {
		if err := mc.Create(ctx, o); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = mc.Delete(context.Background(), o) })
	}
	server := configOf(lane.fleetKubeconfig, "member1").Host
	files := map[string]string{"ca.crt": filepath.Join(ca.Dir, "ca.crt"), "tls.crt": crt, "tls.key": key}
	for name, path := range files {
		data, err := os.ReadFile(path)
		if err != nil || len(data) == 0 {
			t.Fatalf("member1's estimator identity, %s: %v", name, err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// The addons, as a user of karmadactl init turns them on: karmadactl
	// addons upgrades the release with its own values and the components
	// added (member1's estimator from a kubeconfig of its identity).
	memberKubeconfig := filepath.Join(dir, "member1-estimator.kubeconfig")
	kcfg := clientcmdapi.NewConfig()
	kcfg.Clusters["member1"] = &clientcmdapi.Cluster{Server: server, CertificateAuthority: filepath.Join(dir, "ca.crt")}
	kcfg.AuthInfos["estimator"] = &clientcmdapi.AuthInfo{ClientCertificate: filepath.Join(dir, "tls.crt"), ClientKey: filepath.Join(dir, "tls.key")}
	kcfg.Contexts["member1"] = &clientcmdapi.Context{Cluster: "member1", AuthInfo: "estimator"}
	kcfg.CurrentContext = "member1"
	if err := clientcmd.WriteToFile(*kcfg, memberKubeconfig); err != nil {
		t.Fatal(err)
	}
	addons := func(args ...string) string {
		t.Helper()
		out, err := command("", filepath.Join(lane.bin, "karmadactl"), append([]string{"addons"}, append(args, "--kubeconfig", lane.hostKubeconfig, "--context", "karmada-host")...)...)
		if err != nil {
			dumpPods()
			t.Fatalf("karmadactl addons %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return out
	}
	statuses := func(want string) {
		t.Helper()
		out := addons("list")
		for _, a := range []string{"karmada-descheduler", "karmada-metrics-adapter", "karmada-scheduler-estimator", "karmada-search"} {
			if !regexp.MustCompile(`\| ` + a + ` +\| ` + want + ` +\|`).MatchString(out) {
				t.Errorf("addons list: %s is not %s:\n%s", a, want, out)
			}
		}
	}
	statuses("disabled")
	addons("enable", "karmada-scheduler-estimator", "karmada-search", "karmada-descheduler", "karmada-metrics-adapter",
		"-C", "member1", "--member-kubeconfig", memberKubeconfig, "--pod-timeout", "5m")
	t.Cleanup(func() {
		out, err := command("", filepath.Join(lane.bin, "karmadactl"), "addons", "disable", "all", "--pod-timeout", "5m", "--kubeconfig", lane.hostKubeconfig, "--context", "karmada-host")
		if err != nil {
			t.Errorf("karmadactl addons disable all: %v\n%s", err, out)
			return
		}
		statuses("disabled")
	})
	statuses("enabled")
	for _, app := range []string{"karmada-search", "karmada-scheduler-estimator-member1", "karmada-descheduler", "karmada-metrics-adapter"} {
		found := false
		for _, p := range releasePods(ctx, t) {
			if p.Labels["app"] == app && p.DeletionTimestamp == nil {
				found = true
				if !podReady(p) {
					t.Errorf("pod %s not Ready", p.Name)
				}
			}
		}
		if !found {
			t.Fatalf("no %s pod", app)
		}
	}
	t.Run("search", testSearchComponent)
	t.Run("metricsAdapter", testMetricsAdapterComponent)
	t.Run("schedulerEstimator", testSchedulerEstimatorComponent)
	t.Run("estimatorRefusesOtherCertificates", testEstimatorRefusesOtherCertificates)
}

// testEstimatorRefusesOtherCertificates acts as an attacker holding a
// certificate of the control plane's CA (the administrator's; an agent's
// is of the same CA) and reaching the chart's estimator Service: the
// estimator refuses it, and answers the scheduler's client certificate.
func testEstimatorRefusesOtherCertificates(t *testing.T) {
	ctx := t.Context()
	hk := hostKube(t)
	svc, err := hk.CoreV1().Services(namespace).Get(ctx, "karmada-scheduler-estimator-member1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	secret, err := hk.CoreV1().Secrets(namespace).Get(ctx, "karmada-scheduler-estimator-client", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	admin := flatten(t, lane.karmadaKubeconfig)
	auth := admin.AuthInfos[admin.Contexts[admin.CurrentContext].AuthInfo]
	dir := t.TempDir()
	for name, data := range map[string][]byte{"ca.crt": secret.Data["ca.crt"], "client.crt": secret.Data["tls.crt"], "client.key": secret.Data["tls.key"],
		"admin.crt": auth.ClientCertificateData, "admin.key": auth.ClientKeyData} {
		if len(data) == 0 {
			t.Fatalf("no %s", name)
		}
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	ask := func(cert string) estimatorclient.Answer {
		pool, err := estimatorclient.NewPool(estimatorclient.Options{Timeout: 10 * time.Second, Port: 10352,
			ServicePrefix: "karmada-scheduler-estimator", ServiceNamespace: namespace,
			Addresses: map[string]string{"member1": svc.Spec.ClusterIP + ":10352"},
			CAFile:    filepath.Join(dir, "ca.crt"), CertFile: filepath.Join(dir, cert+".crt"), KeyFile: filepath.Join(dir, cert+".key")})
		if err != nil {
			t.Fatal(err)
		}
		defer pool.Close()
		req, err := pb.NewReplicaRequirements(&workv1alpha2.ReplicaRequirements{ResourceRequest: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}})
		if err != nil {
			t.Fatal(err)
		}
		return pool.MaxAvailableReplicas(ctx, []string{"member1"}, req, nil)["member1"]
	}
	if a := ask("client"); a.Err != nil || a.Value <= 0 {
		t.Fatalf("the scheduler's client certificate: %+v (want an answer: the Service is reachable)", a)
	}
	if a := ask("admin"); a.Err == nil {
		t.Errorf("the control plane administrator's certificate was answered: %d replicas", a.Value)
	}
}

// testSchedulerEstimatorComponent: the chart's karmada-scheduler asks
// member1's estimator: a replica larger than any node of member1 but
// smaller than all of them, which the general estimator would place there,
// is ruled out by SchedulerEstimator.
func testSchedulerEstimatorComponent(t *testing.T) {
	ctx := t.Context()
	// The largest node of member1 and all of them.
	nodes, err := memberKube(t, "member1").CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var largest, total int64
	for _, n := range nodes.Items {
		c := n.Status.Allocatable.Cpu().Value()
		largest = max(largest, c)
		total += c
	}
	if total < largest+1 {
		t.Fatalf("member1's nodes (%d cpu at most, %d in all) cannot tell node-level fit from the total", largest, total)
	}
	name := "hoste2e-estimator-" + utilrand.String(5)
	d := deploymentNamed("default", name)
	d.Spec.Template.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: *resource.NewQuantity(largest+1, resource.DecimalSI)}
	pp := &policyv1alpha1.PropagationPolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
		Spec: policyv1alpha1.PropagationSpec{
			ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment", Name: name}},
			Placement: policyv1alpha1.Placement{
				ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1"}},
				ReplicaScheduling: &policyv1alpha1.ReplicaSchedulingStrategy{ReplicaSchedulingType: policyv1alpha1.ReplicaSchedulingTypeDivided,
					ReplicaDivisionPreference: policyv1alpha1.ReplicaDivisionPreferenceWeighted,
					WeightPreference:          &policyv1alpha1.ClusterPreferences{DynamicWeight: policyv1alpha1.DynamicWeightByAvailableReplicas}},
			},
		},
	}
	c := karmadaClient(t)
	for _, o := range []client.Object{pp, d} {
		if err := c.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		_ = c.Delete(context.Background(), d)
		_ = c.Delete(context.Background(), pp)
	})
	testenv.Eventually(t, 2*time.Minute, "member1 ruled out by the chart's estimator", func(ctx context.Context) error {
		rb := &workv1alpha2.ResourceBinding{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: names.BindingName("Deployment", name)}, rb); err != nil {
			return err
		}
		if len(rb.Spec.Clusters) != 0 {
			return fmt.Errorf("placed on %+v: a %d-cpu replica fits no node of member1 (at most %d cpu)", rb.Spec.Clusters, largest+1, largest)
		}
		if rb.Status.PlacementExplanation == nil {
			return fmt.Errorf("no explanation yet")
		}
		for _, e := range rb.Status.PlacementExplanation.Clusters {
			if e.Name == "member1" && e.Plugin == scheduler.AccurateEstimatorStep && e.AvailableReplicas != nil && *e.AvailableReplicas == 0 {
				return nil
			}
		}
		return fmt.Errorf("member1 not ruled out by %s: %+v", scheduler.AccurateEstimatorStep, rb.Status.PlacementExplanation.Clusters)
	})
}
