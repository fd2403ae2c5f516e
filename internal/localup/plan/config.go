package plan

import (
	"fmt"
	"net"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/karmada-go/karmada/internal/clusters/memberrights"
	"github.com/karmada-go/karmada/internal/interpreter/thirdparty"
	"github.com/karmada-go/karmada/internal/localup/pki"
	"github.com/karmada-go/karmada/internal/localup/process"
)

// Port layout: every cluster owns a block of ten ports starting at
// PortBase + 10*index, where index 0 is the Karmada control plane and index i
// is member i. Slots inside a block:
const (
	slotAPIServer         = 0
	slotControllerManager = 1
	slotScheduler         = 2
	slotKwok              = 3
	// The control plane runs no kube-scheduler and no kwok: karmada-webhook
	// takes their slots there.
	slotKarmadaWebhook        = slotScheduler
	slotKarmadaWebhookMetrics = slotKwok
	// Karmada components, control plane block only.
	slotKarmadaControllerManagerMetrics = 4
	slotKarmadaControllerManagerHealth  = 5
	slotKarmadaSchedulerMetrics         = 6
	slotKarmadaSchedulerHealth          = 7
	slotEtcdClient                      = 8 // control plane block only
	slotEtcdPeer                        = 9 // control plane block only
)

// ControlPlane is the name of the Karmada control plane in the plan and the
// kubeconfig context that reaches it.
const (
	ControlPlane        = "karmada"
	ControlPlaneContext = "karmada-apiserver"
)

// Config is what `karmada-local up` is asked to run.
type Config struct {
	// StateDir holds certificates, etcd data, logs and pid files.
	StateDir string
	// BinDir holds the upstream binaries built by `make build`.
	BinDir string
	// Kubeconfig is the file that receives the fleet's contexts.
	Kubeconfig string
	// Members is the number of member clusters, named member1..N.
	Members int
	// NodesPerMember is the number of kwok nodes of each member.
	NodesPerMember int
	// PortBase is the first port of the layout above.
	PortBase int
	// PropagateKinds are the kinds Karmada may write in the members
	// (karmadactl join --propagate-kinds; DefaultPropagateKinds when
	// empty); ClusterAdmin grants it every right instead.
	PropagateKinds []string
	ClusterAdmin   bool
	// PullMembers are registered in pull mode (karmadactl register) and
	// run a karmada-agent; the others are joined in push mode.
	PullMembers []string
	// Profiling serves /debug/pprof on every kube-apiserver and on etcd,
	// to clients they authenticate (an admin of the cluster; etcd's root
	// client certificate). Off by default, as the hardening guides want.
	Profiling bool
	// AdvertiseAddress is where the API servers listen and are reached
	// (127.0.0.1 when empty): another local address lets pods of a host
	// cluster (karmada-local host) reach the members.
	AdvertiseAddress string
	// ExternalKarmada, when set, is the kubeconfig of a Karmada control
	// plane running elsewhere (installed on a host cluster, say), in
	// context ExternalKarmadaContext: the fleet starts no control plane of
	// its own and joins (or registers) its members there.
	ExternalKarmada        string
	ExternalKarmadaContext string
	// HA runs the control plane highly available (ha.go): three etcd
	// members, two karmada-apiservers and two karmada-webhooks behind
	// haproxy, two leader-elected replicas of every controller.
	HA bool
	// CertValidity and CAValidity are the lifetimes of the certificates
	// and CAs karmada-local makes (zero: DefaultCertValidity and
	// DefaultCAValidity). A certificate issued for another lifetime is
	// issued again by the next up; a CA is kept (replacing it would
	// invalidate every kubeconfig).
	CertValidity, CAValidity time.Duration
	// ClusterFailureThreshold and ClusterSuccessThreshold are how long a
	// member must keep failing (passing) its health probe before its
	// Cluster turns NotReady (Ready again): the controller manager's and the
	// agents' flags of those names (zero: theirs, 30 s).
	ClusterFailureThreshold, ClusterSuccessThreshold time.Duration
	// NodeCapacity gives a member's kwok nodes another capacity than the
	// default 8 cpu, 32Gi, 110 pods (--node-capacity); resources not named
	// keep the default.
	NodeCapacity map[string]corev1.ResourceList
	// DeschedulingInterval and UnschedulableThreshold are
	// karmada-descheduler's flags of those names (zero: its defaults, 2m
	// and 5m).
	DeschedulingInterval, UnschedulableThreshold time.Duration
	// Renew issues every leaf certificate again (set by certs renew, not
	// a flag).
	Renew bool
}

// thresholdArgs are the health thresholds' flags, when set.
func (c Config) thresholdArgs() *process.Args {
	args := process.NewArgs()
	if c.ClusterFailureThreshold > 0 {
		args.Set("cluster-failure-threshold", c.ClusterFailureThreshold)
	}
	if c.ClusterSuccessThreshold > 0 {
		args.Set("cluster-success-threshold", c.ClusterSuccessThreshold)
	}
	return args
}

// Validity is how the fleet's CAs issue certificates.
func (c Config) Validity() pki.Validity {
	return pki.Validity{CA: c.CAValidity, Leaf: c.CertValidity, Renew: c.Renew}
}

