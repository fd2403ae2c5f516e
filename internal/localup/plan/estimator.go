package plan

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/karmada-go/karmada/internal/estimator"
	"github.com/karmada-go/karmada/internal/localup/pki"
	"github.com/karmada-go/karmada/internal/localup/process"
)

// Member slots of the member's karmada-scheduler-estimator.
const (
	slotEstimatorGRPC    = 6
	slotEstimatorHealth  = 7
	slotEstimatorMetrics = 8
)

// EstimatorUser is the estimator's identity in its member.
const EstimatorUser = "system:karmada:karmada-scheduler-estimator"

// estimatorStep is the name of a member's estimator process.
func estimatorStep(member string) string { return member + "/karmada-scheduler-estimator" }

// EstimatorServiceName is the name an estimator's serving certificate
// holds, the Service name karmada-scheduler verifies (its
// --scheduler-estimator-service-prefix and -namespace defaults).
func EstimatorServiceName(member string) string {
	return "karmada-scheduler-estimator-" + member + ".karmada-system.svc"
}

// estimatorPKI: the estimators' own CA (not the control plane's: a
// certificate the karmada-apiserver signs for an agent must not open an
// estimator), each member's serving certificate, and the clients'.
type estimatorPKI struct {
	CA                      string
	schedulerCert, schedKey string
	descheduler, deschedKey string
}

// prepareEstimators makes the estimators' CA and certificates, and each
// member's estimator identity there.
func (f *Fleet) prepareEstimators() error {
	ca, err := pki.LoadOrCreateCAWith(filepath.Join(f.Cfg.StateDir, "estimator", "pki"), "karmada-local-estimator-ca", f.Cfg.Validity())
	if err != nil {
		return err
	}
	f.estimator.CA = filepath.Join(ca.Dir, "ca.crt")
	if f.estimator.schedulerCert, f.estimator.schedKey, err = ca.Ensure(pki.CertSpec{Name: "karmada-scheduler-client", CommonName: KarmadaUser("karmada-scheduler"), Client: true}); err != nil {
		return err
	}
	if f.estimator.descheduler, f.estimator.deschedKey, err = ca.Ensure(pki.CertSpec{Name: "karmada-descheduler-client", CommonName: KarmadaUser("karmada-descheduler"), Client: true}); err != nil {
		return err
	}
	for _, c := range f.Clusters[1:] {
		if c.estimatorCert, c.estimatorKey, err = ca.Ensure(pki.CertSpec{Name: c.Name + "-serving", CommonName: "karmada-scheduler-estimator-" + c.Name, Server: true,
			IPs: pki.Loopback, DNS: []string{EstimatorServiceName(c.Name), "localhost"}}); err != nil {
			return err
		}
		cert, key, err := c.CA.Ensure(pki.CertSpec{Name: "karmada-scheduler-estimator-client", CommonName: EstimatorUser, Client: true})
		if err != nil {
			return err
		}
		c.estimatorConfig = filepath.Join(c.dir, "karmada-scheduler-estimator.kubeconfig")
		if err := writeComponentKubeconfig(c.estimatorConfig, c, EstimatorUser, cert, key); err != nil {
			return err
		}
	}
	return nil
}

// estimatorSteps run a member's estimator once its nodes exist.
func (f *Fleet) estimatorSteps(c *Cluster, nodes string) []*process.Step {
	grpcPort, health, metrics := c.ports[slotEstimatorGRPC], c.ports[slotEstimatorHealth], c.ports[slotEstimatorMetrics]
	rbac := &process.Step{
		Name:    c.Name + "/estimator-rbac",
		Cluster: c.Name,
		After:   []string{nodes},
		Run:     f.estimatorRBAC(c),
	}
	return []*process.Step{rbac, {
		Name:    estimatorStep(c.Name),
		Cluster: c.Name,
		After:   []string{rbac.Name},
		Binary:  f.bin("karmada-scheduler-estimator"),
		Args: process.NewArgs().
			Set("kubeconfig", c.estimatorConfig).
			// The namespace's ResourceQuotas count (alpha in Karmada), for
			// the tour.
			Set("feature-gates", "ResourceQuotaEstimate=true").
			Set("cluster-name", c.Name).
			Set("bind-address", "127.0.0.1").
			Set("server-port", grpcPort).
			Set("grpc-auth-cert-file", c.estimatorCert).
			Set("grpc-auth-key-file", c.estimatorKey).
			Set("grpc-client-ca-file", f.estimator.CA).
			Set("health-probe-bind-address", fmt.Sprintf("127.0.0.1:%d", health)).
			Set("metrics-bind-address", fmt.Sprintf("127.0.0.1:%d", metrics)).
			// /metrics reviewed by the member (its admin may scrape).
			Set("metrics-tls-cert-file", c.estimatorCert).
			Set("metrics-tls-private-key-file", c.estimatorKey).
			Set("client-ca-file", filepath.Join(c.CA.Dir, "ca.crt")).
			Set("v", 2).
			Strings(),
		Ports: []int{grpcPort, health, metrics},
		// Ready once its informers hold the member.
		Probe:        &process.Probe{URL: fmt.Sprintf("http://127.0.0.1:%d/readyz", health)},
		ReadyTimeout: 60 * time.Second,
	}}
}

