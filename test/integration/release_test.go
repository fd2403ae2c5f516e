package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha1 "github.com/karmada-go/karmada/api/work/v1alpha1"
	"github.com/karmada-go/karmada/internal/clusters/clusterclient"
	"github.com/karmada-go/karmada/internal/propagation/execution"
	"github.com/karmada-go/karmada/internal/propagation/orphans"
	"github.com/karmada-go/karmada/internal/testenv"
)

// With conflictResolution Overwrite, a member's own object is adopted: it
// is marked with the Work that adopted it, updated from the Work, and when
// the Work is deleted it is released (Karmada's marks removed), not
// deleted. An object the Work created is deleted with it.
func TestOverwriteAdoptsAndReleases(t *testing.T) {
	t.Parallel()
	plane := testenv.Start(t)
	ctx := context.Background()
	member := pushMember(ctx, t, plane)
	runMemberControllers(t, plane)
	mc := member.Client
	theirs := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "theirs", Labels: map[string]string{"team": "member"}},
		Data: map[string]string{"mine": "yes"}}
	if err := mc.Create(ctx, theirs); err != nil {
		t.Fatal(err)
	}
	manifest := func(name string) workv1alpha1.Manifest {
		m := configMapManifest(t, "default", name, map[string]string{"from": "karmada"})
		var obj map[string]any
		_ = json.Unmarshal(m.Raw, &obj)
		obj["metadata"].(map[string]any)["annotations"] = map[string]any{workv1alpha1.ConflictResolutionAnnotation: workv1alpha1.ConflictOverwrite}
		m.Raw, _ = json.Marshal(obj)
		return m
	}
	work := &workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Namespace: workv1alpha1.ExecutionNamespace("member1"), Name: "adopting"},
		Spec: workv1alpha1.WorkSpec{Workload: workv1alpha1.WorkloadTemplate{Manifests: []workv1alpha1.Manifest{manifest("theirs"), manifest("ours")}}}}
	if err := plane.Client.Create(ctx, work); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 20*time.Second, "the member's ConfigMap adopted", func(ctx context.Context) error {
		cm := &corev1.ConfigMap{}
		if err := mc.Get(ctx, client.ObjectKey{Namespace: "default", Name: "theirs"}, cm); err != nil {
			return err
		}
		if cm.Annotations[workv1alpha1.AdoptedAnnotation] != work.Namespace+"/"+work.Name || cm.Data["from"] != "karmada" {
			return fmt.Errorf("annotations %v, data %v", cm.Annotations, cm.Data)
		}
		return mc.Get(ctx, client.ObjectKey{Namespace: "default", Name: "ours"}, &corev1.ConfigMap{})
	})
	created := &corev1.ConfigMap{}
	if err := mc.Get(ctx, client.ObjectKey{Namespace: "default", Name: "ours"}, created); err != nil || created.Annotations[workv1alpha1.AdoptedAnnotation] != "" {
		t.Fatalf("the ConfigMap the Work created is marked adopted: %v (err %v)", created.Annotations, err)
	}

	if err := plane.Client.Delete(ctx, work); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 20*time.Second, "the Work's copies removed or released", func(ctx context.Context) error {
		if err := mc.Get(ctx, client.ObjectKey{Namespace: "default", Name: "ours"}, &corev1.ConfigMap{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("the ConfigMap the Work created is still there (err %v)", err)
		}
		cm := &corev1.ConfigMap{}
		if err := mc.Get(ctx, client.ObjectKey{Namespace: "default", Name: "theirs"}, cm); err != nil {
			return fmt.Errorf("the member's own ConfigMap was deleted: %v", err)
		}
		for k := range cm.Annotations {
			if strings.Contains(k, "karmada.io/") && k != workv1alpha1.PreAdoptionAnnotation {
				return fmt.Errorf("annotation %s left on the released ConfigMap", k)
			}
		}
		for k := range cm.Labels {
			if strings.Contains(k, "karmada.io/") {
				return fmt.Errorf("label %s left on the released ConfigMap", k)
			}
		}
		if cm.Labels["team"] != "member" || cm.Data["mine"] != "yes" {
			return fmt.Errorf("the member's own fields were lost: labels %v, data %v", cm.Labels, cm.Data)
		}
		// What it was before the adoption stays on record.
		before, err := execution.ReadPreAdoption(cm.Annotations[workv1alpha1.PreAdoptionAnnotation])
		if err != nil {
			return fmt.Errorf("the pre-adoption record: %w", err)
		}
		if d, _, _ := unstructured.NestedStringMap(before.Object, "data"); len(d) != 1 || d["mine"] != "yes" || before.GetLabels()["team"] != "member" {
			return fmt.Errorf("the pre-adoption record is %v, want the member's own ConfigMap", before.Object)
		}
		return nil
	})
}

