package helmchart

import (
	"crypto/x509"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/clientcmd"
)

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
		"karmada-metrics-adapter", "components: [metricsAdapter]",
		func(t *testing.T, o *objects) {
			for _, k := range []string{"Deployment/karmada-metrics-adapter", "Service/karmada-metrics-adapter", "PodDisruptionBudget/karmada-metrics-adapter"} {
				if _, ok := o.byKey[k]; !ok {
					t.Errorf("%s not rendered", k)
				}
			}
			c := o.deployment(t, "karmada-metrics-adapter").Spec.Template.Spec.Containers[0]
			if !hasArg(c, "--kubeconfig=/etc/karmada/config/kubeconfig") || slices.ContainsFunc(args(c), func(a string) bool { return strings.HasPrefix(a, "--etcd") }) {
				t.Errorf("karmada-metrics-adapter args %v: its kubeconfig, no etcd", args(c))
			}
			job := &batchv1.Job{}
			o.get(t, "Job/karmada-setup-1", job)
			if v, _ := argValue(job.Spec.Template.Spec.Containers[0], "--metrics-adapter-url"); v != "https://karmada-metrics-adapter.karmada-system.svc.cluster.local:443" {
				t.Errorf("setup registers karmada-metrics-adapter at %q", v)
			}
			s := o.secret(t, "karmada-cert")
			pool := x509.NewCertPool()
			pool.AddCert(cert(t, s.Data["ca.crt"]))
			if _, err := cert(t, s.Data["metrics-adapter.crt"]).Verify(x509.VerifyOptions{Roots: pool, DNSName: "karmada-metrics-adapter.karmada-system.svc"}); err != nil {
				t.Errorf("karmada-metrics-adapter's serving certificate: %v", err)
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
