package interpreter

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
)

func TestPodRequestsCountsInitContainersAndOverhead(t *testing.T) {
	always := corev1.ContainerRestartPolicyAlways
	req := func(cpu string) corev1.ResourceRequirements {
		return corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}}
	}
	cases := []struct {
		name string
		pod  corev1.PodSpec
		want string
	}{
		{"containers add up", corev1.PodSpec{Containers: []corev1.Container{{Resources: req("1")}, {Resources: req("500m")}}}, "1500m"},
		{"a larger init container wins", corev1.PodSpec{InitContainers: []corev1.Container{{Resources: req("3")}}, Containers: []corev1.Container{{Resources: req("1")}}}, "3"},
		{"a smaller init container does not count", corev1.PodSpec{InitContainers: []corev1.Container{{Resources: req("100m")}}, Containers: []corev1.Container{{Resources: req("1")}}}, "1"},
		{"sidecars add to containers", corev1.PodSpec{InitContainers: []corev1.Container{{Resources: req("200m"), RestartPolicy: &always}}, Containers: []corev1.Container{{Resources: req("1")}}}, "1200m"},
		{"overhead adds", corev1.PodSpec{Containers: []corev1.Container{{Resources: req("1")}}, Overhead: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m")}}, "1250m"},
	}
	for _, c := range cases {
		got := PodRequests(&c.pod)[corev1.ResourceCPU]
		if got.Cmp(resource.MustParse(c.want)) != 0 {
			t.Errorf("%s: cpu = %s, want %s", c.name, got.String(), c.want)
		}
	}
}

// obj parses a YAML object for tests.
func obj(t *testing.T, y string) *unstructured.Unstructured {
	t.Helper()
	j, err := yaml.YAMLToJSON([]byte(y))
	if err != nil {
		t.Fatalf("bad test YAML: %v", err)
	}
	// Decode as the API machinery does (integers as int64).
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(j); err != nil {
		t.Fatalf("bad test object: %v", err)
	}
	return u
}

func TestReplicas(t *testing.T) {
	cases := []struct {
		name     string
		yaml     string
		want     int32
		wantReq  *workv1alpha2.ReplicaRequirements
		noPodReq bool
	}{
		{name: "deployment with requests, selector, tolerations and affinity", yaml: `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec:
  replicas: 4
  template:
    spec:
      priorityClassName: high
      nodeSelector: {disk: ssd}
      tolerations: [{key: gpu, operator: Exists, effect: NoSchedule}]
      affinity:
        nodeAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
            nodeSelectorTerms: [{matchExpressions: [{key: zone, operator: In, values: [a]}]}]
      containers:
      - {name: a, resources: {requests: {cpu: 250m, memory: 64Mi}}}
      - {name: b, resources: {requests: {cpu: 250m}}}
`, want: 4, wantReq: &workv1alpha2.ReplicaRequirements{
			Namespace: "shop", PriorityClassName: "high",
			ResourceRequest: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: resource.MustParse("64Mi")},
			NodeClaim: &workv1alpha2.NodeClaim{
				NodeSelector: map[string]string{"disk": "ssd"},
				Tolerations:  []corev1.Toleration{{Key: "gpu", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}},
				HardNodeAffinity: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{
					{Key: "zone", Operator: corev1.NodeSelectorOpIn, Values: []string{"a"}}}}}},
			},
		}},
		{name: "statefulset without replicas defaults to 1", yaml: `
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db, namespace: shop}
spec: {template: {spec: {containers: [{name: db}]}}}
`, want: 1, wantReq: &workv1alpha2.ReplicaRequirements{Namespace: "shop"}},
		{name: "job: its parallelism, as Karmada's", yaml: `
apiVersion: batch/v1
kind: Job
metadata: {name: j, namespace: shop}
spec: {parallelism: 5, completions: 3, template: {spec: {containers: [{name: c}]}}}
`, want: 5, wantReq: &workv1alpha2.ReplicaRequirements{Namespace: "shop"}},
		{name: "pod is one replica of itself", yaml: `
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: shop}
spec: {containers: [{name: c, resources: {requests: {cpu: "1"}}}]}
`, want: 1, wantReq: &workv1alpha2.ReplicaRequirements{Namespace: "shop", ResourceRequest: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}},
		{name: "configmap has no replicas", yaml: `
apiVersion: v1
kind: ConfigMap
metadata: {name: c, namespace: shop}
data: {a: b}
`, want: 0, noPodReq: true},
	}
	for _, c := range cases {
		got, req, err := Default.Replicas(obj(t, c.yaml))
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if got != c.want {
			t.Errorf("%s: replicas %d, want %d", c.name, got, c.want)
		}
		if c.noPodReq {
			if req != nil {
				t.Errorf("%s: requirements %+v, want none", c.name, req)
			}
			continue
		}
		if diff := cmp.Diff(c.wantReq, req); diff != "" {
			t.Errorf("%s: requirements (-want,+got):\n%s", c.name, diff)
		}
	}
}

