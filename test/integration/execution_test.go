package integration

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"k8s.io/client-go/kubernetes"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	workv1alpha1 "github.com/karmada-go/karmada/api/work/v1alpha1"
	"github.com/karmada-go/karmada/internal/bench"
	"github.com/karmada-go/karmada/internal/clusters/clusterclient"
	"github.com/karmada-go/karmada/internal/propagation/execution"
	"github.com/karmada-go/karmada/internal/propagation/workstatus"
	"github.com/karmada-go/karmada/internal/testenv"
)

// pushMember starts a second real API server as member1 and registers it
// in the control plane as karmada join would: a token Secret, a Push
// Cluster, Ready.
func pushMember(ctx context.Context, t *testing.T, plane *testenv.Env) *testenv.Env {
	t.Helper()
	member := testenv.StartMember(t)
	token, ca := testenv.MemberCredentials(ctx, t, member)
	c := plane.Client
	createNamespace(ctx, t, c, "karmada-cluster")
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "karmada-cluster", Name: "member1"},
		Data: map[string][]byte{clusterclient.SecretTokenKey: []byte(token), clusterclient.SecretCABundleKey: ca}}
	if err := c.Create(ctx, secret); err != nil {
		t.Fatal(err)
	}
	cl := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "member1"}, Spec: clusterv1alpha1.ClusterSpec{
		SyncMode: clusterv1alpha1.Push, APIEndpoint: member.Config.Host,
		SecretRef: &clusterv1alpha1.LocalSecretReference{Namespace: "karmada-cluster", Name: "member1"},
	}}
	if err := c.Create(ctx, cl); err != nil {
		t.Fatal(err)
	}
	setReady(ctx, t, c, "member1", metav1.ConditionTrue)
	createNamespace(ctx, t, c, workv1alpha1.ExecutionNamespace("member1"))
	return member
}

// runMemberControllers runs the execution and workStatus controllers as the
// controller manager does (the execution controller recording events), and
// stops their member informers at the end.
func runMemberControllers(t *testing.T, plane *testenv.Env) {
	t.Helper()
	var members *clusterclient.Cache
	// Registered first, so it runs after the manager has stopped.
	t.Cleanup(func() {
		if members != nil {
			members.Close()
		}
	})
	plane.RunManager(t, func(ctx context.Context, mgr manager.Manager) error {
		members = clusterclient.NewCache(mgr.GetAPIReader(), clusterclient.Options{QPS: 50, Burst: 100})
		if err := (&execution.Reconciler{Client: mgr.GetClient(), Members: members, Workers: 2, StatusWritesApplied: true,
			Recorder: mgr.GetEventRecorderFor("execution-controller")}).SetupWithManager(mgr); err != nil {
			return err
		}
		return (&workstatus.Reconciler{Client: mgr.GetClient(), Members: members, Workers: 2}).SetupWithManager(mgr)
	})
}

func configMapManifest(t *testing.T, ns, name string, data map[string]string) workv1alpha1.Manifest {
	t.Helper()
	raw, err := json.Marshal(map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"namespace": ns, "name": name}, "data": data})
	if err != nil {
		t.Fatal(err)
	}
	return workv1alpha1.Manifest{RawExtension: runtime.RawExtension{Raw: raw}}
}

func appliedCondition(ctx context.Context, c client.Client, key types.NamespacedName) (*workv1alpha1.Work, *metav1.Condition, error) {
	w := &workv1alpha1.Work{}
	if err := c.Get(ctx, key, w); err != nil {
		return nil, nil, err
	}
	return w, meta.FindStatusCondition(w.Status.Conditions, workv1alpha1.WorkApplied), nil
}

