package clusterclient

import (
	"testing"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
)

// TestSideServesItsModeOnly: the control plane acts for push-mode clusters
// (and for a Cluster that names no mode, which Karmada defaults to Push),
// an agent for pull-mode ones; never both, never neither.
func TestSideServesItsModeOnly(t *testing.T) {
	for _, tc := range []struct {
		side Side
		mode clusterv1alpha1.ClusterSyncMode
		want bool
	}{
		{ControlPlane, clusterv1alpha1.Push, true},
		{ControlPlane, "", true},
		{ControlPlane, clusterv1alpha1.Pull, false},
		{Agent, clusterv1alpha1.Pull, true},
		{Agent, clusterv1alpha1.Push, false},
		{Agent, "", false},
	} {
		c := &clusterv1alpha1.Cluster{Spec: clusterv1alpha1.ClusterSpec{SyncMode: tc.mode}}
		if got := tc.side.Serves(c); got != tc.want {
			t.Errorf("side %d serves a cluster of mode %q: %v, want %v", tc.side, tc.mode, got, tc.want)
		}
	}
	var zero Side
	if zero != ControlPlane {
		t.Errorf("the zero Side is %d, want the control plane", zero)
	}
}
