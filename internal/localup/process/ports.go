package process

import (
	"context"
	"fmt"
	"net"
	"slices"
	"time"

	"github.com/prometheus/procfs"
)

// PortInUseError says a port the fleet needs is taken, and by whom if known.
type PortInUseError struct {
	Port      int
	Component string
	PID       int
	Command   string
}

func (e *PortInUseError) Error() string {
	who := "another process"
	if e.PID > 0 {
		who = fmt.Sprintf("pid %d (%s)", e.PID, e.Command)
	}
	return fmt.Sprintf("port %d needed by %s is in use by %s: stop that process, or choose other ports with --port-base", e.Port, e.Component, who)
}

// CheckPortFree returns a *PortInUseError when nothing can listen on
// 127.0.0.1:port.
func CheckPortFree(port int, component string) error {
	l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
	if err == nil {
		return l.Close()
	}
	e := &PortInUseError{Port: port, Component: component}
	if pid := ListenerPID(port); pid > 0 {
		e.PID = pid
		if p, err := procfs.NewProc(pid); err == nil {
			e.Command, _ = p.Comm()
		}
	}
	return e
}

// tcpListen is the state of a listening socket in /proc/net/tcp.
const tcpListen = 0x0A

// ListenerPID finds the process listening on a TCP port through /proc, or 0.
func ListenerPID(port int) int {
	fs, err := procfs.NewDefaultFS()
	if err != nil {
		return 0
	}
	inodes := map[string]bool{}
	for _, table := range []func() (procfs.NetTCP, error){fs.NetTCP, fs.NetTCP6} {
		lines, err := table()
		if err != nil {
			continue
		}
		for _, l := range lines {
			if l.St == tcpListen && l.LocalPort == uint64(port) {
				inodes[fmt.Sprintf("socket:[%d]", l.Inode)] = true
			}
		}
	}
	if len(inodes) == 0 {
		return 0
	}
	procs, err := fs.AllProcs()
	if err != nil {
		return 0
	}
	for _, p := range procs {
		targets, err := p.FileDescriptorTargets()
		if err != nil {
			continue
		}
		if slices.ContainsFunc(targets, func(t string) bool { return inodes[t] }) {
			return p.PID
		}
	}
	return 0
}

// EphemeralRange reads the kernel's range of ports handed out to outgoing
// connections.
func EphemeralRange() (lo, hi int, err error) {
	fs, err := procfs.NewDefaultFS()
	if err != nil {
		return 0, 0, err
	}
	r, err := fs.SysctlInts("net.ipv4.ip_local_port_range")
	if err != nil {
		return 0, 0, err
	}
	if len(r) != 2 {
		return 0, 0, fmt.Errorf("ip_local_port_range holds %v, want two ports", r)
	}
	return r[0], r[1], nil
}

// CheckOutsideEphemeral refuses a port block that overlaps the ephemeral
// range: any outgoing connection could take one of its ports just before a
// component binds it, and the fleet would fail to start at random.
func CheckOutsideEphemeral(first, last int) error {
	lo, hi, err := EphemeralRange()
	if err != nil {
		return nil // not Linux, or unreadable: nothing to check against
	}
	if last < lo || first > hi {
		return nil
	}
	return fmt.Errorf("--port-base: the fleet's ports %d-%d overlap the kernel's ephemeral port range %d-%d, which outgoing connections take at random; choose a --port-base so that the fleet stays below %d", first, last, lo, hi, lo)
}

// WaitPortFree is checkPortFree, tried again for up to timeout: a process
// just stopped can hold its ports a moment after it looks gone (its main
// thread exits before the others, which still hold the sockets).
func WaitPortFree(ctx context.Context, port int, component string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		err := CheckPortFree(port, component)
		if err == nil || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(100 * time.Millisecond):
		}
	}
}
