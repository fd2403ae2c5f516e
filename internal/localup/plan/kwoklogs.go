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
`, logs, logs, KwokExecNamespace, execDir, security)
	return os.WriteFile(filepath.Join(dir, "kwok.yaml"), []byte(config), 0o644)
}
