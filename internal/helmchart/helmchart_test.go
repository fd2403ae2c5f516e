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

	"github.com/karmada-go/karmada/deploy"
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
		"Secret/karmada-kubeconfig", "Secret/karmada-scheduler-kubeconfig", "Secret/karmada-search-kubeconfig", "Secret/karmada-webhook-kubeconfig",
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
	for _, vals := range []string{"", "components: [search]", estimatorValues, "etcd: {internal: {storageType: emptyDir, replicaCount: 3}}", "installMode: agent\nagent: {clusterName: m1}",
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

// Values that change the output, each checked where it shows.
func TestValues(t *testing.T) {
	for _, tc := range []struct {
		name, vals string
		check      func(t *testing.T, o *objects)
	}{{
		"default images and tag", "",
		func(t *testing.T, o *objects) {
			for k, p := range o.pods(t) {
				img := p.Spec.Containers[0].Image
				if !strings.HasPrefix(img, "docker.io/karmada-go/") || !strings.HasSuffix(img, ":"+chartAppVersion(t)) {
					t.Errorf("%s image %s, want docker.io/karmada-go/...:%s", k, img, chartAppVersion(t))
				}
			}
		},
	}, {
		"global.imageRegistry and a tag", "global: {imageRegistry: registry.example.com:5000, imagePullSecrets: [regcred]}\nscheduler: {image: {tag: v9}, imagePullSecrets: [{name: other}]}",
		func(t *testing.T, o *objects) {
			d := o.deployment(t, "karmada-scheduler")
			if got := d.Spec.Template.Spec.Containers[0].Image; got != "registry.example.com:5000/karmada-go/karmada-scheduler:v9" {
				t.Errorf("image %s", got)
			}
			if diff := cmp.Diff([]corev1.LocalObjectReference{{Name: "regcred"}, {Name: "other"}}, d.Spec.Template.Spec.ImagePullSecrets); diff != "" {
				t.Errorf("pull secrets (-want,+got):\n%s", diff)
			}
			if got := o.deployment(t, "karmada-webhook").Spec.Template.Spec.Containers[0].Image; !strings.HasPrefix(got, "registry.example.com:5000/") {
				t.Errorf("webhook image %s ignores global.imageRegistry", got)
			}
		},
	}, {
		"karmada-search", "components: [search]",
		func(t *testing.T, o *objects) {
			for _, k := range []string{"Deployment/karmada-search", "Service/karmada-search", "PodDisruptionBudget/karmada-search"} {
				if _, ok := o.byKey[k]; !ok {
					t.Errorf("%s not rendered", k)
				}
			}
			c := o.deployment(t, "karmada-search").Spec.Template.Spec.Containers[0]
			if !hasArg(c, "--etcd-prefix=/registry-karmada-search") || !hasArg(c, "--etcd-certfile=/etc/karmada/pki/etcd-client.crt") {
				t.Errorf("karmada-search args %v", args(c))
			}
			job := &batchv1.Job{}
			o.get(t, "Job/karmada-setup-1", job)
			if v, _ := argValue(job.Spec.Template.Spec.Containers[0], "--search-url"); v != "https://karmada-search.karmada-system.svc.cluster.local:443" {
				t.Errorf("setup registers karmada-search at %q", v)
			}
			s := o.secret(t, "karmada-cert")
			pool := x509.NewCertPool()
			pool.AddCert(cert(t, s.Data["ca.crt"]))
			if _, err := cert(t, s.Data["search.crt"]).Verify(x509.VerifyOptions{Roots: pool, DNSName: "karmada-search.karmada-system.svc"}); err != nil {
				t.Errorf("karmada-search's serving certificate: %v", err)
			}
		},
	}, {
		"three etcd members", "etcd: {internal: {replicaCount: 3}}",
		func(t *testing.T, o *objects) {
			s := &appsv1.StatefulSet{}
			o.get(t, "StatefulSet/etcd", s)
			if *s.Spec.Replicas != 3 {
				t.Errorf("etcd replicas %d", *s.Spec.Replicas)
			}
			v, _ := argValue(s.Spec.Template.Spec.Containers[0], "--initial-cluster")
			if strings.Count(v, "=https://") != 3 {
				t.Errorf("initial cluster %s, want 3 members", v)
			}
			v, _ = argValue(o.deployment(t, "karmada-apiserver").Spec.Template.Spec.Containers[0], "--etcd-servers")
			if strings.Count(v, "https://etcd-") != 3 {
				t.Errorf("karmada-apiserver --etcd-servers=%s, want all 3 members", v)
			}
			if a, _ := argValue(o.deployment(t, "karmada-aggregated-apiserver").Spec.Template.Spec.Containers[0], "--etcd-servers"); a != v {
				t.Errorf("karmada-aggregated-apiserver --etcd-servers=%s, want the karmada-apiserver's %s", a, v)
			}
		},
	}, {
		"external etcd", "etcd: {mode: external, external: {servers: 'https://e1:2379,https://e2:2379', registryPrefix: /registry/k1, certs: {caCrt: CA, crt: CRT, key: KEY}}}",
		func(t *testing.T, o *objects) {
			for _, k := range []string{"StatefulSet/etcd", "Service/etcd", "PodDisruptionBudget/etcd"} {
				if _, ok := o.byKey[k]; ok {
					t.Errorf("%s rendered with an external etcd", k)
				}
			}
			c := o.deployment(t, "karmada-apiserver").Spec.Template.Spec.Containers[0]
			if !hasArg(c, "--etcd-servers=https://e1:2379,https://e2:2379") || !hasArg(c, "--etcd-prefix=/registry/k1") {
				t.Errorf("karmada-apiserver args %v", args(c))
			}
			s := o.secret(t, "karmada-cert")
			if string(s.Data["etcd-ca.crt"]) != "CA" || string(s.Data["etcd-client.key"]) != "KEY" {
				t.Errorf("external etcd certificates not used")
			}
			// karmada-aggregated-apiserver: the same etcd and client
			// certificate, its own prefix.
			a := o.deployment(t, "karmada-aggregated-apiserver").Spec.Template.Spec
			if c := a.Containers[0]; !hasArg(c, "--etcd-servers=https://e1:2379,https://e2:2379") || !hasArg(c, "--etcd-prefix=/registry-karmada-aggregated-apiserver") {
				t.Errorf("karmada-aggregated-apiserver args %v", args(c))
			}
			for _, v := range a.Volumes {
				if v.Secret != nil && v.Secret.SecretName == "karmada-cert" &&
					!slices.Contains(v.Secret.Items, corev1.KeyToPath{Key: "etcd-client.crt", Path: "etcd-client.crt"}) {
					t.Errorf("karmada-aggregated-apiserver mounts %v, want the external etcd's client certificate", v.Secret.Items)
				}
			}
		},
	}, {
		"etcd on emptyDir", "etcd: {internal: {storageType: emptyDir}}",
		func(t *testing.T, o *objects) {
			s := &appsv1.StatefulSet{}
			o.get(t, "StatefulSet/etcd", s)
			if len(s.Spec.VolumeClaimTemplates) != 0 || !slices.ContainsFunc(s.Spec.Template.Spec.Volumes, func(v corev1.Volume) bool { return v.Name == "etcd-data" && v.EmptyDir != nil }) {
				t.Errorf("etcd volumes %+v, claims %d", s.Spec.Template.Spec.Volumes, len(s.Spec.VolumeClaimTemplates))
			}
		},
	}, {
		"etcd on a PVC of a storage class", "etcd: {internal: {pvc: {storageClass: fast, size: 1Gi}}}",
		func(t *testing.T, o *objects) {
			s := &appsv1.StatefulSet{}
			o.get(t, "StatefulSet/etcd", s)
			if len(s.Spec.VolumeClaimTemplates) != 1 || *s.Spec.VolumeClaimTemplates[0].Spec.StorageClassName != "fast" ||
				s.Spec.VolumeClaimTemplates[0].Spec.Resources.Requests.Storage().String() != "1Gi" {
				t.Errorf("claims %+v", s.Spec.VolumeClaimTemplates)
			}
			if p := s.Spec.PersistentVolumeClaimRetentionPolicy; p == nil || p.WhenDeleted != appsv1.DeletePersistentVolumeClaimRetentionPolicyType {
				t.Errorf("etcd's claims outlive an uninstall: %+v", p)
			}
		},
	}, {
		"NodePort", "apiServer: {serviceType: NodePort, nodePort: 32443}",
		func(t *testing.T, o *objects) {
			s := &corev1.Service{}
			o.get(t, "Service/karmada-apiserver", s)
			if s.Spec.Type != corev1.ServiceTypeNodePort || s.Spec.Ports[0].NodePort != 32443 {
				t.Errorf("service %+v", s.Spec)
			}
		},
	}, {
		"replicas, scheduling and pods' metadata", `
controllerManager: {replicaCount: 2, nodeSelector: {role: cp}, tolerations: [{key: cp, operator: Exists}], podLabels: {team: a}, podAnnotations: {note: b}, priorityClassName: system-cluster-critical,
  affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [{key: zone, operator: In, values: [a]}]}]}}},
  resources: {requests: {cpu: "1", memory: 1Gi}, limits: {memory: 2Gi}}}`,
		func(t *testing.T, o *objects) {
			d := o.deployment(t, "karmada-controller-manager")
			p := d.Spec.Template
			if *d.Spec.Replicas != 2 || p.Spec.NodeSelector["role"] != "cp" || len(p.Spec.Tolerations) != 1 || p.Labels["team"] != "a" ||
				p.Annotations["note"] != "b" || p.Spec.PriorityClassName != "system-cluster-critical" ||
				p.Spec.Affinity.NodeAffinity == nil || p.Spec.Affinity.PodAntiAffinity != nil ||
				p.Spec.Containers[0].Resources.Requests.Cpu().String() != "1" {
				t.Errorf("deployment %+v", d.Spec)
			}
			// Without an affinity of their own, replicas prefer other nodes.
			if a := o.deployment(t, "karmada-scheduler").Spec.Template.Spec.Affinity; a == nil || a.PodAntiAffinity == nil {
				t.Errorf("scheduler has no anti-affinity: %+v", a)
			}
		},
	}, {
		"controller manager flags", "controllerManager: {controllers: '*,-namespace', featureGates: {Failover: false}, enableNoExecuteTaintEviction: false, memoryLimit: '', extraArgs: {concurrent-work-syncs: 10}}",
		func(t *testing.T, o *objects) {
			c := o.deployment(t, "karmada-controller-manager").Spec.Template.Spec.Containers[0]
			for _, want := range []string{"--controllers=*,-namespace", "--feature-gates=Failover=false", "--concurrent-work-syncs=10"} {
				if !hasArg(c, want) {
					t.Errorf("args %v lack %s", args(c), want)
				}
			}
			for _, flag := range []string{"--enable-no-execute-taint-eviction", "--memory-limit"} {
				if _, ok := argValue(c, flag); ok || hasArg(c, flag) {
					t.Errorf("args %v have %s", args(c), flag)
				}
			}
		},
	}, {
		"default controller manager flags", "",
		func(t *testing.T, o *objects) {
			c := o.deployment(t, "karmada-controller-manager").Spec.Template.Spec.Containers[0]
			for _, want := range []string{"--feature-gates=Failover=true", "--enable-no-execute-taint-eviction", "--memory-limit=512Mi", "--leader-elect=true", "--kubeconfig=/etc/karmada/config/kubeconfig"} {
				if !hasArg(c, want) {
					t.Errorf("args %v lack %s", args(c), want)
				}
			}
			w := o.deployment(t, "karmada-webhook").Spec.Template.Spec.Containers[0]
			if !hasArg(w, "--allow-no-execute-taint-policy") {
				t.Errorf("webhook args %v", args(w))
			}
		},
	}, {
		"webhook without NoExecute policies", "webhook: {allowNoExecuteTaintPolicy: false}",
		func(t *testing.T, o *objects) {
			if hasArg(o.deployment(t, "karmada-webhook").Spec.Template.Spec.Containers[0], "--allow-no-execute-taint-policy") {
				t.Errorf("flag still there")
			}
		},
	}, {
		"kube-controller-manager controllers and apiserver extra args", "kubeControllerManager: {controllers: 'namespace-controller'}\napiServer: {extraArgs: {audit-log-maxage: '7'}, maxRequestsInflight: 10}",
		func(t *testing.T, o *objects) {
			if !hasArg(o.deployment(t, "kube-controller-manager").Spec.Template.Spec.Containers[0], "--controllers=namespace-controller") {
				t.Errorf("kcm controllers")
			}
			c := o.deployment(t, "karmada-apiserver").Spec.Template.Spec.Containers[0]
			if !hasArg(c, "--audit-log-maxage=7") || !hasArg(c, "--max-requests-inflight=10") {
				t.Errorf("apiserver args %v", args(c))
			}
		},
	}, {
		"cluster domain", "clusterDomain: corp.local",
		func(t *testing.T, o *objects) {
			job := &batchv1.Job{}
			o.get(t, "Job/karmada-setup-1", job)
			c := job.Spec.Template.Spec.Containers[0]
			if !hasArg(c, "--webhook-url=https://karmada-webhook.karmada-system.svc.corp.local:443") ||
				!hasArg(c, "--karmada-server=https://karmada-apiserver.karmada-system.svc.corp.local:5443") {
				t.Errorf("setup args %v", args(c))
			}
		},
	}, {
		"agent with the Secret register wrote", "installMode: agent\nagent: {clusterName: member3, clusterRegion: eu, clusterZones: [a, b]}",
		func(t *testing.T, o *objects) {
			if diff := cmp.Diff([]string{"Deployment/karmada-agent"}, o.keys()); diff != "" {
				t.Errorf("objects (-want,+got):\n%s", diff)
			}
			d := o.deployment(t, "karmada-agent")
			c := d.Spec.Template.Spec.Containers[0]
			for _, want := range []string{"--cluster-name=member3", "--cluster-region=eu", "--cluster-zones=a,b", "--karmada-kubeconfig=/etc/karmada/config/karmada-kubeconfig"} {
				if !hasArg(c, want) {
					t.Errorf("agent args %v lack %s", args(c), want)
				}
			}
			if d.Spec.Template.Spec.ServiceAccountName != "karmada-agent" || d.Spec.Template.Spec.Volumes[0].Secret.SecretName != "karmada-kubeconfig" {
				t.Errorf("agent identity: %+v", d.Spec.Template.Spec)
			}
			if d.Spec.Strategy.Type != appsv1.RecreateDeploymentStrategyType {
				t.Errorf("agent strategy %s: two agents would run during a rollout", d.Spec.Strategy.Type)
			}
		},
	}, {
		"agent next to its member", "installMode: agent\nagent: {clusterName: member3, memberKubeconfigSecret: member3-kubeconfig, kubeconfig: {caCrt: CA, crt: CRT, key: KEY, server: 'https://k:5443'}}",
		func(t *testing.T, o *objects) {
			d := o.deployment(t, "karmada-agent")
			c := d.Spec.Template.Spec.Containers[0]
			if !hasArg(c, "--kubeconfig=/etc/karmada/member/kubeconfig") || *d.Spec.Template.Spec.AutomountServiceAccountToken {
				t.Errorf("agent args %v, automount %v", args(c), d.Spec.Template.Spec.AutomountServiceAccountToken)
			}
			kc, err := clientcmd.Load(o.secret(t, "karmada-agent-kubeconfig").Data["karmada-kubeconfig"])
			if err != nil {
				t.Fatal(err)
			}
			if kc.Clusters[kc.Contexts[kc.CurrentContext].Cluster].Server != "https://k:5443" {
				t.Errorf("agent kubeconfig %+v", kc)
			}
		},
	}} {
		t.Run(tc.name, func(t *testing.T) { tc.check(t, render(t, tc.vals)) })
	}
}

func chartAppVersion(t *testing.T) string {
	ch, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	return ch.Metadata.AppVersion
}

// Bad values fail the install with the value, what was given and what is
// allowed.
func TestBadValues(t *testing.T) {
	for vals, want := range map[string]string{
		"installMode: member":                                                    "installMode",
		"etcd: {internal: {replicaCount: 2}}":                                    "replicaCount",
		"etcd: {internal: {storageType: nfs}}":                                   "storageType",
		"etcd: {mode: external}":                                                 "etcd.external.servers is required",
		"etcd: {mode: external, external: {servers: 'https://e:1'}}":             "etcd.external.certs.caCrt, crt and key are required",
		"apiServer: {serviceType: Ingress}":                                      "serviceType",
		"certs: {auto: {expiry: 1y}}":                                            "expiry",
		"certs: {auto: {expiry: 12h}}":                                           "certs.auto.expiry=\"12h\": must be at least 24h",
		"certs: {mode: custom}":                                                  "certs.custom.caCrt and certs.custom.caKey are required",
		"installMode: agent":                                                     "agent.clusterName is required",
		"installMode: agent\nagent: {clusterName: m, replicaCount: 2}":           "replicaCount",
		"installMode: agent\nagent: {clusterName: m, kubeconfig: {crt: x}}":      "caCrt, crt, key and server go together",
		"installMode: agent\nagent: {clusterName: m, memberKubeconfigSecret: s}": "agent.kubeconfig is required",
		"apiServer: {externalURL: 'http://plain:80'}":                            "externalURL",
		"components: [estimator]":                                                "components",
		"components: [descheduler]":                                              "descheduler needs schedulerEstimator",
		"components: [schedulerEstimator]":                                       "needs schedulerEstimator.memberClusters",
		"components: [schedulerEstimator]\nschedulerEstimator: {memberClusters: [{clusterName: m1}]}":                       "give kubeconfig.server, caCrt, crt and key",
		"components: [schedulerEstimator]\nschedulerEstimator: {memberClusters: [{clusterName: M_1, kubeconfigSecret: s}]}": "clusterName",
	} {
		_, err := tryRender(vals)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("values %q: error %v, want one naming %q", vals, err, want)
		}
	}
}

func helmchartHookNames(r *Rendered) []string {
	var out []string
	for _, h := range r.Hooks {
		out = append(out, h.Kind+"/"+h.Name)
	}
	return out
}

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

const estimatorValues = `
components: [schedulerEstimator, descheduler]
schedulerEstimator:
  memberClusters:
    - {clusterName: member1, kubeconfigSecret: member1-estimator}
    - {clusterName: member2, replicaCount: 2, kubeconfig: {server: "https://member2:6443", caCrt: ca, crt: cert, key: key}}
descheduler: {deschedulingInterval: 30s, unschedulableThreshold: 1m}`

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