// The execution controller applies a Work's manifests to a real member and
// removes only its own copies; workStatus writes the Applied condition and
// the copies' status once the member's copies show the Work's generation.
func TestExecutionAndWorkStatus(t *testing.T) {
	t.Parallel()
	plane := testenv.Start(t)
	ctx := context.Background()
	member := pushMember(ctx, t, plane)
	c, mc := plane.Client, member.Client
	runMemberControllers(t, plane)
	createNamespace(ctx, t, mc, "shop")
	es := workv1alpha1.ExecutionNamespace("member1")

	// Applied: the copy carries the Work's marks; workStatus reports it.
	w := &workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Namespace: es, Name: "settings"},
		Spec: workv1alpha1.WorkSpec{Workload: workv1alpha1.WorkloadTemplate{Manifests: []workv1alpha1.Manifest{configMapManifest(t, "shop", "settings", map[string]string{"a": "1"})}}}}
	if err := c.Create(ctx, w); err != nil {
		t.Fatal(err)
	}
	copyOf := func(ctx context.Context, name string) (*corev1.ConfigMap, error) {
		cm := &corev1.ConfigMap{}
		return cm, mc.Get(ctx, client.ObjectKey{Namespace: "shop", Name: name}, cm)
	}
	testenv.Eventually(t, deadline, "Applied True with the copy's status", func(ctx context.Context) error {
		got, cond, err := appliedCondition(ctx, c, client.ObjectKeyFromObject(w))
		if err != nil {
			return err
		}
		if cond == nil || cond.Status != metav1.ConditionTrue || cond.ObservedGeneration != got.Generation || cond.Reason != workv1alpha1.ReasonAppliedSuccessful {
			return fmt.Errorf("Applied %+v", cond)
		}
		if len(got.Status.ManifestStatuses) != 1 || got.Status.ManifestStatuses[0].Identifier.Name != "settings" {
			return fmt.Errorf("manifest statuses %+v", got.Status.ManifestStatuses)
		}
		return nil
	})
	cm, err := copyOf(ctx, "settings")
	if err != nil {
		t.Fatal(err)
	}
	a := cm.Annotations
	if a[workv1alpha1.WorkNamespaceAnnotation] != es || a[workv1alpha1.WorkNameAnnotation] != "settings" || a[workv1alpha1.WorkGenerationAnnotation] != "1" ||
		cm.Labels[workv1alpha1.ManagedLabel] != "true" || cm.Data["a"] != "1" {
		t.Errorf("member copy: labels %v, annotations %v, data %v", cm.Labels, a, cm.Data)
	}

	// A new copy costs the member one request: the cache says nothing of
	// Karmada's is there, and a create-only apply needs no read first.
	memberRequests := func() float64 {
		rc, err := bench.ScrapeRequests(ctx, kubernetes.NewForConfigOrDie(member.Config), "configmaps")
		if err != nil {
			t.Fatal(err)
		}
		return rc.Total
	}
	before := memberRequests()
	// (With the execution controller's finalizer, as the binding controller
	// creates Works: adding it would be an event of its own.)
	fresh := &workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Namespace: es, Name: "fresh", Finalizers: []string{execution.Finalizer}},
		Spec: workv1alpha1.WorkSpec{Workload: workv1alpha1.WorkloadTemplate{Manifests: []workv1alpha1.Manifest{configMapManifest(t, "shop", "fresh", map[string]string{"a": "1"})}}}}
	if err := c.Create(ctx, fresh); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, deadline, "the new copy applied", func(ctx context.Context) error {
		_, cond, err := appliedCondition(ctx, c, client.ObjectKeyFromObject(fresh))
		if err != nil {
			return err
		}
		if cond == nil || cond.Status != metav1.ConditionTrue {
			return fmt.Errorf("Applied %+v", cond)
		}
		return nil
	})
	if n := memberRequests() - before; n != 1 {
		t.Errorf("a new copy cost the member %v configmaps requests, want 1", n)
	}
	if err := c.Delete(ctx, fresh); err != nil {
		t.Fatal(err)
	}

	// Server-side apply keeps what the member's own managers set (what the
	// interpreter's Retain did by hand): a label added in the member stays
	// through an update of the Work.
	cm.Labels["mesh"] = "injected"
	if err := mc.Update(ctx, cm, client.FieldOwner("member-webhook")); err != nil {
		t.Fatal(err)
	}
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := c.Get(ctx, client.ObjectKeyFromObject(w), w); err != nil {
			return err
		}
		w.Spec.Workload.Manifests = []workv1alpha1.Manifest{configMapManifest(t, "shop", "settings", map[string]string{"a": "2"})}
		return c.Update(ctx, w)
	}); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, deadline, "the update applied and reported", func(ctx context.Context) error {
		cm, err := copyOf(ctx, "settings")
		if err != nil {
			return err
		}
		if cm.Data["a"] != "2" || cm.Annotations[workv1alpha1.WorkGenerationAnnotation] != strconv.FormatInt(w.Generation, 10) {
			return fmt.Errorf("copy data %v, annotations %v", cm.Data, cm.Annotations)
		}
		if cm.Labels["mesh"] != "injected" {
			return fmt.Errorf("the member's own label was dropped: %v", cm.Labels)
		}
		_, cond, err := appliedCondition(ctx, c, client.ObjectKeyFromObject(w))
		if err != nil {
			return err
		}
		if cond == nil || cond.ObservedGeneration != w.Generation || cond.Status != metav1.ConditionTrue {
			return fmt.Errorf("Applied %+v at generation %d", cond, w.Generation)
		}
		return nil
	})

	// What the member's API server assigned (a Service's cluster IP and
	// node port) is kept through an update of a manifest that leaves it out.
	svcManifest := func(app string) workv1alpha1.Manifest {
		raw, err := json.Marshal(map[string]any{"apiVersion": "v1", "kind": "Service", "metadata": map[string]any{"namespace": "shop", "name": "web"},
			"spec": map[string]any{"type": "NodePort", "selector": map[string]any{"app": app}, "ports": []any{map[string]any{"name": "http", "port": 80}}}})
		if err != nil {
			t.Fatal(err)
		}
		return workv1alpha1.Manifest{RawExtension: runtime.RawExtension{Raw: raw}}
	}
	sw := &workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Namespace: es, Name: "web-service"},
		Spec: workv1alpha1.WorkSpec{Workload: workv1alpha1.WorkloadTemplate{Manifests: []workv1alpha1.Manifest{svcManifest("web")}}}}
	if err := c.Create(ctx, sw); err != nil {
		t.Fatal(err)
	}
	svc := &corev1.Service{}
	testenv.Eventually(t, deadline, "the Service in the member", func(ctx context.Context) error {
		if err := mc.Get(ctx, client.ObjectKey{Namespace: "shop", Name: "web"}, svc); err != nil {
			return err
		}
		if svc.Spec.ClusterIP == "" || len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].NodePort == 0 {
			return fmt.Errorf("cluster IP %q, ports %+v", svc.Spec.ClusterIP, svc.Spec.Ports)
		}
		return nil
	})
	assigned, nodePort := svc.Spec.ClusterIP, svc.Spec.Ports[0].NodePort
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := c.Get(ctx, client.ObjectKeyFromObject(sw), sw); err != nil {
			return err
		}
		sw.Spec.Workload.Manifests = []workv1alpha1.Manifest{svcManifest("web-v2")}
		return c.Update(ctx, sw)
	}); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, deadline, "the Service updated, its assigned fields kept", func(ctx context.Context) error {
		if err := mc.Get(ctx, client.ObjectKey{Namespace: "shop", Name: "web"}, svc); err != nil {
			return err
		}
		if svc.Spec.Selector["app"] != "web-v2" || len(svc.Spec.Ports) != 1 {
			return fmt.Errorf("selector %v, ports %+v", svc.Spec.Selector, svc.Spec.Ports)
		}
		if svc.Spec.ClusterIP != assigned || svc.Spec.Ports[0].NodePort != nodePort {
			return fmt.Errorf("cluster IP %q (was %q), node port %d (was %d)", svc.Spec.ClusterIP, assigned, svc.Spec.Ports[0].NodePort, nodePort)
		}
		return nil
	})

	// An object Karmada did not create is left alone and reported.
	mine := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "owned-by-member"}, Data: map[string]string{"keep": "me"}}
	if err := mc.Create(ctx, mine); err != nil {
		t.Fatal(err)
	}
	conflict := &workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Namespace: es, Name: "conflict"},
		Spec: workv1alpha1.WorkSpec{Workload: workv1alpha1.WorkloadTemplate{Manifests: []workv1alpha1.Manifest{configMapManifest(t, "shop", "owned-by-member", map[string]string{"keep": "no"})}}}}
	if err := c.Create(ctx, conflict); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, deadline, "the conflict reported", func(ctx context.Context) error {
		_, cond, err := appliedCondition(ctx, c, client.ObjectKeyFromObject(conflict))
		if err != nil {
			return err
		}
		if cond == nil || cond.Status != metav1.ConditionFalse || !strings.Contains(cond.Message, "was not created by Karmada") {
			return fmt.Errorf("Applied %+v", cond)
		}
		return nil
	})
	// Untouched: the create-only apply was refused, nothing was written.
	if err := mc.Get(ctx, client.ObjectKeyFromObject(mine), mine); err != nil {
		t.Fatal(err)
	}
	for _, f := range mine.ManagedFields {
		if f.Manager == execution.FieldManager {
			t.Errorf("Karmada's field manager wrote the member's own object: %+v", f)
		}
	}
	if mine.Data["keep"] != "me" || mine.Labels[workv1alpha1.ManagedLabel] != "" {
		t.Errorf("the member's own object changed: data %v, labels %v", mine.Data, mine.Labels)
	}

	// A manifest that is not a Kubernetes object (no kind) fails for good,
	// with the reason.
	bad := &workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Namespace: es, Name: "bad"},
		Spec: workv1alpha1.WorkSpec{Workload: workv1alpha1.WorkloadTemplate{Manifests: []workv1alpha1.Manifest{{RawExtension: runtime.RawExtension{Raw: []byte(`{"metadata":{"name":"no-kind"}}`)}}}}}}
	if err := c.Create(ctx, bad); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, deadline, "the invalid manifest reported", func(ctx context.Context) error {
		_, cond, err := appliedCondition(ctx, c, client.ObjectKeyFromObject(bad))
		if err != nil {
			return err
		}
		if cond == nil || cond.Status != metav1.ConditionFalse || !strings.Contains(cond.Message, "manifest 0 is not a valid object") {
			return fmt.Errorf("Applied %+v", cond)
		}
		return nil
	})

	// Deleting the Works removes Karmada's copy and leaves the member's own
	// object, which the conflicting Work never took.
	for _, wk := range []*workv1alpha1.Work{w, sw, conflict, bad} {
		if err := c.Delete(ctx, wk); err != nil {
			t.Fatal(err)
		}
	}
	testenv.Eventually(t, deadline, "Works gone with Karmada's copy", func(ctx context.Context) error {
		works := &workv1alpha1.WorkList{}
		if err := c.List(ctx, works, client.InNamespace(es)); err != nil {
			return err
		}
		if len(works.Items) != 0 {
			return fmt.Errorf("%d Works left", len(works.Items))
		}
		if _, err := copyOf(ctx, "settings"); !apierrors.IsNotFound(err) {
			return fmt.Errorf("Karmada's copy: %v", err)
		}
		return nil
	})
	kept, err := copyOf(ctx, "owned-by-member")
	if err != nil || kept.Data["keep"] != "me" {
		t.Errorf("the member's own ConfigMap: %v, data %v; want it untouched", err, kept.Data)
	}
}