// estimatorRBAC lets the estimator's identity read what it needs in its
// member (estimator.MemberRBAC), and nothing more.
func (f *Fleet) estimatorRBAC(c *Cluster) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		cfg, err := c.restConfig()
		if err != nil {
			return err
		}
		cl, err := client.New(cfg, client.Options{})
		if err != nil {
			return err
		}
		for _, want := range estimator.MemberRBAC(EstimatorUser) {
			obj := want.DeepCopyObject().(client.Object)
			if _, err := controllerutil.CreateOrUpdate(ctx, cl, obj, func() error {
				copyRBAC(obj, want)
				return nil
			}); err != nil {
				return fmt.Errorf("granting the estimator its rights in %s: %w", c.Name, err)
			}
		}
		return nil
	}
}

// Slots of the components block for karmada-descheduler.
const (
	componentSlotDeschedulerMetrics = 2
	componentSlotDeschedulerHealth  = 3
)

// deschedulerStep runs karmada-descheduler (one replica, leader-elected
// with --ha), after the estimators.
func (f *Fleet) deschedulerStep(c *Cluster, after ...string) *process.Step {
	r := replica{metrics: f.Cfg.componentsBlock() + componentSlotDeschedulerMetrics, health: f.Cfg.componentsBlock() + componentSlotDeschedulerHealth}
	flags := f.estimatorClientArgs(f.estimator.descheduler, f.estimator.deschedKey)
	if f.Cfg.DeschedulingInterval > 0 {
		flags.Set("descheduling-interval", f.Cfg.DeschedulingInterval)
	}
	if f.Cfg.UnschedulableThreshold > 0 {
		flags.Set("unschedulable-threshold", f.Cfg.UnschedulableThreshold)
	}
	s := f.karmadaComponent(c, "karmada-descheduler", r, flags, after...)
	for _, m := range f.Clusters[1:] {
		s.After = append(s.After, estimatorStep(m.Name))
	}
	return s
}

// schedulerEstimatorArgs point karmada-scheduler at every member's
// estimator.
func (f *Fleet) schedulerEstimatorArgs() *process.Args {
	return process.NewArgs().On("enable-scheduler-estimator").Merge(f.estimatorClientArgs(f.estimator.schedulerCert, f.estimator.schedKey))
}

// estimatorClientArgs reach every member's estimator with a client
// certificate of the estimators' CA.
func (f *Fleet) estimatorClientArgs(cert, key string) *process.Args {
	var addrs []string
	for _, c := range f.Clusters[1:] {
		addrs = append(addrs, fmt.Sprintf("%s=127.0.0.1:%d", c.Name, c.ports[slotEstimatorGRPC]))
	}
	sort.Strings(addrs)
	return process.NewArgs().
		Set("scheduler-estimator-addresses", addrs).
		Set("scheduler-estimator-ca-file", f.estimator.CA).
		Set("scheduler-estimator-cert-file", cert).
		Set("scheduler-estimator-key-file", key)
}

// copyRBAC gives an existing role or binding the wanted rules, subjects
// and labels (a binding's roleRef cannot change, and is the same).
func copyRBAC(obj, want client.Object) {
	switch o := obj.(type) {
	case *rbacv1.ClusterRole:
		o.Rules = want.(*rbacv1.ClusterRole).Rules
	case *rbacv1.ClusterRoleBinding:
		o.Subjects = want.(*rbacv1.ClusterRoleBinding).Subjects
		if o.RoleRef.Name == "" {
			o.RoleRef = want.(*rbacv1.ClusterRoleBinding).RoleRef
		}
	}
	o := obj
	labels := o.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	for k, v := range want.GetLabels() {
		labels[k] = v
	}
	o.SetLabels(labels)
}