func TestReviseReplicas(t *testing.T) {
	cases := []struct {
		name, yaml string
		replicas   int32
		paths      map[string]int64 // dotted path -> value; absent -> -1
	}{
		{"deployment", `{apiVersion: apps/v1, kind: Deployment, metadata: {name: d}, spec: {replicas: 10}}`, 3, map[string]int64{"spec.replicas": 3}},
		{"statefulset", `{apiVersion: apps/v1, kind: StatefulSet, metadata: {name: s}, spec: {replicas: 10}}`, 0, map[string]int64{"spec.replicas": 0}},
		{"job: parallelism only", `{apiVersion: batch/v1, kind: Job, metadata: {name: j}, spec: {parallelism: 4, completions: 4}}`, 2, map[string]int64{"spec.parallelism": 2, "spec.completions": 4}},
		{"job without completions", `{apiVersion: batch/v1, kind: Job, metadata: {name: j}, spec: {parallelism: 4}}`, 2, map[string]int64{"spec.parallelism": 2, "spec.completions": -1}},
		{"configmap untouched", `{apiVersion: v1, kind: ConfigMap, metadata: {name: c}, data: {replicas: "9"}}`, 2, map[string]int64{"spec.replicas": -1}},
	}
	for _, c := range cases {
		in := obj(t, c.yaml)
		before := in.DeepCopy()
		out, err := Default.ReviseReplicas(in, c.replicas)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if !equality.Semantic.DeepEqual(in, before) {
			t.Errorf("%s: the input was modified", c.name)
		}
		for path, want := range c.paths {
			got, found, _ := unstructured.NestedInt64(out.Object, strings.Split(path, ".")...)
			if want == -1 {
				if found {
					t.Errorf("%s: %s set to %d, want absent", c.name, path, got)
				}
				continue
			}
			if !found || got != want {
				t.Errorf("%s: %s = %d (found %v), want %d", c.name, path, got, found, want)
			}
		}
	}
}

// A pod's requests are written as Karmada writes them into replica
// requirements: cpu in millicores, memory in whole bytes (binary), whole
// units of countable resources, zero left out.
func TestKarmadaForm(t *testing.T) {
	in := corev1.ResourceList{
		corev1.ResourceCPU:              resource.MustParse("0.5"),
		corev1.ResourceMemory:           resource.MustParse("1.4Gi"),
		corev1.ResourceEphemeralStorage: resource.MustParse("2Gi"),
		"nvidia.com/gpu":                resource.MustParse("1"),
		"hugepages-2Mi":                 resource.MustParse("4Mi"),
		corev1.ResourcePods:             resource.MustParse("0"),
		"not-countable":                 resource.MustParse("3"),
	}
	got := map[string]string{}
	for n, q := range KarmadaForm(in) {
		got[string(n)] = q.String()
	}
	want := map[string]string{"cpu": "500m", "memory": "1503238554", "ephemeral-storage": "2Gi", "nvidia.com/gpu": "1", "hugepages-2Mi": "4Mi"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("(-want,+got)\n%s", d)
	}
}
