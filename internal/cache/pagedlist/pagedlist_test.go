package pagedlist_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	crcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/karmada-go/karmada/internal/cache/pagedlist"
	"github.com/karmada-go/karmada/internal/scheme"
	"github.com/karmada-go/karmada/internal/testenv"
)

// listRequests records the list requests (not watches) a client sends for
// one resource path.
type listRequests struct {
	path string
	rt   http.RoundTripper
	mu   sync.Mutex
	urls []string
}

func (l *listRequests) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method == http.MethodGet && r.URL.Path == l.path && r.URL.Query().Get("watch") != "true" {
		l.mu.Lock()
		l.urls = append(l.urls, r.URL.RawQuery)
		l.mu.Unlock()
	}
	return l.rt.RoundTrip(r)
}

func (l *listRequests) pages() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.urls...)
}

func countingConfig(env *testenv.Env, path string) (*rest.Config, *listRequests) {
	cfg := rest.CopyConfig(env.Config)
	lr := &listRequests{path: path}
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper { lr.rt = rt; return lr }
	return cfg, lr
}

func createConfigMaps(t *testing.T, env *testenv.Env, n int) {
	t.Helper()
	for i := 0; i < n; i++ {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%d", i), Namespace: "default"},
			Data: map[string]string{"payload": fmt.Sprint(i)}}
		if err := env.Client.Create(context.Background(), cm); err != nil {
			t.Fatal(err)
		}
	}
}

// checkPages fails unless the first list was sent as pages of at most
// page objects, never asking for resourceVersion 0.
func checkPages(t *testing.T, urls []string, want int, page int) {
	t.Helper()
	if len(urls) != want {
		t.Fatalf("%d list requests %q, want %d pages", len(urls), urls, want)
	}
	for i, u := range urls {
		if want := fmt.Sprintf("limit=%d", page); !strings.Contains(u, want) {
			t.Errorf("request %d (%s) does not ask for %s", i, u, want)
		}
		if strings.Contains(u, "resourceVersion=0") {
			t.Errorf("request %d (%s) asks for resourceVersion 0, which the watch cache answers whole", i, u)
		}
		if (i == 0) == strings.Contains(u, "continue=") {
			t.Errorf("request %d (%s): only the pages after the first continue", i, u)
		}
	}
}

// A typed informer on ListWatch lists a page at a time and hands the
// informer only what the transform made of each page.
func TestListWatchTransformsEachPage(t *testing.T) {
	env := testenv.StartMember(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	createConfigMaps(t, env, 25)
	cfg, lr := countingConfig(env, "/api/v1/namespaces/default/configmaps")
	kc := kubernetes.NewForConfigOrDie(cfg)
	var pagesSeen []int
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			l, err := kc.CoreV1().ConfigMaps("default").List(ctx, o)
			if err == nil {
				pagesSeen = append(pagesSeen, len(l.Items))
			}
			return l, err
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			return kc.CoreV1().ConfigMaps("default").Watch(ctx, o)
		},
	}
	transform := func(o any) (any, error) {
		if cm, ok := o.(*corev1.ConfigMap); ok && cm.Data != nil {
			out := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: cm.Name, Namespace: cm.Namespace, ResourceVersion: cm.ResourceVersion}}
			return out, nil
		}
		return o, nil
	}
	inf := pagedlist.NewInformer(lw, &corev1.ConfigMap{}, transform, 10, cache.Indexers{})
	testenv.RunInformer(ctx, t, inf)
	checkPages(t, lr.pages(), 3, 10)
	if fmt.Sprint(pagesSeen) != "[10 10 5]" {
		t.Errorf("pages of %v objects, want [10 10 5]", pagesSeen)
	}
	items := inf.GetStore().List()
	if len(items) != 25 {
		t.Fatalf("the cache holds %d objects, want 25", len(items))
	}
	for _, it := range items {
		if cm := it.(*corev1.ConfigMap); cm.Data != nil {
			t.Errorf("%s is cached untransformed", cm.Name)
		}
	}
	// The watch goes through the same informer and transform.
	if err := env.Client.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "late", Namespace: "default"}, Data: map[string]string{"a": "b"}}); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, time.Minute, "the watched object in the cache", func(context.Context) error {
		it, ok, err := inf.GetStore().GetByKey("default/late")
		if err != nil || !ok {
			return fmt.Errorf("default/late not cached (%v)", err)
		}
		if it.(*corev1.ConfigMap).Data != nil {
			return fmt.Errorf("default/late cached untransformed")
		}
		return nil
	})
}

