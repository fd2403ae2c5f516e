package process

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"
)

// Step is one entry of the fleet plan: either a process to run (Binary set) or
// a task to perform once its dependencies are ready (Run set). Adding a
// component to the fleet means adding one Step to the plan.
type Step struct {
	// Name is unique in the plan, "<cluster>/<component>".
	Name string
	// Cluster groups steps for `member stop/start`.
	Cluster string
	// After lists the steps that must be ready first.
	After []string

	// Binary is the executable's path, for a process step.
	Binary string
	Args   []string
	Env    []string
	// Ports the process listens on; they must be free before it starts.
	Ports []int
	// Probe tells when the process is ready and, later, healthy.
	Probe *Probe
	// Leader, when set, tells whether the process leads its election
	// (status shows it).
	Leader *LeaderProbe
	// ReadyTimeout bounds the wait for the probe after start.
	ReadyTimeout time.Duration

	// RestartToRenew: the process reads its serving certificate only when
	// it starts, so `certs renew` restarts it (it must keep no state).
	RestartToRenew bool
	// Run performs a task step. It must be idempotent.
	Run func(ctx context.Context) error
}

func (s *Step) IsProcess() bool { return s.Binary != "" }

// Probe is an HTTP(S) health endpoint, or a check of another kind.
type Probe struct {
	URL string
	// TLS is nil for plain HTTP.
	TLS *tls.Config
	// Func, when set, is the check instead of URL (a process that serves
	// no HTTP, such as containerd).
	Func func(ctx context.Context) error
}

// Check returns nil when the endpoint answers 200 within two seconds.
func (p *Probe) Check(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	if p.Func != nil {
		return p.Func(ctx)
	}
	_, err := Get(ctx, p.URL, p.TLS, 512)
	return err
}

// Get reads up to limit bytes of url's body over a connection of its own,
// or says what answered other than 200.
func Get(ctx context.Context, url string, tlsConfig *tls.Config, limit int64) ([]byte, error) {
	tr := &http.Transport{TLSClientConfig: tlsConfig, DisableKeepAlives: true}
	defer tr.CloseIdleConnections()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, limit))
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s answered %d: %.512s", url, resp.StatusCode, body)
	}
	return body, err
}

// RunDAG runs do for every step once all of the step's dependencies have
// finished, as many in parallel as the graph allows. The first error cancels
// the rest and is returned. Dependencies outside steps are assumed satisfied.
func RunDAG(ctx context.Context, steps []*Step, do func(ctx context.Context, s *Step) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(map[string]chan struct{}, len(steps))
	for _, s := range steps {
		if _, dup := done[s.Name]; dup {
			return fmt.Errorf("plan has two steps named %s", s.Name)
		}
		done[s.Name] = make(chan struct{})
	}
	if err := checkAcyclic(steps); err != nil {
		return err
	}
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		firstErr error
	)
	for _, s := range steps {
		wg.Add(1)
		go func(s *Step) {
			defer wg.Done()
			for _, dep := range s.After {
				ch, ok := done[dep]
				if !ok {
					continue
				}
				select {
				case <-ch:
				case <-ctx.Done():
					return
				}
			}
			if err := do(ctx, s); err != nil {
				mu.Lock()
				if firstErr == nil {
					firstErr = err
				}
				mu.Unlock()
				cancel()
				return
			}
			close(done[s.Name])
		}(s)
	}
	wg.Wait()
	if firstErr == nil && ctx.Err() != nil {
		// The parent context ended before every step ran.
		return errors.Join(errors.New("interrupted before the fleet was ready"), ctx.Err())
	}
	return firstErr
}

// checkAcyclic rejects plans whose dependencies form a cycle, which would
// otherwise hang runDAG.
func checkAcyclic(steps []*Step) error {
	byName := make(map[string]*Step, len(steps))
	for _, s := range steps {
		byName[s.Name] = s
	}
	const (
		unvisited = iota
		visiting
		visited
	)
	state := map[string]int{}
	var visit func(name string) error
	visit = func(name string) error {
		switch state[name] {
		case visiting:
			return fmt.Errorf("plan has a dependency cycle through %s", name)
		case visited:
			return nil
		}
		state[name] = visiting
		if s, ok := byName[name]; ok {
			for _, dep := range s.After {
				if err := visit(dep); err != nil {
					return err
				}
			}
		}
		state[name] = visited
		return nil
	}
	for _, s := range steps {
		if err := visit(s.Name); err != nil {
			return err
		}
	}
	return nil
}
