package cache

import (
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"

	searchv1alpha1 "github.com/karmada-go/karmada/api/search/v1alpha1"
)

var podsGVR = schema.GroupVersionResource{Version: "v1", Resource: "pods"}

// pod is a Pod as a Deployment's ReplicaSet makes it and a kubelet reports
// it, with the managedFields an API server keeps (about 5 KB of JSON).
func pod(cluster string, i int) *unstructured.Unstructured {
	ns := fmt.Sprintf("team-%d", i%20)
	app := fmt.Sprintf("app-%d", i%300)
	doc := fmt.Sprintf(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"%[2]s-7d9f8c6b5-%05[3]d","generateName":"%[2]s-7d9f8c6b5-","namespace":"%[1]s",
"uid":"3f1c2a4e-0000-4000-8000-%012[3]d","resourceVersion":"%[3]d","creationTimestamp":"2026-11-27T10:00:00Z",
"labels":{"app":"%[2]s","pod-template-hash":"7d9f8c6b5","team":"%[1]s","tier":"backend"},
"annotations":{"kubectl.kubernetes.io/restartedAt":"2026-11-20T09:00:00Z"},
"ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"%[2]s-7d9f8c6b5","uid":"9a8b7c6d-0000-4000-8000-000000000001","controller":true,"blockOwnerDeletion":true}],
"managedFields":[{"manager":"kube-controller-manager","operation":"Update","apiVersion":"v1","time":"2026-11-27T10:00:00Z","fieldsType":"FieldsV1","fieldsV1":{"f:metadata":{"f:generateName":{},"f:labels":{".":{},"f:app":{},"f:pod-template-hash":{},"f:team":{},"f:tier":{}},"f:ownerReferences":{".":{},"k:{\"uid\":\"9a8b7c6d\"}":{}}},"f:spec":{"f:containers":{"k:{\"name\":\"main\"}":{".":{},"f:image":{},"f:imagePullPolicy":{},"f:name":{},"f:ports":{},"f:resources":{}}},"f:dnsPolicy":{},"f:restartPolicy":{},"f:schedulerName":{},"f:securityContext":{},"f:terminationGracePeriodSeconds":{}}}},
{"manager":"kubelet","operation":"Update","apiVersion":"v1","time":"2026-11-27T10:00:05Z","fieldsType":"FieldsV1","subresource":"status","fieldsV1":{"f:status":{"f:conditions":{},"f:containerStatuses":{},"f:hostIP":{},"f:phase":{},"f:podIP":{},"f:podIPs":{},"f:startTime":{}}}}]},
"spec":{"containers":[{"name":"main","image":"registry.example.com/%[2]s:1.4.2","imagePullPolicy":"IfNotPresent","ports":[{"containerPort":8080,"protocol":"TCP"}],
"resources":{"requests":{"cpu":"100m","memory":"128Mi"},"limits":{"memory":"256Mi"}},"terminationMessagePath":"/dev/termination-log","terminationMessagePolicy":"File",
"volumeMounts":[{"name":"kube-api-access-abcde","readOnly":true,"mountPath":"/var/run/secrets/kubernetes.io/serviceaccount"}]}],
"restartPolicy":"Always","terminationGracePeriodSeconds":30,"dnsPolicy":"ClusterFirst","serviceAccountName":"default","serviceAccount":"default","nodeName":"%[4]s-node%[5]d",
"securityContext":{},"schedulerName":"default-scheduler","tolerations":[{"key":"node.kubernetes.io/not-ready","operator":"Exists","effect":"NoExecute","tolerationSeconds":300},{"key":"node.kubernetes.io/unreachable","operator":"Exists","effect":"NoExecute","tolerationSeconds":300}],
"priority":0,"enableServiceLinks":true,"preemptionPolicy":"PreemptLowerPriority",
"volumes":[{"name":"kube-api-access-abcde","projected":{"sources":[{"serviceAccountToken":{"expirationSeconds":3607,"path":"token"}},{"configMap":{"name":"kube-root-ca.crt","items":[{"key":"ca.crt","path":"ca.crt"}]}}],"defaultMode":420}}]},
"status":{"phase":"Running","conditions":[{"type":"Initialized","status":"True","lastProbeTime":null,"lastTransitionTime":"2026-11-27T10:00:01Z"},{"type":"Ready","status":"True","lastProbeTime":null,"lastTransitionTime":"2026-11-27T10:00:05Z"},{"type":"ContainersReady","status":"True","lastProbeTime":null,"lastTransitionTime":"2026-11-27T10:00:05Z"},{"type":"PodScheduled","status":"True","lastProbeTime":null,"lastTransitionTime":"2026-11-27T10:00:00Z"}],
"hostIP":"10.0.%[5]d.1","podIP":"10.244.%[5]d.%[6]d","podIPs":[{"ip":"10.244.%[5]d.%[6]d"}],"startTime":"2026-11-27T10:00:01Z",
"containerStatuses":[{"name":"main","state":{"running":{"startedAt":"2026-11-27T10:00:04Z"}},"lastState":{},"ready":true,"restartCount":0,"image":"registry.example.com/%[2]s:1.4.2","imageID":"registry.example.com/%[2]s@sha256:0123456789abcdef","containerID":"containerd://%064[3]d","started":true}],"qosClass":"Burstable"}}`,
		ns, app, i, cluster, i%100, i%250+1)
	u := &unstructured.Unstructured{}
	if err := json.Unmarshal([]byte(doc), &u.Object); err != nil {
		panic(err)
	}
	return u
}

// A store keeps what a reflector gives it, without managedFields and with
// the cluster's annotation; Select filters by namespace, name, labels and
// fields, in order.
func TestStore(t *testing.T) {
	s := NewStore("member1", podsGVR)
	var list []any
	for i := 0; i < 40; i++ {
		list = append(list, pod("member1", i))
	}
	if err := s.Replace(list, "1"); err != nil {
		t.Fatal(err)
	}
	if !s.Synced() || s.Len() != 40 {
		t.Fatalf("synced %t, %d objects", s.Synced(), s.Len())
	}
	e := s.Select(Query{Namespace: "team-3", Name: "app-3-7d9f8c6b5-00003"})
	if len(e) != 1 {
		t.Fatalf("get by name: %d entries", len(e))
	}
	raw := string(e[0].Raw)
	if strings.Contains(raw, "managedFields") || !strings.Contains(raw, `"`+searchv1alpha1.CachedFromClusterAnnotation+`":"member1"`) {
		t.Errorf("stored JSON: %.300s", raw)
	}
	sel, _ := labels.Parse("app in (app-1, app-21), tier=backend")
	got := s.Select(Query{Labels: sel})
	if len(got) != 2 || got[0].Name != "app-1-7d9f8c6b5-00001" || got[1].Name != "app-21-7d9f8c6b5-00021" {
		t.Errorf("label selector: %v", names(got))
	}
	if got := s.Select(Query{Fields: map[string]string{"spec.nodeName": "member1-node5"}}); len(got) != 1 || got[0].Name != "app-5-7d9f8c6b5-00005" {
		t.Errorf("field selector spec.nodeName: %v", names(got))
	}
	if got := s.Select(Query{Namespace: "team-1", NotFields: map[string]string{"metadata.name": "app-1-7d9f8c6b5-00001"}}); len(got) != 1 || got[0].Name != "app-21-7d9f8c6b5-00021" {
		t.Errorf("field selector !=: %v", names(got))
	}
	if err := s.Delete(pod("member1", 1)); err != nil || s.Len() != 39 {
		t.Errorf("delete: %v, %d left", err, s.Len())
	}
	p := pod("member1", 2)
	p.SetLabels(map[string]string{"app": "moved"})
	if err := s.Update(p); err != nil {
		t.Fatal(err)
	}
	sel, _ = labels.Parse("app=moved")
	if got := s.Select(Query{Labels: sel}); len(got) != 1 {
		t.Errorf("after update: %v", names(got))
	}
}

func names(es []*Entry) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.Name)
	}
	return out
}

// heapAfterGC is the live heap.
func heapAfterGC() uint64 {
	var m runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// BenchmarkMemory30000Pods caches 30,000 Pods over 3 members and reports
// the live heap the cache holds against the serialized size of what it
// caches (the JSON without managedFields): the target is at most 1.5.
func BenchmarkMemory30000Pods(b *testing.B) {
	for n := 0; n < b.N; n++ {
		// The objects as the reflector hands them over, made first.
		lists := map[string][]any{}
		for _, c := range []string{"member1", "member2", "member3"} {
			for i := 0; i < 10000; i++ {
				lists[c] = append(lists[c], pod(c, i))
			}
		}
		before := heapAfterGC()
		var stores []*Store
		for _, c := range []string{"member1", "member2", "member3"} {
			s := NewStore(c, podsGVR)
			if err := s.Replace(lists[c], "1"); err != nil {
				b.Fatal(err)
			}
			stores = append(stores, s)
		}
		after := heapAfterGC()
		runtime.KeepAlive(lists)
		size := 0
		for _, s := range stores {
			size += s.Size()
		}
		held := float64(after - before)
		b.ReportMetric(held/float64(size), "heap/serialized")
		b.ReportMetric(held/30000, "B/pod")
		b.ReportMetric(float64(size)/30000, "json-B/pod")
		// Karmada's reported figure: 2M Pods over 100 clusters.
		b.ReportMetric(held/30000*2e6/1e9, "GB-at-2M-pods")
		runtime.KeepAlive(stores)
	}
}

// BenchmarkSelect: a list of one namespace's Pods (500 of 10,000) and of
// every Pod, from one member's store, as the search API selects them before
// copying their JSON.
func BenchmarkSelect(b *testing.B) {
	s := NewStore("member1", podsGVR)
	var list []any
	for i := 0; i < 10000; i++ {
		list = append(list, pod("member1", i))
	}
	if err := s.Replace(list, "1"); err != nil {
		b.Fatal(err)
	}
	sel, _ := labels.Parse("tier=backend")
	b.Run("namespace", func(b *testing.B) {
		for n := 0; n < b.N; n++ {
			if got := s.Select(Query{Namespace: "team-3", Labels: sel}); len(got) != 500 {
				b.Fatalf("%d pods", len(got))
			}
		}
	})
	b.Run("all", func(b *testing.B) {
		for n := 0; n < b.N; n++ {
			if got := s.Select(Query{}); len(got) != 10000 {
				b.Fatalf("%d pods", len(got))
			}
		}
	})
}
