package clusterclient

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
)

// secretReader serves one credentials Secret and counts the reads.
type secretReader struct {
	token string
	reads int
}

func (r *secretReader) Get(_ context.Context, _ client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	r.reads++
	s := obj.(*corev1.Secret)
	s.Data = map[string][]byte{SecretTokenKey: []byte(r.token), SecretCABundleKey: []byte("ca")}
	return nil
}

func (r *secretReader) List(context.Context, client.ObjectList, ...client.ListOption) error {
	return nil
}

func TestGetReusesClientsAndRereadsOnClusterChange(t *testing.T) {
	var seen atomic.Value // the Authorization header of the last request
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		seen.Store(req.Header.Get("Authorization"))
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"major":"1","minor":"33","gitVersion":"v1.33.0"}`))
	}))
	defer srv.Close()
	r := &secretReader{token: "t1"}
	c := NewCache(r, Options{})
	cl := &clusterv1alpha1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: "m1", ResourceVersion: "1", Generation: 1},
		Spec:       clusterv1alpha1.ClusterSpec{APIEndpoint: srv.URL, InsecureSkipTLSVerification: true, SecretRef: &clusterv1alpha1.LocalSecretReference{Namespace: "karmada-cluster", Name: "m1"}},
	}
	first, err := c.Get(context.Background(), cl)
	if err != nil {
		t.Fatal(err)
	}
	sends := func(m *Member, want string) {
		t.Helper()
		if _, err := m.Kube.Discovery().ServerVersion(); err != nil {
			t.Fatal(err)
		}
		if got := seen.Load(); got != "Bearer "+want {
			t.Errorf("the member was sent %q, want the token %q", got, want)
		}
	}
	sends(first, "t1")
	for i := 0; i < 5; i++ {
		m, err := c.Get(context.Background(), cl)
		if err != nil || m != first {
			t.Fatalf("call %d: got other clients (%v)", i, err)
		}
	}
	// A status update (new resourceVersion, same generation) is not a
	// change of the connection.
	cl.ResourceVersion = "2"
	if m, err := c.Get(context.Background(), cl); err != nil || m != first {
		t.Fatalf("a status update gave other clients (%v)", err)
	}
	if r.reads != 1 {
		t.Fatalf("credentials read %d times for 7 calls on an unchanged cluster spec, want 1", r.reads)
	}
	// A changed spec re-reads the credentials; a renewed token is sent
	// from then on, by the same clients.
	r.token = "t2"
	cl.ResourceVersion, cl.Generation = "3", 2
	m, err := c.Get(context.Background(), cl)
	if err != nil {
		t.Fatal(err)
	}
	if r.reads != 2 || m != first {
		t.Fatalf("reads %d, same clients %v: want a re-read and the same clients", r.reads, m == first)
	}
	sends(m, "t2")
	// Another endpoint is another connection.
	cl.Spec.APIEndpoint = strings.Replace(srv.URL, "127.0.0.1", "localhost", 1)
	cl.Generation = 3
	if m, err := c.Get(context.Background(), cl); err != nil || m == first {
		t.Fatalf("a new endpoint kept the clients (err %v)", err)
	}
}

func TestManagedInformersStopWhenUnused(t *testing.T) {
	deploy := schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	cms := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	scheme := runtime.NewScheme()
	dc := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(scheme, map[schema.GroupVersionResource]string{
		deploy: "DeploymentList", cms: "ConfigMapList",
	})
	m := &Member{Name: "m1", Dynamic: dc, stop: make(chan struct{})}
	defer m.close()
	a := types.NamespacedName{Namespace: "karmada-es-m1", Name: "a"}
	b := types.NamespacedName{Namespace: "karmada-es-m1", Name: "b"}
	noop := func(types.NamespacedName) {}

	m.Managed(deploy, a, noop)
	m.Managed(deploy, b, noop)
	m.Managed(cms, b, noop)
	if got := len(m.ManagedTypes()); got != 2 {
		t.Fatalf("%d types watched, want 2", got)
	}
	// b now only has a Deployment: the ConfigMap informer has no user left.
	m.Retain(b, deploy)
	if got := m.ManagedTypes(); len(got) != 1 || got[0] != deploy {
		t.Fatalf("watched %v, want only deployments", got)
	}
	// a goes; b still needs Deployments.
	m.Retain(a)
	if got := len(m.ManagedTypes()); got != 1 {
		t.Fatalf("%d types watched after a went, want 1", got)
	}
	m.Retain(b)
	if got := len(m.ManagedTypes()); got != 0 {
		t.Fatalf("%d types watched with no Work left, want 0", got)
	}
	// Asked for again, the type is watched again and its cache fills.
	lister, _ := m.Managed(cms, a, noop)
	if err := wait.PollUntilContextTimeout(context.Background(), 10*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		_, synced := m.Managed(cms, a, noop)
		return synced, nil
	}); err != nil {
		t.Fatal("a restarted informer never synced")
	}
	if _, err := lister.List(labels.Everything()); err != nil {
		t.Fatal(err)
	}
}

// A Cluster whose secretRef leaves karmada-cluster gets no client: its token
// is not even read.
func TestRESTConfigReadsCredentialsFromKarmadaClusterOnly(t *testing.T) {
	r := &secretReader{token: "t1"}
	cl := &clusterv1alpha1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: "m1"},
		Spec:       clusterv1alpha1.ClusterSpec{APIEndpoint: "https://attacker.example:443", SecretRef: &clusterv1alpha1.LocalSecretReference{Namespace: "default", Name: "someones-token"}},
	}
	_, err := RESTConfig(context.Background(), r, cl, Options{})
	if err == nil || r.reads != 0 {
		t.Fatalf("err %v, %d reads: want a refusal before any read", err, r.reads)
	}
	if want := `spec.secretRef names a Secret in "default"; member credentials are read from "karmada-cluster" only`; !strings.Contains(err.Error(), want) {
		t.Fatalf("error %q lacks %q", err, want)
	}
}

// resetCounter is a RESTMapper that counts its resets.
type resetCounter struct {
	meta.RESTMapper
	resets int
}

func (r *resetCounter) Reset() { r.resets++ }

// Many Works missing a kind share one discovery refresh a second.
func TestRefreshDiscoveryIsSpaced(t *testing.T) {
	rc := &resetCounter{}
	m := &Member{Name: "m1", Mapper: rc}
	refreshed := 0
	for i := 0; i < 100; i++ {
		if m.RefreshDiscovery() {
			refreshed++
		}
	}
	if refreshed != 1 || rc.resets != 1 {
		t.Fatalf("100 calls refreshed %d times (%d resets), want 1", refreshed, rc.resets)
	}
	m.refreshedAt = time.Now().Add(-2 * minDiscoveryRefresh)
	if !m.RefreshDiscovery() || rc.resets != 2 {
		t.Fatalf("no refresh a second later (%d resets)", rc.resets)
	}
}

func TestKarmadaKey(t *testing.T) {
	for key, want := range map[string]bool{
		"karmada.io/managed": true, "work.karmada.io/name": true, "resourcebinding.karmada.io/permanent-id": true,
		"app": false, "example.com/karmada.io": false, "notkarmada.io/x": false, "team": false,
	} {
		if KarmadaKey(key) != want {
			t.Errorf("KarmadaKey(%q) = %v", key, !want)
		}
	}
}

// blockingReader is a secretReader whose reads wait for release.
type blockingReader struct {
	secretReader
	mu      sync.Mutex
	started chan struct{}
	release chan struct{}
}

func (r *blockingReader) Get(_ context.Context, _ client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	r.mu.Lock()
	r.reads++
	first := r.started
	r.started = nil
	r.mu.Unlock()
	if first != nil {
		// The first read of a round waits; later ones do not.
		close(first)
		<-r.release
	}
	obj.(*corev1.Secret).Data = map[string][]byte{SecretTokenKey: []byte(r.token), SecretCABundleKey: []byte("ca")}
	return nil
}

func (r *blockingReader) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.reads
}

// When the credentials are due to be read again, many workers asking at
// once cause one read; the others keep the clients they have meanwhile.
func TestRevalidationReadsOnceForConcurrentCallers(t *testing.T) {
	r := &blockingReader{secretReader: secretReader{token: "t1"}}
	c := NewCache(r, Options{})
	cl := &clusterv1alpha1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: "m1", Generation: 1},
		Spec:       clusterv1alpha1.ClusterSpec{APIEndpoint: "https://127.0.0.1:1", InsecureSkipTLSVerification: true, SecretRef: &clusterv1alpha1.LocalSecretReference{Namespace: "karmada-cluster", Name: "m1"}},
	}
	first, err := c.Get(context.Background(), cl)
	if err != nil {
		t.Fatal(err)
	}
	c.mu.Lock()
	first.checked = time.Now().Add(-2 * revalidateAfter)
	c.mu.Unlock()
	r.started, r.release = make(chan struct{}), make(chan struct{})
	started := r.started
	done := make(chan error, 1)
	go func() {
		_, err := c.Get(context.Background(), cl)
		done <- err
	}()
	<-started // one caller is reading the Secret
	for i := 0; i < 20; i++ {
		m, err := c.Get(context.Background(), cl)
		if err != nil || m != first {
			t.Fatalf("call %d during the re-read: err %v, same clients %v", i, err, m == first)
		}
	}
	close(r.release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if n := r.count(); n != 2 {
		t.Fatalf("credentials read %d times, want 2 (the first use and one re-read for 21 callers)", n)
	}
	// The re-read counts: the next call within revalidateAfter reads nothing.
	if _, err := c.Get(context.Background(), cl); err != nil || r.count() != 2 {
		t.Fatalf("err %v, reads %d after the re-read", err, r.count())
	}
}

// countingMapper counts the mapper's lookups and resets.
type countingMapper struct {
	meta.RESTMapper
	calls, resets int
}

func (c *countingMapper) RESTMapping(gk schema.GroupKind, versions ...string) (*meta.RESTMapping, error) {
	c.calls++
	return c.RESTMapper.RESTMapping(gk, versions...)
}

func (c *countingMapper) Reset() { c.resets++ }

// A kind's mapping is looked up once until a reset; what is not found is
// looked up every time.
func TestMappingCache(t *testing.T) {
	dm := meta.NewDefaultRESTMapper([]schema.GroupVersion{{Group: "apps", Version: "v1"}})
	deploy := schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}
	dm.Add(deploy, meta.RESTScopeNamespace)
	inner := &countingMapper{RESTMapper: dm}
	c := newMappingCache(inner)
	for i := 0; i < 3; i++ {
		m, err := c.RESTMapping(deploy.GroupKind(), "v1")
		if err != nil {
			t.Fatal(err)
		}
		if m.Resource.Resource != "deployments" {
			t.Fatalf("mapped to %v", m.Resource)
		}
	}
	if inner.calls != 1 {
		t.Errorf("%d lookups for three calls, want 1", inner.calls)
	}
	for i := 0; i < 2; i++ {
		if _, err := c.RESTMapping(schema.GroupKind{Group: "example.io", Kind: "Missing"}, "v1"); !meta.IsNoMatchError(err) {
			t.Fatalf("unknown kind: %v, want a no-match error", err)
		}
	}
	if inner.calls != 3 {
		t.Errorf("%d lookups after two misses, want 3 (misses are not cached)", inner.calls)
	}
	c.Reset()
	if _, err := c.RESTMapping(deploy.GroupKind(), "v1"); err != nil {
		t.Fatal(err)
	}
	if inner.calls != 4 || inner.resets != 1 {
		t.Errorf("after a reset: %d lookups and %d resets, want 4 and 1", inner.calls, inner.resets)
	}
	// Without exactly one version the mapper is asked every time.
	if _, err := c.RESTMapping(deploy.GroupKind()); err != nil {
		t.Fatal(err)
	}
	if inner.calls != 5 {
		t.Errorf("%d lookups, want 5", inner.calls)
	}
}

// After RestartNodesAndPods the summaries' informers list the member again,
// instead of waiting for a watch that failed to be retried.
func TestRestartNodesAndPodsListsAgain(t *testing.T) {
	var nodes, nodeLists atomic.Int32
	nodes.Store(1)
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.URL.Query().Get("watch") == "true" {
			<-req.Context().Done() // a watch that never sends anything
			return
		}
		w.Header().Set("Content-Type", "application/json")
		switch req.URL.Path {
		case "/api/v1/nodes":
			nodeLists.Add(1)
			items := []string{}
			for i := range nodes.Load() {
				items = append(items, `{"metadata":{"name":"n`+string(rune('0'+i))+`","resourceVersion":"1"}}`)
			}
			_, _ = w.Write([]byte(`{"kind":"NodeList","apiVersion":"v1","metadata":{"resourceVersion":"1"},"items":[` + strings.Join(items, ",") + `]}`))
		case "/api/v1/pods":
			_, _ = w.Write([]byte(`{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"1"},"items":[]}`))
		default:
			http.NotFound(w, req)
		}
	}))
	defer srv.Close()
	c := NewCache(&secretReader{token: "t"}, Options{})
	defer c.Close()
	m, err := c.Get(context.Background(), &clusterv1alpha1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: "m1", Generation: 1},
		Spec:       clusterv1alpha1.ClusterSpec{APIEndpoint: srv.URL, InsecureSkipTLSVerification: true, SecretRef: &clusterv1alpha1.LocalSecretReference{Namespace: "karmada-cluster", Name: "m1"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	countNodes := func() int {
		t.Helper()
		var n int
		if err := wait.PollUntilContextTimeout(context.Background(), 10*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
			lister, _, synced := m.NodesAndPods()
			if !synced {
				return false, nil
			}
			list, err := lister.List(labels.Everything())
			n = len(list)
			return err == nil, err
		}); err != nil {
			t.Fatalf("the node and pod informers never synced: %v", err)
		}
		return n
	}
	if got := countNodes(); got != 1 || nodeLists.Load() != 1 {
		t.Fatalf("%d nodes after %d lists, want 1 after 1", got, nodeLists.Load())
	}
	nodes.Store(3) // the watch tells nothing of it
	if got := countNodes(); got != 1 || nodeLists.Load() != 1 {
		t.Fatalf("%d nodes after %d lists with a silent watch, want the cached 1 after 1", got, nodeLists.Load())
	}
	m.RestartNodesAndPods()
	if got := countNodes(); got != 3 || nodeLists.Load() != 2 {
		t.Fatalf("%d nodes after %d lists once restarted, want 3 after 2", got, nodeLists.Load())
	}
}