// A Work that preserves its resources on deletion leaves its copies in the
// member as the member's own: present, without Karmada's marks. Deleted
// while its cluster is not Ready, it waits for the cluster to release them
// (let go at once, it would leave Karmada's marks on them, and the orphan
// sweep would delete them).
func TestPreservedCopiesAreReleased(t *testing.T) {
	t.Parallel()
	plane := testenv.Start(t)
	ctx := context.Background()
	member := pushMember(ctx, t, plane)
	runMemberControllers(t, plane)
	work := &workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Namespace: workv1alpha1.ExecutionNamespace("member1"), Name: "kept"},
		Spec: workv1alpha1.WorkSpec{PreserveResourcesOnDeletion: ptr.To(true),
			Workload: workv1alpha1.WorkloadTemplate{Manifests: []workv1alpha1.Manifest{configMapManifest(t, "default", "kept", map[string]string{"k": "v"})}}}}
	if err := plane.Client.Create(ctx, work); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 20*time.Second, "the ConfigMap applied", func(ctx context.Context) error {
		cm := &corev1.ConfigMap{}
		if err := member.Client.Get(ctx, client.ObjectKey{Namespace: "default", Name: "kept"}, cm); err != nil {
			return err
		}
		if cm.Labels[workv1alpha1.ManagedLabel] != "true" {
			return fmt.Errorf("labels %v", cm.Labels)
		}
		return nil
	})
	setReady(ctx, t, plane.Client, "member1", metav1.ConditionFalse)
	if err := plane.Client.Delete(ctx, work); err != nil {
		t.Fatal(err)
	}
	// Deleted while the cluster is not Ready: held, as long as it is not.
	// (Watched through the controller's own progress: the Work's deletion
	// is seen, and the copy still marked.)
	testenv.Eventually(t, 20*time.Second, "the Work deleting", func(ctx context.Context) error {
		w := &workv1alpha1.Work{}
		if err := plane.Client.Get(ctx, client.ObjectKeyFromObject(work), w); err != nil {
			return fmt.Errorf("the Work was let go while its cluster is not Ready: %v", err)
		}
		if w.DeletionTimestamp.IsZero() {
			return fmt.Errorf("not deleting yet")
		}
		return nil
	})
	for range 3 {
		// Any change of the Cluster brings the Work back to the controller.
		setReady(ctx, t, plane.Client, "member1", metav1.ConditionFalse)
	}
	if err := plane.Client.Get(ctx, client.ObjectKeyFromObject(work), &workv1alpha1.Work{}); err != nil {
		t.Fatalf("the Work was let go while its cluster is not Ready: %v", err)
	}
	setReady(ctx, t, plane.Client, "member1", metav1.ConditionTrue)
	testenv.Eventually(t, 20*time.Second, "the Work gone and its copy released", func(ctx context.Context) error {
		if err := plane.Client.Get(ctx, client.ObjectKeyFromObject(work), &workv1alpha1.Work{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("the Work is still there (err %v)", err)
		}
		cm := &corev1.ConfigMap{}
		if err := member.Client.Get(ctx, client.ObjectKey{Namespace: "default", Name: "kept"}, cm); err != nil {
			return fmt.Errorf("the preserved ConfigMap is gone: %v", err)
		}
		for k := range cm.Labels {
			if strings.Contains(k, "karmada.io/") {
				return fmt.Errorf("label %s left on the preserved copy", k)
			}
		}
		for k := range cm.Annotations {
			if strings.Contains(k, "karmada.io/") {
				return fmt.Errorf("annotation %s left on the preserved copy", k)
			}
		}
		return nil
	})
}

