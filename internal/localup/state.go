package localup

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/karmada-go/karmada/internal/localup/plan"
	"github.com/karmada-go/karmada/internal/localup/process"
)

// stateVersion is the layout version of the state directory. A directory
// written by another version is reported as stale instead of being misread.
const stateVersion = 1

// stateRecord is written to <state>/fleet.json by up.
type stateRecord struct {
	Version        int    `json:"version"`
	Members        int    `json:"members"`
	NodesPerMember int    `json:"nodesPerMember"`
	PortBase       int    `json:"portBase"`
	Kubeconfig     string `json:"kubeconfig"`
	// PullMembers are the members registered in pull mode.
	PullMembers []string `json:"pullMembers,omitempty"`
	// Profiling is up's --profiling.
	Profiling bool `json:"profiling,omitempty"`
	// PropagateKinds and ClusterAdmin are what the members let Karmada
	// write, as up was last given them: a later up (or a restart) without
	// either flag keeps them rather than narrowing the members' grants
	// back to the default. They may change while the fleet runs.
	PropagateKinds []string `json:"propagateKinds,omitempty"`
	ClusterAdmin   bool     `json:"clusterAdmin,omitempty"`
	// AdvertiseAddress, ExternalKarmada and ExternalKarmadaContext are up's
	// --advertise-address, --karmada-kubeconfig and --karmada-context.
	AdvertiseAddress       string `json:"advertiseAddress,omitempty"`
	ExternalKarmada        string `json:"externalKarmada,omitempty"`
	ExternalKarmadaContext string `json:"externalKarmadaContext,omitempty"`
	// HA is up's --ha.
	HA bool `json:"ha,omitempty"`
	// CertValidity and CAValidity are up's --cert-validity-period and
	// --ca-validity-period, kept as PropagateKinds is (0: the defaults).
	CertValidity time.Duration `json:"certValidity,omitempty"`
	CAValidity   time.Duration `json:"caValidity,omitempty"`
	// ClusterFailureThreshold and ClusterSuccessThreshold are up's flags
	// of those names, kept as the lifetimes are (0: the components').
	ClusterFailureThreshold time.Duration `json:"clusterFailureThreshold,omitempty"`
	ClusterSuccessThreshold time.Duration `json:"clusterSuccessThreshold,omitempty"`
	// NodeCapacity is up's --node-capacity, kept as the thresholds are.
	NodeCapacity map[string]corev1.ResourceList `json:"nodeCapacity,omitempty"`
	// DeschedulingInterval and UnschedulableThreshold are up's flags of
	// those names, kept as the thresholds are.
	DeschedulingInterval   time.Duration `json:"deschedulingInterval,omitempty"`
	UnschedulableThreshold time.Duration `json:"unschedulableThreshold,omitempty"`
}

// recordOf is what up records of cfg.
func recordOf(cfg plan.Config) stateRecord {
	return stateRecord{Members: cfg.Members, NodesPerMember: cfg.NodesPerMember, PortBase: cfg.PortBase,
		Kubeconfig: cfg.Kubeconfig, PullMembers: cfg.PullMembers, Profiling: cfg.Profiling,
		PropagateKinds: cfg.PropagateKinds, ClusterAdmin: cfg.ClusterAdmin,
		AdvertiseAddress: cfg.AdvertiseAddress, ExternalKarmada: cfg.ExternalKarmada, ExternalKarmadaContext: cfg.ExternalKarmadaContext, HA: cfg.HA,
		CertValidity: cfg.CertValidity, CAValidity: cfg.CAValidity,
		ClusterFailureThreshold: cfg.ClusterFailureThreshold, ClusterSuccessThreshold: cfg.ClusterSuccessThreshold, NodeCapacity: cfg.NodeCapacity,
		DeschedulingInterval: cfg.DeschedulingInterval, UnschedulableThreshold: cfg.UnschedulableThreshold}
}

// config is the configuration of the recorded fleet.
func (r stateRecord) config(stateDir, binDir string) plan.Config {
	return plan.Config{StateDir: stateDir, BinDir: binDir, Kubeconfig: r.Kubeconfig, Members: r.Members,
		NodesPerMember: r.NodesPerMember, PortBase: r.PortBase, PullMembers: r.PullMembers, Profiling: r.Profiling,
		PropagateKinds: r.PropagateKinds, ClusterAdmin: r.ClusterAdmin,
		AdvertiseAddress: r.AdvertiseAddress, ExternalKarmada: r.ExternalKarmada, ExternalKarmadaContext: r.ExternalKarmadaContext, HA: r.HA,
		CertValidity: r.CertValidity, CAValidity: r.CAValidity,
		ClusterFailureThreshold: r.ClusterFailureThreshold, ClusterSuccessThreshold: r.ClusterSuccessThreshold, NodeCapacity: r.NodeCapacity,
		DeschedulingInterval: r.DeschedulingInterval, UnschedulableThreshold: r.UnschedulableThreshold}
}

// sameFleet reports whether two records describe the same processes with
// the same flags (the kubeconfig may move).
func (r stateRecord) sameFleet(o stateRecord) bool {
	return r.Members == o.Members && r.PortBase == o.PortBase && r.NodesPerMember == o.NodesPerMember &&
		slices.Equal(sorted(r.PullMembers), sorted(o.PullMembers)) && r.Profiling == o.Profiling &&
		r.AdvertiseAddress == o.AdvertiseAddress && r.ExternalKarmada == o.ExternalKarmada && r.ExternalKarmadaContext == o.ExternalKarmadaContext && r.HA == o.HA
}

func statePath(dir string) string { return filepath.Join(dir, "fleet.json") }

// readState returns the record, or nil when the directory holds no fleet.
func readState(dir string) (*stateRecord, error) {
	data, err := os.ReadFile(statePath(dir))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", statePath(dir), err)
	}
	rec := &stateRecord{}
	if err := json.Unmarshal(data, rec); err != nil || rec.Version != stateVersion {
		return nil, &process.StaleStateError{Dir: dir, Reason: fmt.Sprintf("fleet.json is not a version %d record", stateVersion)}
	}
	return rec, nil
}

func writeState(dir string, rec stateRecord) error {
	rec.Version = stateVersion
	data, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("creating state directory %s: %w", dir, err)
	}
	tmp := statePath(dir) + ".tmp"
	if err := os.WriteFile(tmp, append(data, '\n'), 0o600); err != nil {
		return fmt.Errorf("writing %s: %w", tmp, err)
	}
	return os.Rename(tmp, statePath(dir))
}

// fleetFromState rebuilds the fleet recorded in a state directory.
func fleetFromState(stateDir, binDir string) (*plan.Fleet, error) {
	rec, err := readState(stateDir)
	if err != nil {
		return nil, err
	}
	if rec == nil {
		return nil, fmt.Errorf("no fleet in %s: run `karmada-local up` first", stateDir)
	}
	f := plan.NewFleet(rec.config(stateDir, binDir))
	if err := f.Prepare(); err != nil {
		return nil, err
	}
	return f, nil
}
