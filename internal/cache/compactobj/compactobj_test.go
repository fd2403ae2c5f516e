package compactobj

import (
	"fmt"
	"runtime"
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"
)

// template is a Deployment as the API server returns a karmada-bench one:
// defaulted spec, status with conditions, managedFields.
func template(i int) []byte {
	return []byte(fmt.Sprintf(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"bench-%d","namespace":"bench","uid":"8a3e6c1e-0000-4000-8000-%012d","resourceVersion":"%d","generation":1,"creationTimestamp":"2026-11-24T10:00:00Z","labels":{"app":"bench-%d","propagationpolicy.karmada.io/permanent-id":"4f7a3b2c-1d2e-4f5a-8b9c-0d1e2f3a4b5c"},"annotations":{"deployment.kubernetes.io/revision":"1","propagationpolicy.karmada.io/name":"bench","propagationpolicy.karmada.io/namespace":"bench"},"managedFields":[{"manager":"karmada-bench","operation":"Update","apiVersion":"apps/v1","time":"2026-11-24T10:00:00Z","fieldsType":"FieldsV1","fieldsV1":{"f:spec":{"f:replicas":{},"f:selector":{},"f:template":{"f:metadata":{"f:labels":{".":{},"f:app":{}}},"f:spec":{"f:containers":{"k:{\"name\":\"c\"}":{".":{},"f:image":{},"f:name":{}}}}}}}}]},"spec":{"replicas":1,"selector":{"matchLabels":{"app":"bench-%d"}},"template":{"metadata":{"labels":{"app":"bench-%d"}},"spec":{"containers":[{"name":"c","image":"registry.example/bench:1","resources":{"requests":{"cpu":"10m","memory":"16Mi"}},"terminationMessagePath":"/dev/termination-log","terminationMessagePolicy":"File","imagePullPolicy":"IfNotPresent"}],"restartPolicy":"Always","terminationGracePeriodSeconds":30,"dnsPolicy":"ClusterFirst","securityContext":{},"schedulerName":"default-scheduler"}},"strategy":{"type":"RollingUpdate","rollingUpdate":{"maxUnavailable":"25%%","maxSurge":"25%%"}},"revisionHistoryLimit":10,"progressDeadlineSeconds":600},"status":{"observedGeneration":1,"replicas":3,"updatedReplicas":3,"readyReplicas":3,"availableReplicas":3,"conditions":[{"type":"Available","status":"True","lastUpdateTime":"2026-11-24T10:00:05Z","lastTransitionTime":"2026-11-24T10:00:05Z","reason":"MinimumReplicasAvailable","message":"Deployment has minimum availability."},{"type":"Progressing","status":"True","lastUpdateTime":"2026-11-24T10:00:05Z","lastTransitionTime":"2026-11-24T10:00:00Z","reason":"NewReplicaSetAvailable","message":"ReplicaSet \"bench-%d-7d4b9c8f6\" has successfully progressed."}]}}`, i, i, 1000+i, i, i, i, i))
}

func decoded(t testing.TB, i int) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(template(i)); err != nil {
		t.Fatal(err)
	}
	return u
}

// An object goes through the cache unchanged but for its managedFields;
// what the transform already made, and tombstones, pass through.
func TestTransformKeepsEverythingButManagedFields(t *testing.T) {
	u := decoded(t, 7)
	want := u.DeepCopy()
	want.SetManagedFields(nil)
	got, err := Transform(u)
	if err != nil {
		t.Fatal(err)
	}
	o := got.(*Object)
	if o.Namespace != "bench" || o.Name != "bench-7" || o.ResourceVersion != "1007" || o.UID != want.GetUID() ||
		o.Generation != 1 || o.Labels["app"] != "bench-7" || o.Annotations["propagationpolicy.karmada.io/name"] != "bench" || o.Kind != "Deployment" {
		t.Fatalf("metadata not kept: %+v %+v", o.TypeMeta, o.ObjectMeta)
	}
	if k, err := cache.MetaNamespaceKeyFunc(o); err != nil || k != "bench/bench-7" {
		t.Fatalf("informer key %q, %v", k, err)
	}
	back, err := o.Decode()
	if err != nil {
		t.Fatal(err)
	}
	if !equality.Semantic.DeepEqual(back.Object, want.Object) {
		t.Fatalf("round trip changed the object:\n got %v\nwant %v", back.Object, want.Object)
	}
	// Each decode is the caller's own.
	back.SetLabels(nil)
	if again, _ := o.Decode(); again.GetLabels()["app"] != "bench-7" {
		t.Fatal("a decoded object shares state with the cache")
	}
	c := o.DeepCopyObject().(*Object)
	c.Labels["app"] = "changed"
	if o.Labels["app"] != "bench-7" {
		t.Fatal("DeepCopyObject shares the labels")
	}
	if again, err := Transform(o); err != nil || again != any(o) {
		t.Fatalf("a stored object was transformed again (%v)", err)
	}
	tomb := cache.DeletedFinalStateUnknown{Key: "bench/bench-7", Obj: u}
	if got, err := Transform(tomb); err != nil || got != any(tomb) {
		t.Fatalf("tombstone: %v, %v", got, err)
	}
}

// The lister answers as a dynamic informer's would: by name, by namespace,
// by label, NotFound for what is not there.
func TestLister(t *testing.T) {
	idx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	for i := range 3 {
		u := decoded(t, i)
		if i == 2 {
			u.SetNamespace("other")
		}
		o, err := Transform(u)
		if err != nil {
			t.Fatal(err)
		}
		if err := idx.Add(o); err != nil {
			t.Fatal(err)
		}
	}
	l := Lister{Indexer: idx, Resource: schema.GroupResource{Group: "apps", Resource: "deployments"}}
	got, err := l.ByNamespace("bench").Get("bench-1")
	if err != nil || got.(*unstructured.Unstructured).GetName() != "bench-1" {
		t.Fatalf("get: %v, %v", got, err)
	}
	if _, err := l.ByNamespace("other").Get("bench-1"); !apierrors.IsNotFound(err) {
		t.Fatalf("in another namespace: want NotFound, got %v", err)
	}
	all, err := l.List(labels.Everything())
	if err != nil || len(all) != 3 {
		t.Fatalf("list: %d, %v", len(all), err)
	}
	inBench, err := l.ByNamespace("bench").List(labels.SelectorFromSet(labels.Set{"app": "bench-0"}))
	if err != nil || len(inBench) != 1 || inBench[0].(*unstructured.Unstructured).GetName() != "bench-0" {
		t.Fatalf("list by namespace and label: %v, %v", inBench, err)
	}
}

// BenchmarkCached reports the heap one cached Deployment takes, as an
// unstructured object (what a controller-runtime cache of unstructured
// objects or a dynamic informer holds) and as an Object.
func BenchmarkCached(b *testing.B) {
	const n = 2000
	measure := func(b *testing.B, newObj func(i int) any) {
		for range b.N {
			_ = cached(n, newObj)
		}
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		keep := cached(n, newObj)
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/n, "heap-bytes/object")
		runtime.KeepAlive(keep)
	}
	b.Run("unstructured", func(b *testing.B) {
		measure(b, func(i int) any { u := decoded(b, i); u.SetManagedFields(nil); return u })
	})
	b.Run("compact", func(b *testing.B) {
		measure(b, func(i int) any {
			r, err := Transform(decoded(b, i))
			if err != nil {
				b.Fatal(err)
			}
			return r
		})
	})
}

// cached returns n objects made by newObj, as a cache would hold them.
func cached(n int, newObj func(i int) any) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = newObj(i)
	}
	return out
}

// Metadata keeps in the ObjectMeta only the labels and annotations asked
// for; the JSON keeps all of them.
func TestMetadataKeepsWhatItIsAsked(t *testing.T) {
	for _, c := range []struct {
		m                 Metadata
		labels            int
		annotations       []string
		noAnnotationsKept bool
	}{
		{Metadata{}, 0, nil, true},
		{Metadata{Labels: true, Annotations: []string{"propagationpolicy.karmada.io/name", "absent"}}, 2, []string{"propagationpolicy.karmada.io/name"}, false},
		{Metadata{Labels: true, AllAnnotations: true}, 2, []string{"propagationpolicy.karmada.io/name", "propagationpolicy.karmada.io/namespace", "deployment.kubernetes.io/revision"}, false},
	} {
		got, err := c.m.Transform(decoded(t, 3))
		if err != nil {
			t.Fatal(err)
		}
		o := got.(*Object)
		if len(o.Labels) != c.labels || len(o.Annotations) != len(c.annotations) || (c.noAnnotationsKept && o.Annotations != nil) {
			t.Errorf("%+v: labels %v, annotations %v", c.m, o.Labels, o.Annotations)
		}
		for _, k := range c.annotations {
			if _, ok := o.Annotations[k]; !ok {
				t.Errorf("%+v: annotation %s not kept", c.m, k)
			}
		}
		u, err := o.Decode()
		if err != nil || len(u.GetAnnotations()) != 3 || len(u.GetLabels()) != 2 {
			t.Errorf("%+v: the JSON lost metadata: %v %v (%v)", c.m, u.GetLabels(), u.GetAnnotations(), err)
		}
	}
}
