package anybinding

import (
	"context"
	"errors"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
	"github.com/karmada-go/karmada/internal/interpreter"
	"github.com/karmada-go/karmada/internal/scheme"
)

// TestSetInterpreted: a failure sets the condition False naming it; only
// the controller running that operation clears it; a binding that never
// failed is not written.
func TestSetInterpreted(t *testing.T) {
	ctx := context.Background()
	rb := &workv1alpha2.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web-deployment"}}
	c := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(rb).WithStatusSubresource(rb).Build()
	get := func() Binding {
		t.Helper()
		got := &workv1alpha2.ResourceBinding{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(rb), got); err != nil {
			t.Fatal(err)
		}
		b, err := Of(got)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	cond := func() *metav1.Condition {
		return meta.FindStatusCondition(get().Status.Conditions, workv1alpha2.ResourceInterpreted)
	}
	rv := get().Object.GetResourceVersion()
	if err := SetInterpreted(ctx, c, get(), []string{"AggregateStatus"}, nil); err != nil || get().Object.GetResourceVersion() != rv {
		t.Fatalf("a binding that never failed was written (%v)", err)
	}
	failure := &interpreter.Error{Source: "ResourceInterpreterCustomization/x", Operation: interpreter.OpReviseReplica, Err: errors.New("boom")}
	if err := SetInterpreted(ctx, c, get(), []string{"ReviseReplica"}, failure); err != nil {
		t.Fatal(err)
	}
	if got := cond(); got == nil || got.Status != metav1.ConditionFalse || got.Reason != workv1alpha2.ReasonInterpretFailed ||
		got.Message != "ResourceInterpreterCustomization/x, operation ReviseReplica: boom" {
		t.Fatalf("condition %+v", got)
	}
	// Another controller's success does not clear it.
	if err := SetInterpreted(ctx, c, get(), []string{"AggregateStatus"}, nil); err != nil || cond().Status != metav1.ConditionFalse {
		t.Fatalf("cleared by another operation's success: %+v (%v)", cond(), err)
	}
	if err := SetInterpreted(ctx, c, get(), []string{"ReviseReplica"}, nil); err != nil || cond().Status != metav1.ConditionTrue {
		t.Fatalf("not cleared by its own operation's success: %+v (%v)", cond(), err)
	}
}
