package process

// What makes `up` restart a healthy process: it no longer runs what the
// plan says. A process runs a binary and arguments; after an upgrade (make
// build, another --bin-dir) or a change of flags, the recorded process runs
// the old ones. The kernel tells both, whatever build started the process:
// /proc/<pid>/cmdline holds its arguments, and /proc/<pid>/exe the file it
// runs, whose inode a rebuilt binary no longer has (a running executable
// cannot be written in place, so a new build is a new file).

import (
	"fmt"
	"os"
	"strings"
	"syscall"
)

// Drift says how a running process differs from its step, or "" when it
// runs the step's binary with the step's arguments and environment.
func Drift(s *Step, pid int) string {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		return ""
	}
	args := strings.Split(strings.TrimSuffix(string(raw), "\x00"), "\x00")
	if len(args) == 0 {
		return ""
	}
	if d := argsDrift(args[1:], s.Args); d != "" {
		return d
	}
	var running, planned syscall.Stat_t
	if syscall.Stat(fmt.Sprintf("/proc/%d/exe", pid), &running) == nil && syscall.Stat(s.Binary, &planned) == nil &&
		(running.Dev != planned.Dev || running.Ino != planned.Ino) {
		return "its binary " + s.Binary + " changed (rebuilt, or another --bin-dir)"
	}
	if len(s.Env) > 0 {
		env, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
		if err == nil {
			have := map[string]bool{}
			for _, kv := range strings.Split(string(env), "\x00") {
				have[kv] = true
			}
			for _, kv := range s.Env {
				if !have[kv] {
					return "its environment lacks " + kv
				}
			}
		}
	}
	return ""
}

// argsDrift names the first difference between the arguments a process
// runs with and the planned ones.
func argsDrift(running, planned []string) string {
	have := map[string]bool{}
	for _, a := range running {
		have[a] = true
	}
	want := map[string]bool{}
	for _, a := range planned {
		want[a] = true
		if !have[a] {
			return "its flags changed (now " + a + ")"
		}
	}
	for _, a := range running {
		if !want[a] {
			return "its flags changed (no longer " + a + ")"
		}
	}
	if len(running) != len(planned) {
		return "its flags changed"
	}
	return ""
}
