package leaderfence

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

// fakeLock is a resource lock whose writes fail when err is set.
type fakeLock struct {
	resourcelock.Interface
	err error
}

func (f *fakeLock) Create(context.Context, resourcelock.LeaderElectionRecord) error { return f.err }
func (f *fakeLock) Update(context.Context, resourcelock.LeaderElectionRecord) error { return f.err }
func (f *fakeLock) Identity() string                                                { return "me" }

// clocked is a fence whose clock the test moves.
func clocked() (*Fence, *time.Duration) {
	f := New()
	var now time.Duration
	f.now = func() time.Duration { return now }
	return f, &now
}

func TestFenceFollowsRenewals(t *testing.T) {
	f, now := clocked()
	if err := f.Check(); err != nil {
		t.Fatalf("a process without an election is fenced: %v", err)
	}
	f.Enable(10 * time.Second)
	if err := f.Check(); err == nil || !strings.Contains(err.Error(), "does not hold") {
		t.Fatalf("before the first renewal: %v, want refused", err)
	}
	fl := &fakeLock{}
	l := f.Lock(fl)
	ctx := context.Background()
	*now = 5 * time.Second
	if err := l.Create(ctx, resourcelock.LeaderElectionRecord{HolderIdentity: "me"}); err != nil {
		t.Fatal(err)
	}
	*now = 14 * time.Second
	if err := f.Check(); err != nil {
		t.Errorf("9 s after the renewal was sent (deadline 10 s): %v", err)
	}
	// Paused past the deadline: the first write after it is refused,
	// whatever the elector believes.
	*now = 15 * time.Second
	if err := f.Check(); err == nil || !strings.Contains(err.Error(), "last renewed 10s ago") {
		t.Errorf("10 s after: %v, want refused naming the time", err)
	}
	// A failed renewal changes nothing; a successful one opens it again.
	fl.err = errors.New("conflict")
	_ = l.Update(ctx, resourcelock.LeaderElectionRecord{HolderIdentity: "me"})
	if f.Check() == nil {
		t.Error("a failed renewal opened the fence")
	}
	fl.err = nil
	if err := l.Update(ctx, resourcelock.LeaderElectionRecord{HolderIdentity: "me"}); err != nil {
		t.Fatal(err)
	}
	if err := f.Check(); err != nil {
		t.Errorf("after a renewal: %v", err)
	}
	// Releasing the lease (ReleaseOnCancel writes an empty holder) closes it.
	if err := l.Update(ctx, resourcelock.LeaderElectionRecord{HolderIdentity: ""}); err != nil {
		t.Fatal(err)
	}
	if f.Check() == nil {
		t.Error("the fence is open after the lease was released")
	}
}

func TestFencedRequests(t *testing.T) {
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}))
	defer server.Close()
	f, _ := clocked()
	f.Enable(time.Second)
	c := &http.Client{Transport: f.Wrap(http.DefaultTransport)}
	for _, tc := range []struct {
		method, path string
		passes       bool
	}{
		{http.MethodGet, "/api/v1/namespaces/a/configmaps", true},
		{http.MethodPost, "/api/v1/namespaces/a/configmaps", false},
		{http.MethodPut, "/apis/work.karmada.io/v1alpha1/namespaces/karmada-es-m/works/w", false},
		{http.MethodPatch, "/apis/apps/v1/namespaces/a/deployments/d", false},
		{http.MethodDelete, "/apis/apps/v1/namespaces/a/deployments/d", false},
		// The lease's own renewals, and /metrics authentication.
		{http.MethodPut, "/apis/coordination.k8s.io/v1/namespaces/karmada-system/leases/karmada-scheduler", true},
		{http.MethodPost, "/apis/authentication.k8s.io/v1/tokenreviews", true},
		{http.MethodPost, "/apis/authorization.k8s.io/v1/subjectaccessreviews", true},
	} {
		req, _ := http.NewRequest(tc.method, server.URL+tc.path, nil)
		resp, err := c.Do(req)
		if resp != nil {
			resp.Body.Close()
		}
		if (err == nil) != tc.passes {
			t.Errorf("%s %s: err %v, want passing %t", tc.method, tc.path, err, tc.passes)
		}
	}
}
