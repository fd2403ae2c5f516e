package execution

import (
	"errors"
	"fmt"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestSoonResolved(t *testing.T) {
	notServed := &notServedError{errors.New("cluster m1 does not serve example.com/v1, Kind=Widget")}
	nsMissing := fmt.Errorf("applying ConfigMap team/x: %w", apierrors.NewNotFound(schema.GroupResource{Resource: "namespaces"}, "team"))
	forbidden := apierrors.NewForbidden(schema.GroupResource{Resource: "configmaps"}, "x", errors.New("no"))
	cases := []struct {
		name string
		err  error
		want bool
	}{
		{"type not served yet", fmt.Errorf("wrapped: %w", notServed), true},
		{"namespace not there yet", nsMissing, true},
		{"both", errors.Join(notServed, nsMissing), true},
		{"a real failure", forbidden, false},
		{"a real failure among waitable ones", errors.Join(notServed, forbidden), false},
	}
	for _, c := range cases {
		if got := soonResolved(c.err); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}
