// Package kwok is what karmada-local asks of a member's kwok: the Node
// objects it simulates (a realistic machine, the member's topology), the
// containers' log and usage, exec where the fleet allows it, and the
// kubelet resource metrics metrics-server reads.
package kwok

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/karmada-go/karmada/internal/estimator"
)

const (
	// NodeAnnotation marks the nodes kwok simulates (kwok's
	// manage-nodes-with-annotation-selector).
	NodeAnnotation = "kwok.x-k8s.io/node"
	// ResourceMetricsPathAnnotation tells metrics-server where a node's
	// kubelet resource metrics are: kwok serves every node's under its own
	// path of one server.
	ResourceMetricsPathAnnotation = "metrics.k8s.io/resource-metrics-path"
	// ManagedNodeLabel marks the nodes karmada-local created, so that it only
	// ever removes its own.
	ManagedNodeLabel = "karmada-local.karmada.io/node-index"
)

// ExecNamespace is the only namespace of a member whose pods accept
// exec: kwok runs an exec's command on this machine (its containers are
// simulated), so the fleet allows it only where one asks for it.
const ExecNamespace = "karmada-local-exec"

// logLines are every simulated container's log.
var logLines = []string{
	"kwok: this container is simulated by kwok; it runs no process and writes no log of its own.",
	"kwok: karmada-local serves these lines as its log (logs through the cluster proxy work).",
}

// LogsText is the log in the container runtime's format, which kwok
// reads: "<time> stdout F <line>".
func LogsText(at time.Time) string {
	var b strings.Builder
	for _, l := range logLines {
		fmt.Fprintf(&b, "%s stdout F %s\n", at.UTC().Format(time.RFC3339Nano), l)
	}
	return b.String()
}

// ResourceMetricsPath is where kwok serves a node's kubelet resource
// metrics (the node's resourceMetricsPathAnnotation).
func ResourceMetricsPath(node string) string { return "/metrics/nodes/" + node + "/metrics/resource" }

// UsageCPUAnnotation and UsageMemoryAnnotation on a member's pod set what
// kwok reports each of its containers uses (kwok's own convention;
// `karmada-local usage set` writes them). Without them a container uses
// 1m cpu and 1Mi.
const (
	UsageCPUAnnotation    = "kwok.x-k8s.io/usage-cpu"
	UsageMemoryAnnotation = "kwok.x-k8s.io/usage-memory"
)

// usageConfig: the emulated usage of every container (from its pod's
// annotations), and the kubelet resource metrics kwok serves from it at
// ResourceMetricsPath, the series metrics-server reads.
var usageConfig = `---
apiVersion: kwok.x-k8s.io/v1alpha1
kind: ClusterResourceUsage
metadata:
  name: karmada-local-usage
spec:
  usages:
  - usage:
      cpu:
        expression: '"` + UsageCPUAnnotation + `" in pod.metadata.annotations ? Quantity(pod.metadata.annotations["` + UsageCPUAnnotation + `"]) : Quantity("1m")'
      memory:
        expression: '"` + UsageMemoryAnnotation + `" in pod.metadata.annotations ? Quantity(pod.metadata.annotations["` + UsageMemoryAnnotation + `"]) : Quantity("1Mi")'
---
apiVersion: kwok.x-k8s.io/v1alpha1
kind: Metric
metadata:
  name: karmada-local-resource-metrics
spec:
  path: "/metrics/nodes/{nodeName}/metrics/resource"
  metrics:
  - {name: scrape_error, dimension: node, kind: gauge, help: "1 when the node's metrics could not be read", value: "0"}
  - {name: node_cpu_usage_seconds_total, dimension: node, kind: counter, help: "cpu time the node's pods used, in core-seconds", value: 'node.CumulativeUsage("cpu")'}
  - {name: node_memory_working_set_bytes, dimension: node, kind: gauge, help: "memory the node's pods use, in bytes", value: 'node.Usage("memory")'}
  - name: container_cpu_usage_seconds_total
    dimension: container
    kind: counter
    help: "cpu time the container used, in core-seconds"
    labels: [{name: container, value: container.name}, {name: namespace, value: pod.metadata.namespace}, {name: pod, value: pod.metadata.name}]
    value: 'pod.CumulativeUsage("cpu", container.name)'
  - name: container_memory_working_set_bytes
    dimension: container
    kind: gauge
    help: "memory the container uses, in bytes"
    labels: [{name: container, value: container.name}, {name: namespace, value: pod.metadata.namespace}, {name: pod, value: pod.metadata.name}]
    value: 'pod.Usage("memory", container.name)'
  - name: container_start_time_seconds
    dimension: container
    kind: gauge
    help: "when the container started, in seconds since the epoch"
    labels: [{name: container, value: container.name}, {name: namespace, value: pod.metadata.namespace}, {name: pod, value: pod.metadata.name}]
    value: 'UnixSecond(pod.status.startTime)'
`