// The orphan sweep finds member objects marked as Karmada's whose Work is
// gone; with removal on, what two sweeps in a row find is deleted (or,
// when adopted, released); objects of an existing Work are left alone.
func TestOrphanSweep(t *testing.T) {
	t.Parallel()
	plane := testenv.Start(t)
	ctx := context.Background()
	member := pushMember(ctx, t, plane)
	// The Work "present" holds ConfigMap default/kept; default/renamed,
	// which it made under an earlier manifest, is left over.
	present := &workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Namespace: workv1alpha1.ExecutionNamespace("member1"), Name: "present"},
		Spec: workv1alpha1.WorkSpec{Workload: workv1alpha1.WorkloadTemplate{Manifests: []workv1alpha1.Manifest{configMapManifest(t, "default", "kept", nil)}}}}
	if err := plane.Client.Create(ctx, present); err != nil {
		t.Fatal(err)
	}
	marked := func(name, work string, adopted bool) *corev1.ConfigMap {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name,
			Labels:      map[string]string{workv1alpha1.ManagedLabel: "true", "team": "x"},
			Annotations: map[string]string{workv1alpha1.WorkNamespaceAnnotation: workv1alpha1.ExecutionNamespace("member1"), workv1alpha1.WorkNameAnnotation: work}}}
		if adopted {
			cm.Annotations[workv1alpha1.AdoptedAnnotation] = workv1alpha1.ExecutionNamespace("member1") + "/" + work
		}
		if err := member.Client.Create(ctx, cm); err != nil {
			t.Fatal(err)
		}
		return cm
	}
	marked("orphan", "gone", false)
	marked("adopted-orphan", "gone", true)
	marked("kept", "present", false)
	marked("renamed", "present", false)
	members := clusterclient.NewCache(plane.Client, clusterclient.Options{})
	t.Cleanup(members.Close)
	// Pages of one object: every list goes through continue tokens.
	s := &orphans.Sweeper{Client: plane.Client, Members: members, Remove: true, ListSpacing: time.Millisecond, PageSize: 1}
	get := func(name string) (*corev1.ConfigMap, error) {
		cm := &corev1.ConfigMap{}
		return cm, member.Client.Get(ctx, client.ObjectKey{Namespace: "default", Name: name}, cm)
	}
	if err := s.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"orphan", "adopted-orphan", "kept", "renamed"} {
		if cm, err := get(name); err != nil || cm.Labels[workv1alpha1.ManagedLabel] != "true" {
			t.Fatalf("the first sweep touched %s (err %v)", name, err)
		}
	}
	if err := s.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := get("orphan"); !apierrors.IsNotFound(err) {
		t.Errorf("the orphan Karmada created is still there after two sweeps (err %v)", err)
	}
	if _, err := get("renamed"); !apierrors.IsNotFound(err) {
		t.Errorf("the copy its Work no longer holds is still there after two sweeps (err %v)", err)
	}
	if cm, err := get("adopted-orphan"); err != nil || cm.Labels[workv1alpha1.ManagedLabel] != "" || cm.Labels["team"] != "x" {
		t.Errorf("the adopted orphan was not released (labels %v, err %v)", cm.Labels, err)
	}
	if cm, err := get("kept"); err != nil || cm.Labels[workv1alpha1.ManagedLabel] != "true" {
		t.Errorf("an object of an existing Work was touched (err %v)", err)
	}
}
