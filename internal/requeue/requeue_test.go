package requeue

import (
	"errors"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestOnConflict(t *testing.T) {
	conflict := apierrors.NewConflict(schema.GroupResource{Resource: "works"}, "w", errors.New("changed"))
	if res, err := OnConflict(conflict); err != nil || res.RequeueAfter != ConflictDelay {
		t.Errorf("conflict: %+v, %v; want a retry after %s and no error", res, err, ConflictDelay)
	}
	other := errors.New("boom")
	if res, err := OnConflict(other); err != other || res.RequeueAfter != 0 {
		t.Errorf("other error: %+v, %v; want it returned", res, err)
	}
	if res, err := OnConflict(nil); err != nil || res.RequeueAfter != 0 {
		t.Errorf("nil: %+v, %v", res, err)
	}
}