// WriteConfig writes what a member's kwok serves beside its nodes and
// pods (<dir>/kwok.yaml, read from KWOK_WORKDIR): every container's log, a
// fixed text; and exec in the pods of ExecNamespace, run here, as
// nobody when the fleet runs as root (the state directory is not
// nobody's: in /).
func WriteConfig(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	execDir := "/"
	if os.Geteuid() != 0 {
		execDir = dir
	}
	logs := filepath.Join(dir, "container.log")
	if _, err := os.Stat(logs); os.IsNotExist(err) {
		if err := os.WriteFile(logs, []byte(LogsText(time.Now())), 0o644); err != nil {
			return err
		}
	}
	security := ""
	if os.Geteuid() == 0 {
		security = "\n      securityContext: {runAsUser: 65534, runAsGroup: 65534}"
	}
	config := fmt.Sprintf(`apiVersion: kwok.x-k8s.io/v1alpha1
kind: ClusterLogs
metadata:
  name: karmada-local-logs
spec:
  logs:
  - logsFile: %q
    previousLogsFile: %q
---
apiVersion: kwok.x-k8s.io/v1alpha1
kind: ClusterExec
metadata:
  name: karmada-local-exec
spec:
  selector:
    matchNamespaces: [%s]
  execs:
  - local:
      workDir: %q
      envs: [{name: PATH, value: /usr/local/bin:/usr/bin:/bin}]%s
%s`, logs, logs, ExecNamespace, execDir, security, usageConfig)
	return os.WriteFile(filepath.Join(dir, "kwok.yaml"), []byte(config), 0o644)
}

// Topology gives each member (index 1-based) its own region and zones, so
// that placement by region and zone has something to tell apart.
func Topology(index int) (region string, zones []string) {
	regions := []string{"us-east-1", "eu-west-1", "ap-southeast-1", "us-west-2", "eu-central-1", "ap-northeast-1", "sa-east-1", "ca-central-1"}
	region = regions[(index-1)%len(regions)]
	if index > len(regions) {
		region = fmt.Sprintf("%s-%d", region, (index-1)/len(regions)+1)
	}
	for _, z := range []string{"a", "b", "c"} {
		zones = append(zones, region+z)
	}
	return region, zones
}

// Node is the Node object of kwok node i (1-based) of the member of that
// name and index: a
// realistic mid-size machine, labelled with the member's topology.
func Node(member string, index, i int, custom corev1.ResourceList) *corev1.Node {
	region, zones := Topology(index)
	name := fmt.Sprintf("%s-node%d", member, i)
	capacity := NodeCapacity(custom)
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name: name,
			Labels: map[string]string{
				"kubernetes.io/hostname":           name,
				"kubernetes.io/os":                 "linux",
				"kubernetes.io/arch":               "amd64",
				"node.kubernetes.io/instance-type": InstanceType(capacity),
				"topology.kubernetes.io/region":    region,
				"topology.kubernetes.io/zone":      zones[(i-1)%len(zones)],
				"type":                             "kwok",
				ManagedNodeLabel:                   strconv.Itoa(i),
			},
			Annotations: map[string]string{
				NodeAnnotation:                 "fake",
				"node.alpha.kubernetes.io/ttl": "0",
				ResourceMetricsPathAnnotation:  ResourceMetricsPath(name),
			},
		},
		Status: corev1.NodeStatus{
			Capacity:    capacity,
			Allocatable: capacity,
			NodeInfo: corev1.NodeSystemInfo{
				Architecture:    "amd64",
				OperatingSystem: "linux",
				KubeletVersion:  "kwok",
			},
			Phase: corev1.NodeRunning,
		},
	}
}

// NodeCapacity is a kwok node's capacity: a realistic mid-size machine
// (8 cpu, 32Gi, 110 pods), or what --node-capacity says.
func NodeCapacity(custom corev1.ResourceList) corev1.ResourceList {
	capacity := corev1.ResourceList{
		corev1.ResourceCPU:              resource.MustParse("8"),
		corev1.ResourceMemory:           resource.MustParse("32Gi"),
		corev1.ResourcePods:             resource.MustParse("110"),
		corev1.ResourceEphemeralStorage: resource.MustParse("100Gi"),
	}
	for n, q := range custom {
		capacity[n] = q.DeepCopy()
	}
	return capacity
}

