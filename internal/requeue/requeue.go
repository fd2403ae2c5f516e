// Package requeue holds the reconcile results that controllers share for
// errors that are not failures.
package requeue

import (
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// ConflictDelay is how long a reconcile whose write lost an optimistic-lock
// race waits before it runs again: long enough for the cache to receive the
// newer object that won, so the retry does not lose the same race.
const ConflictDelay = 100 * time.Millisecond

// OnConflict turns a write that lost a race with another writer into a
// retry after ConflictDelay, rather than an error in the log; other errors
// (and nil) pass through.
func OnConflict(err error) (reconcile.Result, error) {
	if apierrors.IsConflict(err) {
		return reconcile.Result{RequeueAfter: ConflictDelay}, nil
	}
	return reconcile.Result{}, err
}