// A failure the execution controller wrote (the cluster not Ready) turns
// into success once the cluster is Ready and the copies show the Work's
// generation, written by workStatus.
func TestAppliedRecoversAfterNotReady(t *testing.T) {
	t.Parallel()
	plane := testenv.Start(t)
	ctx := context.Background()
	member := pushMember(ctx, t, plane)
	c := plane.Client
	setReady(ctx, t, c, "member1", metav1.ConditionFalse)
	runMemberControllers(t, plane)
	createNamespace(ctx, t, member.Client, "shop")
	w := &workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Namespace: workv1alpha1.ExecutionNamespace("member1"), Name: "settings"},
		Spec: workv1alpha1.WorkSpec{Workload: workv1alpha1.WorkloadTemplate{Manifests: []workv1alpha1.Manifest{configMapManifest(t, "shop", "settings", map[string]string{"a": "1"})}}}}
	if err := c.Create(ctx, w); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, deadline, "Applied False while not Ready", func(ctx context.Context) error {
		_, cond, err := appliedCondition(ctx, c, client.ObjectKeyFromObject(w))
		if err != nil {
			return err
		}
		if cond == nil || cond.Status != metav1.ConditionFalse || !strings.Contains(cond.Message, "not ready") {
			return fmt.Errorf("Applied %+v", cond)
		}
		return nil
	})
	setReady(ctx, t, c, "member1", metav1.ConditionTrue)
	testenv.Eventually(t, deadline, "Applied True once Ready", func(ctx context.Context) error {
		_, cond, err := appliedCondition(ctx, c, client.ObjectKeyFromObject(w))
		if err != nil {
			return err
		}
		if cond == nil || cond.Status != metav1.ConditionTrue {
			return fmt.Errorf("Applied %+v", cond)
		}
		return nil
	})

	// A namespace not in the member yet fails the apply; once it is there,
	// the next attempt applies and the failure is cleared.
	later := &workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Namespace: workv1alpha1.ExecutionNamespace("member1"), Name: "later"},
		Spec: workv1alpha1.WorkSpec{Workload: workv1alpha1.WorkloadTemplate{Manifests: []workv1alpha1.Manifest{configMapManifest(t, "later", "settings", map[string]string{"a": "1"})}}}}
	if err := c.Create(ctx, later); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, deadline, "Applied False without the namespace", func(ctx context.Context) error {
		_, cond, err := appliedCondition(ctx, c, client.ObjectKeyFromObject(later))
		if err != nil {
			return err
		}
		if cond == nil || cond.Status != metav1.ConditionFalse || !strings.Contains(cond.Message, "not found") {
			return fmt.Errorf("Applied %+v", cond)
		}
		return nil
	})
	createNamespace(ctx, t, member.Client, "later")
	testenv.Eventually(t, deadline, "Applied True once the namespace is there", func(ctx context.Context) error {
		got, cond, err := appliedCondition(ctx, c, client.ObjectKeyFromObject(later))
		if err != nil {
			return err
		}
		if cond == nil || cond.Status != metav1.ConditionTrue || len(got.Status.ManifestStatuses) != 1 {
			return fmt.Errorf("Applied %+v, manifest statuses %+v", cond, got.Status.ManifestStatuses)
		}
		return nil
	})
}

