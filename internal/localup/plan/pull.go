package plan

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	"github.com/karmada-go/karmada/internal/localup/kwok"
	"github.com/karmada-go/karmada/internal/localup/pki"
	"github.com/karmada-go/karmada/internal/localup/process"
	"github.com/karmada-go/karmada/internal/registration/agentcert"
	"github.com/karmada-go/karmada/internal/registration/register"
	"github.com/karmada-go/karmada/internal/registration/token"
)

// Member slots of a pull-mode member's karmada-agent.
const (
	slotAgentMetrics = 4
	slotAgentHealth  = 5
)

// AgentStep is the name of a pull-mode member's agent process.
func AgentStep(member string) string { return member + "/karmada-agent" }

// preparePull gives a pull-mode member's agent its member identity (a
// client certificate of the member's CA, bound by register to the agent's
// rights there) and the path of its control plane kubeconfig.
func (f *Fleet) preparePull(c *Cluster) error {
	cert, key, err := c.CA.Ensure(pki.CertSpec{Name: "karmada-agent-client", CommonName: register.AgentUser, Client: true})
	if err != nil {
		return err
	}
	c.agentMemberConfig = filepath.Join(c.dir, "karmada-agent", "member.kubeconfig")
	if err := writeComponentKubeconfig(c.agentMemberConfig, c, register.AgentUser, cert, key); err != nil {
		return err
	}
	c.agentKarmadaConfig = filepath.Join(c.dir, "karmada-agent", "karmada.kubeconfig")
	return nil
}

// pullSteps register a pull-mode member with karmadactl register's code
// (a bootstrap token used once) and run its karmada-agent.
func (f *Fleet) PullSteps(c *Cluster, nodes string) []*process.Step {
	reg := &process.Step{
		Name:    c.Name + "/register",
		Cluster: c.Name,
		// The registration is approved by the controller manager's
		// agentcsrapproving controller, and signed by the control plane's
		// kube-controller-manager.
		After: []string{nodes, "karmada/setup", clusterAPIStep, "karmada/karmada-controller-manager", "karmada/kube-controller-manager"},
		Run:   f.registerMember(c),
	}
	region, zones := kwok.Topology(c.Index)
	health := c.ports[slotAgentHealth]
	agent := &process.Step{
		Name:    AgentStep(c.Name),
		Cluster: c.Name,
		After:   []string{reg.Name},
		Binary:  f.bin("karmada-agent"),
		Args: process.NewArgs().
			Set("karmada-kubeconfig", c.agentKarmadaConfig).
			Set("kubeconfig", c.agentMemberConfig).
			Set("cluster-name", c.Name).
			Set("cluster-provider", "kwok").
			Set("cluster-region", region).
			Set("cluster-zones", zones).
			Set("metrics-bind-address", fmt.Sprintf("127.0.0.1:%d", c.ports[slotAgentMetrics])).
			Set("health-probe-bind-address", fmt.Sprintf("127.0.0.1:%d", health)).
			Set("v", 2).
			Merge(f.Cfg.thresholdArgs()).
			Strings(),
		Ports: []int{c.ports[slotAgentMetrics], health},
		// Healthy once it has claimed its Cluster and started its
		// controllers.
		Probe:        &process.Probe{URL: fmt.Sprintf("http://127.0.0.1:%d/healthz", health)},
		ReadyTimeout: 60 * time.Second,
	}
	return []*process.Step{reg, agent}
}

// registerMember registers the member in pull mode, as `karmadactl token
// create` then `karmadactl register` would, unless it is registered
// already with a kubeconfig in its member; either way the agent's
// kubeconfig file is written from the member's Secret, where the agent
// keeps its renewed certificates.
func (f *Fleet) registerMember(c *Cluster) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		karmadaCfg, err := f.karmadaConfig()
		if err != nil {
			return err
		}
		karmada, err := f.karmadaClient()
		if err != nil {
			return err
		}
		memberCfg, err := c.restConfig()
		if err != nil {
			return err
		}
		mc, err := kubernetes.NewForConfig(memberCfg)
		if err != nil {
			return err
		}
		agent := register.AgentMember{ClusterName: c.Name, ClusterAdmin: f.Cfg.ClusterAdmin, PropagateKinds: f.Cfg.PropagateKinds,
			Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: register.AgentUser}}}
		if len(agent.PropagateKinds) == 0 && !agent.ClusterAdmin {
			agent.PropagateKinds = DefaultPropagateKinds
		}
		cl := &clusterv1alpha1.Cluster{}
		err = karmada.Get(ctx, client.ObjectKey{Name: c.Name}, cl)
		switch {
		case apierrors.IsNotFound(err):
			cl = nil
		case err != nil:
			return fmt.Errorf("reading Cluster %s: %w", c.Name, err)
		case cl.Spec.SyncMode != clusterv1alpha1.Pull:
			return fmt.Errorf("cluster %s is joined in %s mode, and the fleet wants it in pull mode (--pull-members): run `karmadactl unjoin %s` (or `karmada-local down --purge`) first", c.Name, cl.Spec.SyncMode, c.Name)
		}
		kubeconfig, err := register.RegisteredKubeconfig(ctx, mc, c.Name)
		if err != nil {
			return err
		}
		if cl != nil && kubeconfig != nil {
			// Registered: the agent's rights in the member follow the
			// fleet's --propagate-kinds.
			if err := register.InstallAgent(ctx, mc, agent); err != nil {
				return err
			}
			return writeAgentKubeconfig(c.agentKarmadaConfig, kubeconfig)
		}
		if cl != nil {
			return fmt.Errorf("cluster %s is registered, but the agent's kubeconfig is gone from the member or its certificate expired (Secret %s/%s): run `karmadactl unregister %s --force` and `karmada-local up` again",
				c.Name, agentcert.Namespace, agentcert.SecretName, c.Name)
		}
		kc, err := kubernetes.NewForConfig(karmadaCfg)
		if err != nil {
			return err
		}
		tok, err := token.Create(ctx, kc, token.CreateOptions{TTL: 10 * time.Minute, Description: "karmada-local: registering " + c.Name,
			Usages: []string{"signing", "authentication"}, Groups: []string{token.DefaultGroup}})
		if err != nil {
			return err
		}
		// Used once.
		defer func() { _ = token.Delete(context.WithoutCancel(ctx), kc, []string{tok}, io.Discard) }()
		endpoint, caPEM, err := f.karmadaEndpoint()
		if err != nil {
			return err
		}
		hash, err := token.CACertHash(caPEM)
		if err != nil {
			return err
		}
		err = register.Run(ctx, memberCfg, register.Options{
			Endpoint: endpoint, Token: tok, CACertHash: hash, ClusterName: c.Name,
			Timeout: 90 * time.Second, CertExpirationSeconds: register.DefaultCertExpirationSeconds, Agent: agent,
		}, io.Discard)
		if err != nil {
			return err
		}
		if kubeconfig, err = register.RegisteredKubeconfig(ctx, mc, c.Name); err != nil {
			return err
		}
		if kubeconfig == nil {
			return errors.New("register left no agent kubeconfig in the member")
		}
		return writeAgentKubeconfig(c.agentKarmadaConfig, kubeconfig)
	}
}

// writeAgentKubeconfig writes the file the agent process starts from,
// unless it holds that already.
func writeAgentKubeconfig(path string, data []byte) error {
	if cur, err := os.ReadFile(path); err == nil && bytes.Equal(cur, data) {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// isPull says whether the fleet runs member name in pull mode.
func (c Config) isPull(name string) bool { return slices.Contains(c.PullMembers, name) }