// InstanceType names the node size, as kwok.<cpu>c<memory in Gi>g.
func InstanceType(capacity corev1.ResourceList) string {
	mem := capacity[corev1.ResourceMemory]
	return fmt.Sprintf("kwok.%dc%dg", capacity.Cpu().Value(), mem.Value()>>30)
}

// ParseNodeCapacity reads --node-capacity values, MEMBER:RESOURCE=QUANTITY
// [,RESOURCE=QUANTITY...], e.g. member2:cpu=16,memory=64Gi.
func ParseNodeCapacity(values []string) (map[string]corev1.ResourceList, error) {
	if len(values) == 0 {
		return nil, nil
	}
	out := map[string]corev1.ResourceList{}
	for _, v := range values {
		member, list, ok := strings.Cut(v, ":")
		if !ok || member == "" || list == "" {
			return nil, fmt.Errorf("--node-capacity %q: want MEMBER:RESOURCE=QUANTITY[,RESOURCE=QUANTITY], e.g. member2:cpu=16,memory=64Gi", v)
		}
		parsed, err := estimator.ParseResourceList(list)
		if err != nil {
			return nil, fmt.Errorf("--node-capacity %q: %w", v, err)
		}
		if out[member] == nil {
			out[member] = corev1.ResourceList{}
		}
		for name, q := range parsed {
			out[member][name] = q
		}
	}
	return out, nil
}

// EnsureNodes makes the member's kwok nodes 1..count (a node of an earlier
// fleet takes the size, annotation and kubelet endpoint asked for now) and
// removes the managed nodes beyond count; nodes it did not make are left
// alone.
func EnsureNodes(ctx context.Context, kc kubernetes.Interface, member string, index, count int, custom corev1.ResourceList, kubeletPort int32) error {
	for i := 1; i <= count; i++ {
		_, err := kc.CoreV1().Nodes().Create(ctx, Node(member, index, i, custom), metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating node %d of %s: %w", i, member, err)
		}
	}
	existing, err := kc.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: ManagedNodeLabel})
	if err != nil {
		return fmt.Errorf("listing nodes of %s: %w", member, err)
	}
	for _, n := range existing.Items {
		if i, err := strconv.Atoi(n.Labels[ManagedNodeLabel]); err == nil && i > count {
			if err := kc.CoreV1().Nodes().Delete(ctx, n.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
				return fmt.Errorf("removing node %s: %w", n.Name, err)
			}
			continue
		}
		// A node of an earlier fleet takes the size asked for now.
		if want := NodeCapacity(custom); !equality.Semantic.DeepEqual(n.Status.Capacity, want) || !equality.Semantic.DeepEqual(n.Status.Allocatable, want) {
			n.Status.Capacity, n.Status.Allocatable = want, want
			if _, err := kc.CoreV1().Nodes().UpdateStatus(ctx, &n, metav1.UpdateOptions{}); err != nil {
				return fmt.Errorf("resizing node %s: %w", n.Name, err)
			}
			n.Labels["node.kubernetes.io/instance-type"] = InstanceType(want)
			patch := fmt.Appendf(nil, `{"metadata":{"labels":{"node.kubernetes.io/instance-type":%q}}}`, InstanceType(want))
			if _, err := kc.CoreV1().Nodes().Patch(ctx, n.Name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}); err != nil {
				return fmt.Errorf("labelling node %s: %w", n.Name, err)
			}
		}
		// metrics-server scrapes the node's metrics where kwok serves
		// them (a node of an earlier fleet gets the annotation now).
		if n.Annotations[ResourceMetricsPathAnnotation] != ResourceMetricsPath(n.Name) {
			patch := fmt.Appendf(nil, `{"metadata":{"annotations":{%q:%q}}}`, ResourceMetricsPathAnnotation, ResourceMetricsPath(n.Name))
			if _, err := kc.CoreV1().Nodes().Patch(ctx, n.Name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}); err != nil {
				return fmt.Errorf("annotating node %s: %w", n.Name, err)
			}
		}
		// The kubelet API (logs, exec) is kwok's server: kwok writes
		// the port when it initializes a node; a node of an earlier
		// fleet is pointed there now.
		if n.Status.DaemonEndpoints.KubeletEndpoint.Port != kubeletPort {
			patch := fmt.Appendf(nil, `{"status":{"daemonEndpoints":{"kubeletEndpoint":{"Port":%d}}}}`, kubeletPort)
			if _, err := kc.CoreV1().Nodes().Patch(ctx, n.Name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}, "status"); err != nil {
				return fmt.Errorf("pointing node %s's kubelet endpoint at kwok: %w", n.Name, err)
			}
		}
	}
	return nil
}

// NodeReady says whether the node's Ready condition is True.
func NodeReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