// A Cluster whose endpoint and credentials now reach another cluster than
// the one that joined (spec.id is not its kube-system UID) gets no clients:
// nothing is sent to it.
func TestNewConnectionsCheckTheClusterIdentity(t *testing.T) {
	t.Parallel()
	plane := testenv.Start(t)
	ctx := context.Background()
	member := pushMember(ctx, t, plane)
	cl := &clusterv1alpha1.Cluster{}
	if err := plane.Client.Get(ctx, client.ObjectKey{Name: "member1"}, cl); err != nil {
		t.Fatal(err)
	}
	cl.Spec.ID = "the-cluster-that-joined"
	members := clusterclient.NewCache(plane.Client, clusterclient.Options{})
	t.Cleanup(members.Close)
	_, err := members.Get(ctx, cl)
	if !errors.Is(err, clusterclient.ErrIdentityChanged) || !strings.Contains(err.Error(), "spec.id is the-cluster-that-joined") {
		t.Fatalf("want ErrIdentityChanged naming spec.id, got %v", err)
	}
	ks := &corev1.Namespace{}
	if err := member.Client.Get(ctx, client.ObjectKey{Name: "kube-system"}, ks); err != nil {
		t.Fatal(err)
	}
	cl.Spec.ID = string(ks.UID)
	if _, err := members.Get(ctx, cl); err != nil {
		t.Fatalf("the right cluster was refused: %v", err)
	}
}