func (c Config) caValidityOrDefault() time.Duration { return c.Validity().CALifetime() }

// Address is where the fleet's API servers listen.
func (c Config) Address() string {
	if c.AdvertiseAddress == "" {
		return "127.0.0.1"
	}
	return c.AdvertiseAddress
}

// External says whether the control plane runs elsewhere.
func (c Config) External() bool { return c.ExternalKarmada != "" }

// DefaultPropagateKinds are what the fleet's members let Karmada write:
// karmadactl join's default, the kinds of the customizations we ship
// (CloneSets, FlinkDeployments, ...), and the example.com group of the e2e
// tests' sample CRD.
var DefaultPropagateKinds = append(append(slices.Clone(memberrights.DefaultKinds), thirdparty.Resources...), "*.example.com")

// Validate rejects configurations that cannot work, naming the flag.
func (c Config) Validate() error {
	switch {
	case c.Members < 0 || c.Members > 50:
		return fmt.Errorf("--members=%d: must be between 0 and 50", c.Members)
	case c.NodesPerMember < 1 || c.NodesPerMember > 500:
		return fmt.Errorf("--nodes-per-member=%d: must be between 1 and 500", c.NodesPerMember)
	case c.PortBase < 1024 || c.LastPort() > 65535:
		return fmt.Errorf("--port-base=%d: the fleet needs ports %d to %d, which must lie between 1024 and 65535", c.PortBase, c.PortBase, c.LastPort())
	case c.DeschedulingInterval < 0 || c.UnschedulableThreshold < 0:
		return fmt.Errorf("--descheduling-interval=%s and --unschedulable-threshold=%s must not be negative", c.DeschedulingInterval, c.UnschedulableThreshold)
	case c.ClusterFailureThreshold < 0 || c.ClusterSuccessThreshold < 0:
		return fmt.Errorf("--cluster-failure-threshold=%s and --cluster-success-threshold=%s must not be negative", c.ClusterFailureThreshold, c.ClusterSuccessThreshold)
	case c.StateDir == "":
		return fmt.Errorf("--state-dir must not be empty")
	case c.Kubeconfig == "":
		return fmt.Errorf("--kubeconfig must not be empty")
	case c.ClusterAdmin && len(c.PropagateKinds) > 0:
		return fmt.Errorf("--propagate-kinds and --cluster-admin: choose one (--cluster-admin grants every kind)")
	case c.CertValidity != 0 && c.CertValidity < time.Hour:
		return fmt.Errorf("--cert-validity-period=%s: must be at least 1h", c.CertValidity)
	case c.CAValidity != 0 && c.CAValidity < time.Hour:
		return fmt.Errorf("--ca-validity-period=%s: must be at least 1h", c.CAValidity)
	case c.CertValidity != 0 && c.CertValidity > c.caValidityOrDefault():
		return fmt.Errorf("--cert-validity-period=%s: must not exceed the CAs' lifetime (--ca-validity-period=%s): a certificate cannot outlive its CA", c.CertValidity, c.caValidityOrDefault())
	case c.HA && c.ExternalKarmada != "":
		return fmt.Errorf("--ha with --karmada-kubeconfig: the control plane runs elsewhere, so there is none here to make highly available")
	case c.ExternalKarmada != "" && c.Members == 0:
		return fmt.Errorf("--karmada-kubeconfig with --members=0: a fleet joined to another control plane needs members")
	}
	if c.AdvertiseAddress != "" {
		ip := net.ParseIP(c.AdvertiseAddress)
		if ip == nil || ip.To4() == nil || ip.IsUnspecified() {
			return fmt.Errorf("--advertise-address=%q: must be an IPv4 address of this machine, e.g. 127.0.0.1 or the host cluster's node address", c.AdvertiseAddress)
		}
		l, err := net.Listen("tcp", net.JoinHostPort(c.AdvertiseAddress, "0"))
		if err != nil {
			return fmt.Errorf("--advertise-address=%s: not an address of this machine (%v); karmada-local host up gives the host cluster's node one", c.AdvertiseAddress, err)
		}
		_ = l.Close()
	}
	for m, rl := range c.NodeCapacity {
		if !slices.Contains(memberNames(c.Members), m) {
			return fmt.Errorf("--node-capacity: %q is not a member of the fleet (member1..member%d)", m, c.Members)
		}
		for name, q := range rl {
			if q.Sign() <= 0 {
				return fmt.Errorf("--node-capacity %s: %s=%s must be positive", m, name, q.String())
			}
		}
	}
	for _, m := range c.PullMembers {
		if !slices.Contains(memberNames(c.Members), m) {
			return fmt.Errorf("--pull-members: %q is not a member of the fleet (member1..member%d)", m, c.Members)
		}
	}
	if !c.ClusterAdmin && len(c.PropagateKinds) > 0 {
		if _, err := memberrights.ParseKinds(c.PropagateKinds); err != nil {
			return err
		}
	}
	return nil
}

// MemberName is the name of member i (1-based).
func MemberName(i int) string { return fmt.Sprintf("member%d", i) }

func memberNames(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = MemberName(i + 1)
	}
	return out
}
