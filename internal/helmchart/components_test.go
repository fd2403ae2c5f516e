package helmchart

import (
	"context"
	"crypto/x509"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/karmada-go/karmada/deploy"
)

// BenchmarkRender renders the whole control plane, certificates included:
// what every install, upgrade and karmadactl init does before talking to
// the cluster.
func BenchmarkRender(b *testing.B) {
	ch, err := Load()
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := Render(context.Background(), ch, map[string]any{}, DefaultRelease, DefaultNamespace); err != nil {
			b.Fatal(err)
		}
	}
}

// The monitoring values install the dashboard and the alert rules of
// deploy/monitoring, as they are; by default neither.
func TestMonitoring(t *testing.T) {
	if o := defaults(t); o.byKey["ConfigMap/karmada-dashboard"] != nil || o.byKey["PrometheusRule/karmada"] != nil {
		t.Fatalf("monitoring objects rendered by default: %v", o.keys())
	}
	o := render(t, "monitoring: {dashboard: {enabled: true}, prometheusRule: {enabled: true, labels: {release: kube-prometheus}}}")
	cm := o.byKey["ConfigMap/karmada-dashboard"]
	if cm == nil {
		t.Fatalf("no dashboard ConfigMap: %v", o.keys())
	}
	if cm.GetLabels()["grafana_dashboard"] != "1" {
		t.Errorf("dashboard labels %v, want grafana_dashboard: \"1\" for Grafana's sidecar", cm.GetLabels())
	}
	want, err := deploy.Monitoring.ReadFile(deploy.DashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	got, _, _ := unstructured.NestedString(cm.Object, "data", "karmada-dashboard.json")
	if got != strings.TrimSuffix(string(want), "\n") {
		t.Errorf("the ConfigMap's dashboard differs from deploy/%s", deploy.DashboardFile)
	}
	pr := o.byKey["PrometheusRule/karmada"]
	if pr == nil {
		t.Fatalf("no PrometheusRule: %v", o.keys())
	}
	if pr.GetAPIVersion() != "monitoring.coreos.com/v1" || pr.GetLabels()["release"] != "kube-prometheus" {
		t.Errorf("PrometheusRule %s with labels %v", pr.GetAPIVersion(), pr.GetLabels())
	}
	rules, err := deploy.AlertRules()
	if err != nil {
		t.Fatal(err)
	}
	groups, _, _ := unstructured.NestedSlice(pr.Object, "spec", "groups")
	var names []string
	for _, g := range groups {
		rs, _, _ := unstructured.NestedSlice(g.(map[string]any), "rules")
		for _, r := range rs {
			names = append(names, r.(map[string]any)["alert"].(string))
			if expr := r.(map[string]any)["expr"].(string); expr == "" {
				t.Errorf("rule %v without expression", r)
			}
		}
	}
	if len(names) != len(rules) {
		t.Errorf("PrometheusRule holds %d rules (%v), deploy/%s %d", len(names), names, deploy.AlertsFile, len(rules))
	}
}

// The election timings reach both leader-elected components.
func TestLeaderElectionValues(t *testing.T) {
	o := render(t, "leaderElection: {leaseDuration: 30s, renewDeadline: 20s, retryPeriod: 4s}")
	for _, name := range []string{"karmada-controller-manager", "karmada-scheduler"} {
		args := strings.Join(o.deployment(t, name).Spec.Template.Spec.Containers[0].Command, " ")
		for _, want := range []string{"--leader-elect=true", "--leader-elect-lease-duration=30s", "--leader-elect-renew-deadline=20s", "--leader-elect-retry-period=4s"} {
			if !strings.Contains(args, want) {
				t.Errorf("%s: %s lacks %s", name, args, want)
			}
		}
	}
	if _, err := tryRender("leaderElection: {leaseDuration: soon}"); err == nil {
		t.Error("leaderElection.leaseDuration=soon was accepted")
	}
}

// components [schedulerEstimator, descheduler]: an estimator per member,
// reached by its Service's name, with certificates of a CA of their own
// (neither the control plane's nor any other's opens an estimator);
// karmada-scheduler asks them, and karmada-descheduler runs with its own
// identity.
func TestSchedulerEstimatorAndDescheduler(t *testing.T) {
	o := render(t, estimatorValues)
	s := o.secret(t, "karmada-cert")
	controlPlane := x509.NewCertPool()
	controlPlane.AddCert(cert(t, s.Data["ca.crt"]))
	client := o.secret(t, "karmada-scheduler-estimator-client")
	estimators := x509.NewCertPool()
	estimators.AddCert(cert(t, client.Data["ca.crt"]))
	if string(client.Data["ca.crt"]) == string(s.Data["ca.crt"]) {
		t.Fatal("the estimators' CA is the control plane's: an agent's certificate would open an estimator")
	}
	cc := cert(t, client.Data["tls.crt"])
	if _, err := cc.Verify(x509.VerifyOptions{Roots: estimators, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		t.Errorf("the estimator client certificate: %v", err)
	}
	if _, err := cc.Verify(x509.VerifyOptions{Roots: controlPlane, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err == nil {
		t.Error("the estimator client certificate is the control plane's CA's: it would open the karmada-apiserver")
	}
	for _, m := range []string{"member1", "member2"} {
		name := "karmada-scheduler-estimator-" + m
		tls := o.secret(t, name+"-tls")
		if string(tls.Data["ca.crt"]) != string(client.Data["ca.crt"]) {
			t.Errorf("%s verifies its clients with another CA than the one that signed the scheduler's certificate", name)
		}
		sc := cert(t, tls.Data["tls.crt"])
		// karmada-scheduler verifies <prefix>-<cluster>.<namespace>.svc.
		if _, err := sc.Verify(x509.VerifyOptions{Roots: estimators, DNSName: name + ".karmada-system.svc"}); err != nil {
			t.Errorf("%s's serving certificate: %v", name, err)
		}
		if _, err := sc.Verify(x509.VerifyOptions{Roots: estimators, DNSName: "karmada-scheduler-estimator-member3.karmada-system.svc"}); err == nil {
			t.Errorf("%s's serving certificate also passes for member3's estimator", name)
		}
		d := o.deployment(t, name)
		c := d.Spec.Template.Spec.Containers[0]
		for _, want := range []string{"--cluster-name=" + m, "--grpc-client-ca-file=/etc/karmada/pki/ca.crt", "--server-port=10352"} {
			if !hasArg(c, want) {
				t.Errorf("%s lacks %s: %v", name, want, args(c))
			}
		}
		var svc corev1.Service
		o.get(t, "Service/"+name, &svc)
		if svc.Spec.Selector["app"] != name || svc.Spec.Ports[0].Port != 10352 || d.Spec.Template.Labels["app"] != name {
			t.Errorf("Service %s selects %v on %v; the pods are labelled %v", name, svc.Spec.Selector, svc.Spec.Ports, d.Spec.Template.Labels)
		}
		for _, v := range d.Spec.Template.Spec.Volumes {
			if v.Secret != nil && v.Secret.SecretName == "karmada-cert" {
				t.Errorf("%s mounts karmada-cert", name)
			}
		}
	}
	if d := o.deployment(t, "karmada-scheduler-estimator-member2"); *d.Spec.Replicas != 2 {
		t.Errorf("member2's estimator runs %d replicas, want its replicaCount 2", *d.Spec.Replicas)
	}
	// member1's kubeconfig is the user's Secret; member2's is made from the values.
	kc, err := clientcmd.Load(o.secret(t, "karmada-scheduler-estimator-member2-kubeconfig").Data["kubeconfig"])
	if err != nil || kc.Clusters[kc.Contexts[kc.CurrentContext].Cluster].Server != "https://member2:6443" {
		t.Errorf("member2's estimator kubeconfig: %v %+v", err, kc)
	}
	for _, v := range o.deployment(t, "karmada-scheduler-estimator-member1").Spec.Template.Spec.Volumes {
		if v.Name == "kubeconfig" && v.Secret.SecretName != "member1-estimator" {
			t.Errorf("member1's estimator reads its member with %s, want the Secret given (member1-estimator)", v.Secret.SecretName)
		}
	}

	sched := o.deployment(t, "karmada-scheduler").Spec.Template.Spec.Containers[0]
	desched := o.deployment(t, "karmada-descheduler").Spec.Template.Spec.Containers[0]
	for who, c := range map[string]corev1.Container{"karmada-scheduler": sched, "karmada-descheduler": desched} {
		for _, want := range []string{"--scheduler-estimator-ca-file=/etc/karmada/estimator/ca.crt", "--scheduler-estimator-cert-file=/etc/karmada/estimator/tls.crt",
			"--scheduler-estimator-service-namespace=karmada-system"} {
			if !hasArg(c, want) {
				t.Errorf("%s lacks %s: %v", who, want, args(c))
			}
		}
	}
	if !hasArg(sched, "--enable-scheduler-estimator") {
		t.Errorf("karmada-scheduler does not ask the estimators: %v", args(sched))
	}
	if !hasArg(desched, "--descheduling-interval=30s") || !hasArg(desched, "--unschedulable-threshold=1m") {
		t.Errorf("karmada-descheduler's flags: %v", args(desched))
	}
	kc, err = clientcmd.Load(o.secret(t, "karmada-descheduler-kubeconfig").Data["kubeconfig"])
	if err != nil {
		t.Fatal(err)
	}
	if ai := kc.AuthInfos[kc.Contexts[kc.CurrentContext].AuthInfo]; ai == nil || ai.ClientCertificate != "/etc/karmada/config/tls.crt" ||
		kc.Clusters[kc.Contexts[kc.CurrentContext].Cluster].Server != "https://karmada-apiserver.karmada-system.svc.cluster.local:5443" {
		t.Errorf("karmada-descheduler's kubeconfig: %+v", kc)
	}
	dc := cert(t, o.secret(t, "karmada-descheduler-kubeconfig").Data["tls.crt"])
	if dc.Subject.CommonName != "system:karmada:karmada-descheduler" || len(dc.Subject.Organization) != 0 {
		t.Errorf("karmada-descheduler's identity %q %v, want system:karmada:karmada-descheduler and no group", dc.Subject.CommonName, dc.Subject.Organization)
	}
	if _, err := dc.Verify(x509.VerifyOptions{Roots: controlPlane, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		t.Errorf("karmada-descheduler's certificate: %v", err)
	}

	// Without the components nothing of them is rendered, and
	// karmada-scheduler asks no estimator.
	d := defaults(t)
	for _, k := range d.keys() {
		if strings.Contains(k, "estimator") || strings.Contains(k, "descheduler") {
			t.Errorf("%s rendered without the components", k)
		}
	}
	if hasArg(d.deployment(t, "karmada-scheduler").Spec.Template.Spec.Containers[0], "--enable-scheduler-estimator") {
		t.Error("karmada-scheduler asks estimators without the component")
	}
}
