package plan

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// KwokExecNamespace is the only namespace of a member whose pods accept
// exec: kwok runs an exec's command on this machine (its containers are
// simulated), so the fleet allows it only where one asks for it.
const KwokExecNamespace = "karmada-local-exec"

// kwokLogLines are every simulated container's log.
var kwokLogLines = []string{
	"kwok: this container is simulated by kwok; it runs no process and writes no log of its own.",
	"kwok: karmada-local serves these lines as its log (logs through the cluster proxy work).",
}

// kwokLogsText is the log in the container runtime's format, which kwok
// reads: "<time> stdout F <line>".
func kwokLogsText(at time.Time) string {
	var b strings.Builder
	for _, l := range kwokLogLines {
		fmt.Fprintf(&b, "%s stdout F %s\n", at.UTC().Format(time.RFC3339Nano), l)
	}
	return b.String()
}

// resourceMetricsPath is where kwok serves a node's kubelet resource
// metrics (the node's resourceMetricsPathAnnotation).
func resourceMetricsPath(node string) string { return "/metrics/nodes/" + node + "/metrics/resource" }

// UsageCPUAnnotation and UsageMemoryAnnotation on a member's pod set what
// kwok reports each of its containers uses (kwok's own convention;
// `karmada-local usage set` writes them). Without them a container uses
// 1m cpu and 1Mi.
const (
	UsageCPUAnnotation    = "kwok.x-k8s.io/usage-cpu"
	UsageMemoryAnnotation = "kwok.x-k8s.io/usage-memory"
)

// kwokUsageConfig: the emulated usage of every container (from its pod's
// annotations), and the kubelet resource metrics kwok serves from it at
// resourceMetricsPath, the series metrics-server reads.
var kwokUsageConfig = `---
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

// writeKwokConfig writes what a member's kwok serves beside its nodes and
// pods (<dir>/kwok.yaml, read from KWOK_WORKDIR): every container's log, a
// fixed text; and exec in the pods of KwokExecNamespace, run here, as
// nobody when the fleet runs as root (the state directory is not
// nobody's: in /).
func writeKwokConfig(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	execDir := "/"
	if os.Geteuid() != 0 {
		execDir = dir
	}
	logs := filepath.Join(dir, "container.log")
	if _, err := os.Stat(logs); os.IsNotExist(err) {
		if err := os.WriteFile(logs, []byte(kwokLogsText(time.Now())), 0o644); err != nil {
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
%s`, logs, logs, KwokExecNamespace, execDir, security, kwokUsageConfig)
	return os.WriteFile(filepath.Join(dir, "kwok.yaml"), []byte(config), 0o644)
}
