package helmchart

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/lint"
	"helm.sh/helm/v3/pkg/lint/support"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/clientcmd"
	psapi "k8s.io/pod-security-admission/api"
	"k8s.io/pod-security-admission/policy"
	"sigs.k8s.io/yaml"

	"github.com/karmada-go/karmada/internal/webhook"
)

// render renders the embedded chart with vals (YAML) and decodes every
// object, hooks included.
func render(t *testing.T, vals string) *objects {
	t.Helper()
	o, err := tryRender(vals)
	if err != nil {
		t.Fatalf("rendering with %q: %v", vals, err)
	}
	return o
}

func tryRender(vals string) (*objects, error) {
	ch, err := Load()
	if err != nil {
		return nil, err
	}
	v := map[string]any{}
	if err := yaml.Unmarshal([]byte(vals), &v); err != nil {
		return nil, err
	}
	r, err := Render(context.Background(), ch, v, DefaultRelease, DefaultNamespace)
	if err != nil {
		return nil, err
	}
	o := &objects{byKey: map[string]*unstructured.Unstructured{}, rendered: r}
	docs := []string{}
	for _, m := range r.Manifests {
		docs = append(docs, m.Content)
	}
	for _, h := range r.Hooks {
		docs = append(docs, h.Manifest)
	}
	for _, d := range docs {
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(d), &u.Object); err != nil {
			return nil, fmt.Errorf("decoding %s: %w", d, err)
		}
		if len(u.Object) == 0 {
			continue
		}
		k := u.GetKind() + "/" + u.GetName()
		if _, dup := o.byKey[k]; dup {
			return nil, fmt.Errorf("%s rendered twice", k)
		}
		o.byKey[k] = u
	}
	return o, nil
}

type objects struct {
	byKey    map[string]*unstructured.Unstructured
	rendered *Rendered
}

