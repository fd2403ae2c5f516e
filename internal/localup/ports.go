package localup

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
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

// checkPortFree returns a *PortInUseError when nothing can listen on
// 127.0.0.1:port.
func checkPortFree(port int, component string) error {
	l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
	if err == nil {
		return l.Close()
	}
	e := &PortInUseError{Port: port, Component: component}
	if pid := listenerPID(port); pid > 0 {
		e.PID = pid
		if comm, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid)); err == nil {
			e.Command = strings.TrimSpace(string(comm))
		}
	}
	return e
}

// listenerPID finds the process listening on a TCP port through /proc, or 0.
func listenerPID(port int) int {
	inodes := map[string]bool{}
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		f, err := os.Open(table)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		sc.Scan() // header
		for sc.Scan() {
			fields := strings.Fields(sc.Text())
			if len(fields) < 10 || fields[3] != "0A" { // 0A: LISTEN
				continue
			}
			local := fields[1]
			i := strings.LastIndexByte(local, ':')
			p, err := strconv.ParseInt(local[i+1:], 16, 32)
			if err == nil && int(p) == port {
				inodes[fields[9]] = true
			}
		}
		f.Close()
	}
	if len(inodes) == 0 {
		return 0
	}
	procs, _ := filepath.Glob("/proc/[0-9]*/fd/*")
	for _, fd := range procs {
		target, err := os.Readlink(fd)
		if err != nil || !strings.HasPrefix(target, "socket:[") {
			continue
		}
		if inodes[strings.TrimSuffix(strings.TrimPrefix(target, "socket:["), "]")] {
			pid, _ := strconv.Atoi(strings.Split(fd, "/")[2])
			return pid
		}
	}
	return 0
}

// ephemeralRange reads the kernel's range of ports handed out to outgoing
// connections.
func ephemeralRange() (lo, hi int, err error) {
	data, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 0, 0, err
	}
	if _, err := fmt.Sscanf(string(data), "%d %d", &lo, &hi); err != nil {
		return 0, 0, fmt.Errorf("parsing ip_local_port_range %q: %w", strings.TrimSpace(string(data)), err)
	}
	return lo, hi, nil
}

// checkOutsideEphemeral refuses a port block that overlaps the ephemeral
// range: any outgoing connection could take one of its ports just before a
// component binds it, and the fleet would fail to start at random.
func checkOutsideEphemeral(first, last int) error {
	lo, hi, err := ephemeralRange()
	if err != nil {
		return nil // not Linux, or unreadable: nothing to check against
	}
	if last < lo || first > hi {
		return nil
	}
	return fmt.Errorf("--port-base: the fleet's ports %d-%d overlap the kernel's ephemeral port range %d-%d, which outgoing connections take at random; choose a --port-base so that the fleet stays below %d", first, last, lo, hi, lo)
}

// waitPortFree is checkPortFree, tried again for up to timeout: a process
// just stopped can hold its ports a moment after it looks gone (its main
// thread exits before the others, which still hold the sockets).
func waitPortFree(ctx context.Context, port int, component string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		err := checkPortFree(port, component)
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
