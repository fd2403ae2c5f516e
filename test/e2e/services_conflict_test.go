//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	mcsv1alpha1 "github.com/karmada-go/karmada/api/multicluster/v1alpha1"
	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
	workv1alpha1 "github.com/karmada-go/karmada/api/work/v1alpha1"
	"github.com/karmada-go/karmada/internal/scheme"
	"github.com/karmada-go/karmada/internal/services/mcs"
	"github.com/karmada-go/karmada/internal/testenv"
)

// The KEP's rules on exports, as a member's user sees them on their
// ServiceExport: Valid (False, NoService, for a Service the member does not
// have), and Conflict on every export of a Service the clusters disagree
// on, the oldest export winning; the conflict clears when they agree, and
// the records go with the exports. member1 and member2 are push clusters,
// member3 the pull one (its agent writes its export's status).
func TestServiceExportConflict(t *testing.T) {
	ctx := context.Background()
	c := karmadaClient(t)
	mcsCRDsInMembers(ctx, t, c)
	const ns = "e2e-mcs-conflict"
	createNamespaceUntilCleanup(ctx, t, c, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	member := map[string]client.Client{}
	for _, m := range []string{"member1", "member2", "member3"} {
		mc, err := client.New(restConfig(t, m), client.Options{Scheme: scheme.Scheme})
		if err != nil {
			t.Fatal(err)
		}
		member[m] = mc
		testenv.Eventually(t, 60*time.Second, "namespace "+ns+" in "+m, func(ctx context.Context) error {
			return mc.Get(ctx, client.ObjectKey{Name: ns}, &corev1.Namespace{})
		})
	}
	service := func(port int32) *corev1.Service {
		return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"},
			Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "web"}, Ports: []corev1.ServicePort{{Name: "http", Port: port, Protocol: corev1.ProtocolTCP}}}}
	}
	export := func() *mcsv1alpha1.ServiceExport {
		return &mcsv1alpha1.ServiceExport{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"}}
	}
	create := func(m string, objs ...client.Object) {
		t.Helper()
		for _, o := range objs {
			if err := member[m].Create(ctx, o); err != nil {
				t.Fatalf("%s: creating %T: %v", m, o, err)
			}
			t.Cleanup(func() { _ = member[m].Delete(context.Background(), o) })
		}
	}
	// conditions waits until the member's export says want (type →
	// "Status Reason", and a message fragment after '|').
	conditions := func(m string, want map[string]string) {
		t.Helper()
		testenv.Eventually(t, 60*time.Second, m+"'s ServiceExport conditions", func(ctx context.Context) error {
			got := &mcsv1alpha1.ServiceExport{}
			if err := member[m].Get(ctx, client.ObjectKey{Namespace: ns, Name: "web"}, got); err != nil {
				return err
			}
			if len(got.Status.Conditions) != len(want) {
				return fmt.Errorf("conditions %+v, want %v", got.Status.Conditions, want)
			}
			for typ, w := range want {
				statusReason, fragment, _ := strings.Cut(w, "|")
				cond := meta.FindStatusCondition(got.Status.Conditions, typ)
				if cond == nil || string(cond.Status)+" "+cond.Reason != statusReason || !strings.Contains(cond.Message, fragment) {
					return fmt.Errorf("%s: %+v, want %q", typ, cond, w)
				}
			}
			return nil
		})
	}

	// member1 exports first (port 80); member2 later, with 8080.
	create("member1", service(80), export())
	conditions("member1", map[string]string{"Valid": "True Valid", "Conflict": "False NoConflicts|this cluster alone"})
	// Creation times have a one-second grain: member2's export is made a
	// second later at least, so that member1's is the oldest.
	first := &mcsv1alpha1.ServiceExport{}
	if err := member["member1"].Get(ctx, client.ObjectKey{Namespace: ns, Name: "web"}, first); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 5*time.Second, "a second past member1's export", func(context.Context) error {
		if !time.Now().After(first.CreationTimestamp.Add(time.Second)) {
			return fmt.Errorf("not yet")
		}
		return nil
	})
	create("member2", service(8080), export())
	conflict := func(n int) string {
		return fmt.Sprintf(`True PortConflict|Conflicting port "http". Using 80/TCP from the oldest ServiceExport, in cluster "member1". 1/%d clusters disagree.`, n)
	}
	conditions("member1", map[string]string{"Valid": "True Valid", "Conflict": conflict(2)})
	conditions("member2", map[string]string{"Valid": "True Valid", "Conflict": conflict(2)})

	// member3 is a pull cluster: its agent's record counts once the
	// control plane exports the Service there (mcs.Takes); until then its
	// export says Valid only.
	create("member3", service(80))
	if err := member["member3"].Create(ctx, export()); err != nil {
		t.Fatal(err)
	}
	conditions("member3", map[string]string{"Valid": "True Valid"})
	// Its agent's record is there, and sways nothing.
	testenv.Eventually(t, 30*time.Second, "member3's export record", func(ctx context.Context) error {
		return c.Get(ctx, client.ObjectKey{Namespace: "karmada-es-member3", Name: mcs.ExportWorkName(ns, "web")}, &workv1alpha1.Work{})
	})
	testenv.Consistently(t, 2*time.Second, "member1's judgement without member3", func(ctx context.Context) error {
		got := &mcsv1alpha1.ServiceExport{}
		if err := member["member1"].Get(ctx, client.ObjectKey{Namespace: ns, Name: "web"}, got); err != nil {
			return err
		}
		if c := meta.FindStatusCondition(got.Status.Conditions, "Conflict"); c == nil || !strings.HasSuffix(c.Message, "1/2 clusters disagree.") {
			return fmt.Errorf("Conflict %+v", c)
		}
		return nil
	})
	if err := member["member3"].Delete(ctx, export()); err != nil {
		t.Fatal(err)
	}
	cpExport := export()
	toMember3 := &policyv1alpha1.PropagationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web-export"},
		Spec: policyv1alpha1.PropagationSpec{
			ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: mcsv1alpha1.SchemeGroupVersion.String(), Kind: "ServiceExport", Name: "web"}},
			Placement:         policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member3"}}}}}
	createUntilCleanup(ctx, t, c, cpExport, toMember3)
	for _, m := range []string{"member1", "member2", "member3"} {
		conditions(m, map[string]string{"Valid": "True Valid", "Conflict": conflict(3)})
	}

	// An export of a Service the member does not have is not valid, and
	// takes no part in the judgement.
	ghost := &mcsv1alpha1.ServiceExport{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "ghost"}}
	create("member2", ghost)
	testenv.Eventually(t, 60*time.Second, "member2's ghost export", func(ctx context.Context) error {
		got := &mcsv1alpha1.ServiceExport{}
		if err := member["member2"].Get(ctx, client.ObjectKeyFromObject(ghost), got); err != nil {
			return err
		}
		c := meta.FindStatusCondition(got.Status.Conditions, "Valid")
		if len(got.Status.Conditions) != 1 || c == nil || c.Status != metav1.ConditionFalse || c.Reason != "NoService" || c.Message != "Service "+ns+"/ghost not found" {
			return fmt.Errorf("conditions %+v", got.Status.Conditions)
		}
		return nil
	})

	// member2 agrees: the conflict clears everywhere.
	svc := &corev1.Service{}
	if err := member["member2"].Get(ctx, client.ObjectKey{Namespace: ns, Name: "web"}, svc); err != nil {
		t.Fatal(err)
	}
	svc.Spec.Ports[0].Port = 80
	if err := member["member2"].Update(ctx, svc); err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{"member1", "member2", "member3"} {
		conditions(m, map[string]string{"Valid": "True Valid", "Conflict": "False NoConflicts|The 3 exports of the Service agree"})
	}

	// The exports go: so do their records in the control plane.
	for _, m := range []string{"member1", "member2"} {
		if err := member[m].Delete(ctx, export()); err != nil {
			t.Fatal(err)
		}
	}
	deleteAll(t, c, cpExport)
	testenv.Eventually(t, 60*time.Second, "no export record left", func(ctx context.Context) error {
		works := &workv1alpha1.WorkList{}
		if err := c.List(ctx, works, client.MatchingLabels{mcs.ExportNamespaceLabel: ns}); err != nil {
			return err
		}
		if len(works.Items) > 0 {
			return fmt.Errorf("%d records left, e.g. %s/%s", len(works.Items), works.Items[0].Namespace, works.Items[0].Name)
		}
		return nil
	})
}
