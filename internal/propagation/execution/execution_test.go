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

// Only manifests that are not objects make a failure terminal: anything
// else may succeed on a retry.
func TestOnlyInvalid(t *testing.T) {
	invalid := &invalidManifestError{errors.New("manifest 0 is not a valid object")}
	forbidden := apierrors.NewForbidden(schema.GroupResource{Resource: "configmaps"}, "x", errors.New("no"))
	for _, c := range []struct {
		name string
		err  error
		want bool
	}{
		{"an invalid manifest", invalid, true},
		{"two invalid manifests", errors.Join(invalid, invalid), true},
		{"an invalid manifest and a failure", errors.Join(invalid, forbidden), false},
		{"a failure", forbidden, false},
	} {
		if got := onlyInvalid(c.err); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}