func (o *objects) keys() []string {
	out := make([]string, 0, len(o.byKey))
	for k := range o.byKey {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func (o *objects) get(t *testing.T, key string, into any) {
	t.Helper()
	u, ok := o.byKey[key]
	if !ok {
		t.Fatalf("%s not rendered; rendered: %v", key, o.keys())
	}
	b, err := u.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.UnmarshalStrict(b, into); err != nil {
		t.Fatalf("%s: %v", key, err)
	}
}

func (o *objects) deployment(t *testing.T, name string) *appsv1.Deployment {
	t.Helper()
	d := &appsv1.Deployment{}
	o.get(t, "Deployment/"+name, d)
	return d
}

func (o *objects) secret(t *testing.T, name string) *corev1.Secret {
	t.Helper()
	s := &corev1.Secret{}
	o.get(t, "Secret/"+name, s)
	// stringData as an API server stores it.
	if s.Data == nil {
		s.Data = map[string][]byte{}
	}
	for k, v := range s.StringData {
		s.Data[k] = []byte(v)
	}
	return s
}

// pods returns the pod template of every workload, by "Kind/name".
func (o *objects) pods(t *testing.T) map[string]corev1.PodTemplateSpec {
	t.Helper()
	out := map[string]corev1.PodTemplateSpec{}
	for k, u := range o.byKey {
		switch u.GetKind() {
		case "Deployment":
			d := &appsv1.Deployment{}
			o.get(t, k, d)
			out[k] = d.Spec.Template
		case "StatefulSet":
			s := &appsv1.StatefulSet{}
			o.get(t, k, s)
			out[k] = s.Spec.Template
		case "Job":
			j := &batchv1.Job{}
			o.get(t, k, j)
			out[k] = j.Spec.Template
		}
	}
	return out
}

func args(c corev1.Container) []string { return append(append([]string{}, c.Command...), c.Args...) }

func hasArg(c corev1.Container, want string) bool { return slices.Contains(args(c), want) }

func argValue(c corev1.Container, flag string) (string, bool) {
	for _, a := range args(c) {
		if v, ok := strings.CutPrefix(a, flag+"="); ok {
			return v, true
		}
	}
	return "", false
}

func cert(t *testing.T, pemData []byte) *x509.Certificate {
	t.Helper()
	b, _ := pem.Decode(pemData)
	if b == nil {
		t.Fatalf("no PEM block in %q", pemData)
	}
	c, err := x509.ParseCertificate(b.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

var defaultsOnce = sync.OnceValues(func() (*objects, error) { return tryRender("") })

func defaults(t *testing.T) *objects {
	t.Helper()
	o, err := defaultsOnce()
	if err != nil {
		t.Fatal(err)
	}
	return o
}

func TestLint(t *testing.T) {
	kv, err := chartutil.ParseKubeVersion(KubeVersion)
	if err != nil {
		t.Fatal(err)
	}
	for _, vals := range []string{
		"",
		"installMode: agent\nagent: {clusterName: member1}",
		"etcd: {internal: {replicaCount: 3}}\napiServer: {replicaCount: 2, serviceType: NodePort, nodePort: 32443}",
	} {
		v := map[string]any{}
		if err := yaml.Unmarshal([]byte(vals), &v); err != nil {
			t.Fatal(err)
		}
		res := lint.AllWithKubeVersion("../../charts/karmada", v, DefaultNamespace, kv)
		for _, m := range res.Messages {
			// INFO (an icon is recommended) is advice, not a fault.
			if m.Severity > support.InfoSev {
				t.Errorf("lint with %q: %s", vals, m)
			}
		}
	}
}

func TestDefaultsRenderTheControlPlane(t *testing.T) {
	o := defaults(t)
	want := []string{
		"ConfigMap/karmada-apiserver-authorization",
		"Deployment/karmada-aggregated-apiserver", "Deployment/karmada-apiserver", "Deployment/karmada-controller-manager", "Deployment/karmada-scheduler",
		"Deployment/karmada-webhook", "Deployment/kube-controller-manager",
		"Job/karmada-setup-1",
		"PodDisruptionBudget/etcd", "PodDisruptionBudget/karmada-aggregated-apiserver", "PodDisruptionBudget/karmada-apiserver", "PodDisruptionBudget/karmada-controller-manager",
		"PodDisruptionBudget/karmada-scheduler", "PodDisruptionBudget/karmada-webhook", "PodDisruptionBudget/kube-controller-manager",
		"Secret/karmada-aggregated-apiserver-kubeconfig", "Secret/karmada-cert", "Secret/karmada-controller-manager-kubeconfig", "Secret/karmada-encryption-config",
		"Secret/karmada-kubeconfig", "Secret/karmada-metrics-adapter-kubeconfig", "Secret/karmada-scheduler-kubeconfig", "Secret/karmada-search-kubeconfig", "Secret/karmada-webhook-kubeconfig",
		"Secret/kube-controller-manager-kubeconfig",
		"Service/etcd", "Service/etcd-client", "Service/karmada-aggregated-apiserver", "Service/karmada-apiserver", "Service/karmada-webhook",
		"StatefulSet/etcd",
	}
	if diff := cmp.Diff(want, o.keys()); diff != "" {
		t.Errorf("objects (-want,+got):\n%s", diff)
	}
	for k, u := range o.byKey {
		if u.GetNamespace() != DefaultNamespace {
			t.Errorf("%s in namespace %q, want the release's %s", k, u.GetNamespace(), DefaultNamespace)
		}
		if u.GetLabels()["app.kubernetes.io/instance"] != DefaultRelease {
			t.Errorf("%s lacks the release's labels: %v", k, u.GetLabels())
		}
	}
	// The setup Job is part of the release, not a hook: `helm install
	// --wait` would wait for the components before running hooks, and
	// the components wait for what the Job installs.
	if len(o.rendered.Hooks) != 0 {
		t.Errorf("hooks %v: the chart has none", helmchartHookNames(o.rendered))
	}
	for _, want := range []string{"kubectl -n karmada-system get secret karmada-kubeconfig", "karmadactl --kubeconfig karmada.config join"} {
		if !strings.Contains(o.rendered.Notes, want) {
			t.Errorf("NOTES lack %q:\n%s", want, o.rendered.Notes)
		}
	}
}

// The karmada-apiserver authorizes as karmada-local's does: the controller
// manager's confinement (the same configuration), then RBAC.
func TestAPIServerConfinesTheControllerManager(t *testing.T) {
	o := defaults(t)
	cm := &corev1.ConfigMap{}
	o.get(t, "ConfigMap/karmada-apiserver-authorization", cm)
	if got, want := strings.TrimSpace(cm.Data["authorization-config.yaml"]), strings.TrimSpace(webhook.AuthorizationConfiguration("/etc/karmada/authorization/webhook.kubeconfig")); got != want {
		t.Errorf("the chart's authorization configuration is not the code's:\n%s\nwant\n%s", got, want)
	}
	kc, err := clientcmd.Load([]byte(cm.Data["webhook.kubeconfig"]))
	if err != nil {
		t.Fatal(err)
	}
	if c := kc.Clusters[kc.Contexts[kc.CurrentContext].Cluster]; c == nil || c.Server != "https://karmada-webhook.karmada-system.svc.cluster.local:443"+webhook.ConfinementPath || c.CertificateAuthority != "/etc/karmada/pki/ca.crt" {
		t.Errorf("webhook kubeconfig: %+v", c)
	}
	args := strings.Join(o.deployment(t, "karmada-apiserver").Spec.Template.Spec.Containers[0].Command, " ")
	if !strings.Contains(args, "--authorization-config=/etc/karmada/authorization/authorization-config.yaml") || strings.Contains(args, "--authorization-mode") {
		t.Errorf("karmada-apiserver: %s", args)
	}
}

// Every pod of the chart passes the restricted Pod Security Standard, with
// its default values and with every storage type but hostPath.
func TestPodsAreRestricted(t *testing.T) {
	eval, err := policy.NewEvaluator(policy.DefaultChecks())
	if err != nil {
		t.Fatal(err)
	}
	level := psapi.LevelVersion{Level: psapi.LevelRestricted, Version: psapi.LatestVersion()}
	for _, vals := range []string{"", "components: [search]", "components: [metricsAdapter]", estimatorValues, "etcd: {internal: {storageType: emptyDir, replicaCount: 3}}", "installMode: agent\nagent: {clusterName: m1}",
		"installMode: agent\nagent: {clusterName: m1, memberKubeconfigSecret: m1-kubeconfig, kubeconfig: {caCrt: a, crt: b, key: c, server: 'https://x:1'}}"} {
		for k, p := range render(t, vals).pods(t) {
			res := policy.AggregateCheckResults(eval.EvaluatePod(level, &p.ObjectMeta, &p.Spec))
			if !res.Allowed {
				t.Errorf("%s (values %q) is not restricted: %s: %s", k, vals, res.ForbiddenReason(), res.ForbiddenDetail())
			}
			for _, c := range p.Spec.Containers {
				if c.Resources.Requests.Memory().IsZero() || c.Resources.Limits.Memory().IsZero() {
					t.Errorf("%s container %s has no memory request or limit: %v", k, c.Name, c.Resources)
				}
				if c.SecurityContext == nil || c.SecurityContext.ReadOnlyRootFilesystem == nil || !*c.SecurityContext.ReadOnlyRootFilesystem {
					t.Errorf("%s container %s has a writable root file system", k, c.Name)
				}
				if k != "Job/karmada-setup-1" && (c.LivenessProbe == nil || c.ReadinessProbe == nil) {
					t.Errorf("%s container %s lacks a liveness or readiness probe", k, c.Name)
				}
			}
		}
	}
	// hostPath is allowed as Karmada's chart allows it, but not restricted:
	// the values say so.
	o := render(t, "etcd: {internal: {storageType: hostPath}}")
	p := o.pods(t)["StatefulSet/etcd"]
	if res := policy.AggregateCheckResults(eval.EvaluatePod(level, &p.ObjectMeta, &p.Spec)); res.Allowed {
		t.Errorf("etcd with a hostPath volume passes restricted; the values' doc says it does not")
	}
}

// Least privilege in the host cluster: no pod of the control plane gets a
// service account token (none needs the host's API), and the CA key reaches
// only the kube-controller-manager (it signs agents' certificates) and the
// setup Job (it signs its own one-hour credential).
func TestPodsGetOnlyTheirOwnSecrets(t *testing.T) {
	o := defaults(t)
	caKeyHolders := []string{}
	for k, p := range o.pods(t) {
		if p.Spec.AutomountServiceAccountToken == nil || *p.Spec.AutomountServiceAccountToken {
			t.Errorf("%s mounts a service account token of the host cluster", k)
		}
		for _, v := range p.Spec.Volumes {
			var items []corev1.KeyToPath
			switch {
			case v.Secret != nil && v.Secret.SecretName == "karmada-cert":
				items = v.Secret.Items
			case v.Projected != nil:
				for _, s := range v.Projected.Sources {
					if s.Secret != nil && s.Secret.Name == "karmada-cert" {
						items = append(items, s.Secret.Items...)
					}
				}
			case v.Secret != nil:
				continue
			default:
				continue
			}
			if (v.Secret != nil || v.Projected != nil) && len(items) == 0 {
				t.Errorf("%s mounts all of karmada-cert; it must name the keys it needs", k)
			}
			for _, it := range items {
				if it.Key == "ca.key" {
					caKeyHolders = append(caKeyHolders, k)
				}
			}
		}
		for _, v := range p.Spec.Volumes {
			if v.Secret != nil && strings.HasSuffix(v.Secret.SecretName, "-kubeconfig") {
				name := strings.TrimPrefix(strings.TrimPrefix(k, "Deployment/"), "StatefulSet/")
				if v.Secret.SecretName != name+"-kubeconfig" {
					t.Errorf("%s mounts %s, another component's identity", k, v.Secret.SecretName)
				}
			}
		}
	}
	sort.Strings(caKeyHolders)
	if diff := cmp.Diff([]string{"Deployment/kube-controller-manager", "Job/karmada-setup-1"}, caKeyHolders); diff != "" {
		t.Errorf("pods holding the CA key (-want,+got):\n%s", diff)
	}
}

// Each component's kubeconfig is its own identity, signed by the CA, and
// the administrator's kubeconfig reaches the external URL.
func TestIdentitiesAndCertificates(t *testing.T) {
	o := render(t, `
apiServer: {externalURL: "https://172.30.255.1:32443"}
certs: {auto: {expiry: 48h, caExpiry: 240h, hosts: [karmada.example.com, 10.1.2.3]}}`)
	s := o.secret(t, "karmada-cert")
	ca := cert(t, s.Data["ca.crt"])
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	if d := ca.NotAfter.Sub(ca.NotBefore); d < 239*time.Hour || d > 241*time.Hour {
		t.Errorf("CA lives %s, want certs.auto.caExpiry 240h", d)
	}
	api := cert(t, s.Data["apiserver.crt"])
	if _, err := api.Verify(x509.VerifyOptions{Roots: pool, DNSName: "karmada-apiserver.karmada-system.svc.cluster.local"}); err != nil {
		t.Errorf("apiserver certificate: %v", err)
	}
	if d := api.NotAfter.Sub(api.NotBefore); d < 47*time.Hour || d > 49*time.Hour {
		t.Errorf("apiserver certificate lives %s, want certs.auto.expiry 48h", d)
	}
	for _, name := range []string{"karmada.example.com", "karmada-apiserver", "localhost"} {
		if !slices.Contains(api.DNSNames, name) {
			t.Errorf("apiserver certificate lacks DNS name %s: %v", name, api.DNSNames)
		}
	}
	for _, ip := range []string{"10.1.2.3", "172.30.255.1", "127.0.0.1"} {
		if !slices.ContainsFunc(api.IPAddresses, func(i net.IP) bool { return i.Equal(net.ParseIP(ip)) }) {
			t.Errorf("apiserver certificate lacks IP %s: %v", ip, api.IPAddresses)
		}
	}
	webhook := cert(t, s.Data["webhook.crt"])
	if _, err := webhook.Verify(x509.VerifyOptions{Roots: pool, DNSName: "karmada-webhook.karmada-system.svc.cluster.local"}); err != nil {
		t.Errorf("webhook certificate: %v", err)
	}
	// The karmada-apiserver's aggregator dials <service>.<namespace>.svc
	// of the APIService's Service in karmada-system.
	aggregated := cert(t, s.Data["aggregated-apiserver.crt"])
	for _, name := range []string{"karmada-aggregated-apiserver.karmada-system.svc", "karmada-aggregated-apiserver.karmada-system.svc.cluster.local"} {
		if _, err := aggregated.Verify(x509.VerifyOptions{Roots: pool, DNSName: name}); err != nil {
			t.Errorf("karmada-aggregated-apiserver's serving certificate for %s: %v", name, err)
		}
	}
	// Its own etcd identity, of etcd's CA.
	etcdPool := x509.NewCertPool()
	etcdPool.AddCert(cert(t, s.Data["etcd-ca.crt"]))
	ec := cert(t, s.Data["etcd-aggregated-apiserver-client.crt"])
	if _, err := ec.Verify(x509.VerifyOptions{Roots: etcdPool, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil || ec.Subject.CommonName != "karmada-aggregated-apiserver" {
		t.Errorf("karmada-aggregated-apiserver's etcd client certificate %q: %v", ec.Subject.CommonName, err)
	}
	for secret, user := range map[string]string{
		"karmada-aggregated-apiserver-kubeconfig": "system:karmada:karmada-aggregated-apiserver",
		"karmada-controller-manager-kubeconfig":   "system:karmada:karmada-controller-manager",
		"karmada-scheduler-kubeconfig":            "system:karmada:karmada-scheduler",
		"karmada-webhook-kubeconfig":              "system:karmada:karmada-webhook",
		"kube-controller-manager-kubeconfig":      "system:kube-controller-manager",
		"karmada-kubeconfig":                      "system:karmada:admin",
	} {
		kc, err := clientcmd.Load(o.secret(t, secret).Data["kubeconfig"])
		if err != nil {
			t.Fatalf("%s: %v", secret, err)
		}
		ctx := kc.Contexts[kc.CurrentContext]
		data := kc.AuthInfos[ctx.AuthInfo].ClientCertificateData
		if secret != "karmada-kubeconfig" {
			// A component's certificate is a file beside its kubeconfig,
			// read again after a renewal.
			if ai := kc.AuthInfos[ctx.AuthInfo]; ai.ClientCertificate != "/etc/karmada/config/tls.crt" || ai.ClientKey != "/etc/karmada/config/tls.key" || len(data) > 0 {
				t.Errorf("%s: client certificate %q key %q (embedded %d bytes), want the files tls.crt and tls.key beside the kubeconfig", secret, ai.ClientCertificate, ai.ClientKey, len(data))
			}
			data = o.secret(t, secret).Data["tls.crt"]
		}
		c := cert(t, data)
		if c.Subject.CommonName != user || len(c.Subject.Organization) != 0 {
			t.Errorf("%s: user %q groups %v, want %q and no group (system:masters least of all)", secret, c.Subject.CommonName, c.Subject.Organization, user)
		}
		if _, err := c.Verify(x509.VerifyOptions{Roots: pool, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
			t.Errorf("%s: %v", secret, err)
		}
		server := kc.Clusters[ctx.Cluster].Server
		want := "https://karmada-apiserver.karmada-system.svc.cluster.local:5443"
		if secret == "karmada-kubeconfig" {
			want = "https://172.30.255.1:32443"
		}
		if server != want {
			t.Errorf("%s: server %s, want %s", secret, server, want)
		}
	}
	job := &batchv1.Job{}
	o.get(t, "Job/karmada-setup-1", job)
	if v, _ := argValue(job.Spec.Template.Spec.Containers[0], "--karmada-apiserver-advertise-url"); v != "https://172.30.255.1:32443" {
		t.Errorf("setup publishes %q in cluster-info, want the external URL", v)
	}
	if v, _ := argValue(job.Spec.Template.Spec.Containers[0], "--aggregated-apiserver-url"); v != "https://karmada-aggregated-apiserver.karmada-system.svc.cluster.local:443" {
		t.Errorf("setup points the Cluster API at %q, want the Service of karmada-aggregated-apiserver", v)
	}
}

// custom certificates: the given CA signs everything.
func TestCustomCertificates(t *testing.T) {
	base := render(t, "")
	s := base.secret(t, "karmada-cert")
	vals, err := yaml.Marshal(map[string]any{"certs": map[string]any{"mode": "custom", "custom": map[string]any{
		"caCrt": string(s.Data["ca.crt"]), "caKey": string(s.Data["ca.key"])}}})
	if err != nil {
		t.Fatal(err)
	}
	o := render(t, string(vals))
	got := o.secret(t, "karmada-cert")
	if string(got.Data["ca.crt"]) != string(s.Data["ca.crt"]) {
		t.Errorf("custom CA not used")
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert(t, s.Data["ca.crt"]))
	if _, err := cert(t, got.Data["apiserver.crt"]).Verify(x509.VerifyOptions{Roots: pool, DNSName: "karmada-apiserver"}); err != nil {
		t.Errorf("apiserver certificate not signed by the custom CA: %v", err)
	}
}

const estimatorValues = `
components: [schedulerEstimator, descheduler]
schedulerEstimator:
  memberClusters:
    - {clusterName: member1, kubeconfigSecret: member1-estimator}
    - {clusterName: member2, replicaCount: 2, kubeconfig: {server: "https://member2:6443", caCrt: ca, crt: cert, key: key}}
descheduler: {deschedulingInterval: 30s, unschedulableThreshold: 1m}`