// A controller-runtime cache built with NewInformerFunc lists in pages and
// serves what it listed.
func TestNewInformerFuncPagesControllerRuntimeCaches(t *testing.T) {
	env := testenv.StartMember(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	createConfigMaps(t, env, 12)
	cfg, lr := countingConfig(env, "/api/v1/configmaps")
	strip := crcache.TransformStripManagedFields()
	c, err := crcache.New(cfg, crcache.Options{Scheme: scheme.Scheme, DefaultTransform: strip, NewInformer: pagedlist.NewInformerFunc(strip, 5)})
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = c.Start(ctx) }()
	var list corev1.ConfigMapList
	testenv.Eventually(t, time.Minute, "the cache's list", func(ctx context.Context) error {
		return c.List(ctx, &list)
	})
	// 12 ConfigMaps of ours and the API server's own (kube-root-ca.crt in
	// every namespace): at least 3 pages of 5.
	urls := lr.pages()
	if n := (len(list.Items) + 4) / 5; len(urls) != n {
		t.Fatalf("%d list requests for %d ConfigMaps, want %d pages of 5", len(urls), len(list.Items), n)
	}
	checkPages(t, urls, len(urls), 5)
	found := 0
	for _, cm := range list.Items {
		if len(cm.ManagedFields) != 0 {
			t.Errorf("%s/%s kept its managedFields", cm.Namespace, cm.Name)
		}
		if cm.Namespace == "default" && strings.Contains(cm.Name, "cm-") {
			found++
		}
	}
	if found != 12 {
		t.Errorf("the cache lists %d of the 12 ConfigMaps", found)
	}
}

// A list again from the version of an earlier list, as an informer asks
// when its watch ended, returns the current state: with a limit, that
// version would mean exactly it, and an informer whose watch from it keeps
// failing would keep listing the same old state.
func TestListAgainReturnsTheCurrentState(t *testing.T) {
	env := testenv.StartMember(t)
	ctx := context.Background()
	createConfigMaps(t, env, 3)
	cfg, lr := countingConfig(env, "/api/v1/namespaces/default/configmaps")
	kc := kubernetes.NewForConfigOrDie(cfg)
	lw := pagedlist.ListWatch(&cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return kc.CoreV1().ConfigMaps("default").List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			return kc.CoreV1().ConfigMaps("default").Watch(ctx, o)
		},
	}, nil, 2)
	first, err := lw.ListWithContext(ctx, metav1.ListOptions{ResourceVersion: "0"})
	if err != nil {
		t.Fatal(err)
	}
	old := first.(*pagedlist.List).ResourceVersion
	cm := &corev1.ConfigMap{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: "default", Name: "cm-1"}, cm); err != nil {
		t.Fatal(err)
	}
	cm.Data = map[string]string{"payload": "changed"}
	if err := env.Client.Update(ctx, cm); err != nil {
		t.Fatal(err)
	}
	again, err := lw.ListWithContext(ctx, metav1.ListOptions{ResourceVersion: old})
	if err != nil {
		t.Fatal(err)
	}
	l := again.(*pagedlist.List)
	if l.ResourceVersion == old {
		t.Errorf("listed again at resourceVersion %s, the first list's", old)
	}
	changed := false
	for _, o := range l.Items {
		if c := o.(*corev1.ConfigMap); c.Name == "cm-1" {
			changed = c.Data["payload"] == "changed"
		}
	}
	if !changed {
		t.Error("the list again does not hold cm-1 as changed after the first list")
	}
	for i, u := range lr.pages() {
		if strings.Contains(u, "resourceVersion=") {
			t.Errorf("request %d (%s) names a resourceVersion", i, u)
		}
	}
}

// The list's copy shares the items but not the slice.
func TestListDeepCopy(t *testing.T) {
	l := &pagedlist.List{ListMeta: metav1.ListMeta{ResourceVersion: "7"}}
	l.Items = append(l.Items, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a"}})
	c := l.DeepCopyObject().(*pagedlist.List)
	c.Items[0] = &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "b"}}
	c.ResourceVersion = "8"
	if l.Items[0].(*corev1.ConfigMap).Name != "a" || l.ResourceVersion != "7" {
		t.Errorf("changing the copy changed the original: %+v", l)
	}
}
