package localup

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/karmada-go/karmada/internal/localup/process"
)

// inotifyLimitPath holds the kernel's limit of inotify instances per user.
var inotifyLimitPath = "/proc/sys/fs/inotify/max_user_instances"

// inotifyPerProcess is how many inotify instances a process of the fleet
// opens to follow its certificate files: a kube-apiserver six (seven for
// the control plane's), the others one at most (counted on a fleet of
// three members).
func inotifyPerProcess(s *process.Step) int {
	if filepath.Base(s.Binary) == "kube-apiserver" {
		return 7
	}
	return 1
}

// inotifyEnough checks, before anything starts, that the processes still
// to start can open their inotify instances: past the limit (128 by
// default, about ten members) a process fails at start with "too many open
// files", which says nothing of the cause. inUse are the instances the
// user's processes hold now.
func inotifyEnough(steps []*process.Step, healthy map[string]bool, inUse int) error {
	raw, err := os.ReadFile(inotifyLimitPath)
	if err != nil {
		return nil // no such limit here
	}
	limit, err := strconv.Atoi(strings.TrimSpace(string(raw)))
	if err != nil {
		return nil
	}
	need := inUse
	for _, s := range steps {
		if s.IsProcess() && !healthy[s.Name] {
			need += inotifyPerProcess(s)
		}
	}
	if need <= limit {
		return nil
	}
	want := 128
	for want < need+need/2 {
		want *= 2
	}
	return fmt.Errorf("the fleet needs about %d inotify instances (%d in use by this user's processes now) and %s allows %d: its processes would fail with \"too many open files\"; raise the limit first (as root: sysctl -w fs.inotify.max_user_instances=%d) or run fewer members",
		need, inUse, inotifyLimitPath, limit, want)
}

// inotifyInUse counts the inotify instances held by the processes of this
// user (a process that cannot be read counts none).
func inotifyInUse() int {
	uid := os.Getuid()
	n := 0
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		info, err := os.Stat(d)
		if err != nil || !ownedBy(info, uid) {
			continue
		}
		fds, _ := os.ReadDir(filepath.Join(d, "fd"))
		for _, fd := range fds {
			if target, err := os.Readlink(filepath.Join(d, "fd", fd.Name())); err == nil && target == "anon_inode:inotify" {
				n++
			}
		}
	}
	return n
}

// ownedBy says whether the file belongs to the user uid.
func ownedBy(info os.FileInfo, uid int) bool {
	st, ok := info.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == uid
}
