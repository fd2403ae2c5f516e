package integration

import (
	"context"
	"fmt"
	"hash/fnv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/rand"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha1 "github.com/karmada-go/karmada/api/work/v1alpha1"
	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
	"github.com/karmada-go/karmada/internal/anybinding"
	"github.com/karmada-go/karmada/internal/names"
	"github.com/karmada-go/karmada/internal/testenv"
)

// earlierWorkName is the name karmada-go gave a Work before it named Works
// as Karmada v1.19 does: the suffix hashed "(string)" and the identifier.
func earlierWorkName(kind, name, namespace string) string {
	h := fnv.New32a()
	_, _ = h.Write([]byte("(string)" + strings.ToLower(namespace+"-"+name+"-"+kind)))
	return strings.ToLower(name) + "-" + rand.SafeEncodeString(fmt.Sprint(h.Sum32()))
}

// A fleet upgraded with Works that earlier versions named (the suffix of
// the release before, and the <binding>-<hash> names before that) keeps
// them: the binding controller updates them in place, no second Work is
// written beside them, and every member copy keeps its UID through the
// upgrade and a later change of the template. A template propagated after
// the upgrade gets Karmada v1.19's name.
func TestUpgradeKeepsEarlierWorkNames(t *testing.T) {
	t.Parallel()
	plane := testenv.Start(t)
	ctx := context.Background()
	member := pushMember(ctx, t, plane)
	c, mc := plane.Client, member.Client
	runMemberControllers(t, plane)
	createNamespace(ctx, t, c, "shop")
	createNamespace(ctx, t, mc, "shop")
	es := workv1alpha1.ExecutionNamespace("member1")

	type template struct {
		name, earlier string
		cm            *corev1.ConfigMap
		rb            *workv1alpha2.ResourceBinding
	}
	earlier := []*template{
		{name: "settings", earlier: earlierWorkName("ConfigMap", "settings", "shop")},
		{name: "legacy", earlier: names.BindingName("ConfigMap", "legacy") + "-5f7d8c9b"},
	}
	// What the earlier version left: templates, bindings, Works under their
	// names and the member copies made from them.
	for i, tp := range earlier {
		tp.cm = &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: tp.name}, Data: map[string]string{"v": "1"}}
		if err := c.Create(ctx, tp.cm); err != nil {
			t.Fatal(err)
		}
		tp.rb = configMapBinding(tp.cm, fmt.Sprintf("id-%d", i))
		if err := c.Create(ctx, tp.rb); err != nil {
			t.Fatal(err)
		}
		b, err := anybinding.Of(tp.rb)
		if err != nil {
			t.Fatal(err)
		}
		w := &workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Namespace: es, Name: tp.earlier, Labels: b.WorkLabels()},
			Spec: workv1alpha1.WorkSpec{Workload: workv1alpha1.WorkloadTemplate{Manifests: []workv1alpha1.Manifest{configMapManifest(t, "shop", tp.name, map[string]string{"v": "1"})}}}}
		if err := c.Create(ctx, w); err != nil {
			t.Fatal(err)
		}
	}
	uids := map[string]types.UID{}
	testenv.Eventually(t, deadline, "the earlier Works' copies in member1", func(ctx context.Context) error {
		for _, tp := range earlier {
			cm := &corev1.ConfigMap{}
			if err := mc.Get(ctx, client.ObjectKey{Namespace: "shop", Name: tp.name}, cm); err != nil {
				return err
			}
			uids[tp.name] = cm.UID
		}
		return nil
	})

	// The upgrade: this version's binding controller starts.
	runBindingController(t, plane)
	for _, tp := range earlier {
		tp.cm.Data = map[string]string{"v": "2"}
		if err := c.Update(ctx, tp.cm); err != nil {
			t.Fatal(err)
		}
	}
	fresh := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "fresh"}, Data: map[string]string{"v": "2"}}
	if err := c.Create(ctx, fresh); err != nil {
		t.Fatal(err)
	}
	if err := c.Create(ctx, configMapBinding(fresh, "id-fresh")); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, deadline, "the change in member1, through the same Works and copies", func(ctx context.Context) error {
		for _, tp := range append(earlier, &template{name: "fresh"}) {
			cm := &corev1.ConfigMap{}
			if err := mc.Get(ctx, client.ObjectKey{Namespace: "shop", Name: tp.name}, cm); err != nil {
				return err
			}
			if cm.Data["v"] != "2" {
				return fmt.Errorf("ConfigMap %s holds %v", tp.name, cm.Data)
			}
			want := names.WorkName("ConfigMap", tp.name, "shop")
			if tp.earlier != "" {
				want = tp.earlier
			}
			if got := cm.Annotations[workv1alpha1.WorkNameAnnotation]; got != want {
				return fmt.Errorf("ConfigMap %s comes from Work %q, want %q", tp.name, got, want)
			}
		}
		return nil
	})
	for _, tp := range earlier {
		cm := &corev1.ConfigMap{}
		if err := mc.Get(ctx, client.ObjectKey{Namespace: "shop", Name: tp.name}, cm); err != nil {
			t.Fatal(err)
		}
		if cm.UID != uids[tp.name] {
			t.Errorf("ConfigMap %s was made again: UID %s, was %s", tp.name, cm.UID, uids[tp.name])
		}
		if err := c.Get(ctx, client.ObjectKey{Namespace: es, Name: names.WorkName("ConfigMap", tp.name, "shop")}, &workv1alpha1.Work{}); !apierrors.IsNotFound(err) {
			t.Errorf("a second Work was written for %s beside %s (err %v)", tp.name, tp.earlier, err)
		}
	}
	if got := names.WorkName("ConfigMap", "fresh", "shop"); got == earlierWorkName("ConfigMap", "fresh", "shop") {
		t.Fatalf("the test cannot tell the names apart: both are %s", got)
	}
}

// configMapBinding is the ResourceBinding of a ConfigMap, scheduled to
// member1, with a permanent id (not created).
func configMapBinding(cm *corev1.ConfigMap, id string) *workv1alpha2.ResourceBinding {
	return &workv1alpha2.ResourceBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: cm.Namespace, Name: names.BindingName("ConfigMap", cm.Name),
			Labels: map[string]string{workv1alpha2.ResourceBindingPermanentIDLabel: id}},
		Spec: workv1alpha2.ResourceBindingSpec{
			Resource: workv1alpha2.ObjectReference{APIVersion: "v1", Kind: "ConfigMap", Namespace: cm.Namespace, Name: cm.Name, UID: cm.UID},
			Clusters: []workv1alpha2.TargetCluster{{Name: "member1"}},
		},
	}
}
