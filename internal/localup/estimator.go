package localup

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/karmada-go/karmada/internal/estimator"
	"github.com/karmada-go/karmada/internal/localup/pki"
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
	ca                      string
	schedulerCert, schedKey string
	descheduler, deschedKey string
}

// prepareEstimators makes the estimators' CA and certificates, and each
// member's estimator identity there.
func (f *fleet) prepareEstimators() error {
	ca, err := pki.LoadOrCreateCAWith(filepath.Join(f.cfg.StateDir, "estimator", "pki"), "karmada-local-estimator-ca", f.cfg.validity())
	if err != nil {
		return err
	}
	f.estimator.ca = filepath.Join(ca.Dir, "ca.crt")
	if f.estimator.schedulerCert, f.estimator.schedKey, err = ca.Ensure(pki.CertSpec{Name: "karmada-scheduler-client", CommonName: KarmadaUser("karmada-scheduler"), Client: true}); err != nil {
		return err
	}
	if f.estimator.descheduler, f.estimator.deschedKey, err = ca.Ensure(pki.CertSpec{Name: "karmada-descheduler-client", CommonName: KarmadaUser("karmada-descheduler"), Client: true}); err != nil {
		return err
	}
	for _, c := range f.clusters[1:] {
		if c.estimatorCert, c.estimatorKey, err = ca.Ensure(pki.CertSpec{Name: c.name + "-serving", CommonName: "karmada-scheduler-estimator-" + c.name, Server: true,
			IPs: loopback, DNS: []string{EstimatorServiceName(c.name), "localhost"}}); err != nil {
			return err
		}
		cert, key, err := c.ca.Ensure(pki.CertSpec{Name: "karmada-scheduler-estimator-client", CommonName: EstimatorUser, Client: true})
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
func (f *fleet) estimatorSteps(c *cluster, nodes string) []*Step {
	grpcPort, health, metrics := c.ports[slotEstimatorGRPC], c.ports[slotEstimatorHealth], c.ports[slotEstimatorMetrics]
	rbac := &Step{
		Name:    c.name + "/estimator-rbac",
		Cluster: c.name,
		After:   []string{nodes},
		Run:     f.estimatorRBAC(c),
	}
	return []*Step{rbac, {
		Name:    estimatorStep(c.name),
		Cluster: c.name,
		After:   []string{rbac.Name},
		Binary:  f.bin("karmada-scheduler-estimator"),
		Args: []string{
			"--kubeconfig=" + c.estimatorConfig,
			"--cluster-name=" + c.name,
			"--bind-address=127.0.0.1",
			fmt.Sprintf("--server-port=%d", grpcPort),
			"--grpc-auth-cert-file=" + c.estimatorCert,
			"--grpc-auth-key-file=" + c.estimatorKey,
			"--grpc-client-ca-file=" + f.estimator.ca,
			fmt.Sprintf("--health-probe-bind-address=127.0.0.1:%d", health),
			fmt.Sprintf("--metrics-bind-address=127.0.0.1:%d", metrics),
			// /metrics reviewed by the member (its admin may scrape).
			"--metrics-tls-cert-file=" + c.estimatorCert,
			"--metrics-tls-private-key-file=" + c.estimatorKey,
			"--client-ca-file=" + filepath.Join(c.ca.Dir, "ca.crt"),
			"--v=2",
		},
		Ports: []int{grpcPort, health, metrics},
		// Ready once its informers hold the member.
		Probe:        &Probe{URL: fmt.Sprintf("http://127.0.0.1:%d/readyz", health)},
		ReadyTimeout: 60 * time.Second,
	}}
}

// estimatorRBAC lets the estimator's identity read what it needs in its
// member (estimator.MemberRBAC), and nothing more.
func (f *fleet) estimatorRBAC(c *cluster) func(ctx context.Context) error {
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
				return fmt.Errorf("granting the estimator its rights in %s: %w", c.name, err)
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
func (f *fleet) deschedulerStep(c *cluster, after ...string) *Step {
	r := replica{metrics: f.cfg.componentsBlock() + componentSlotDeschedulerMetrics, health: f.cfg.componentsBlock() + componentSlotDeschedulerHealth}
	s := f.karmadaComponent(c, "karmada-descheduler", r, after...)
	s.Args = append(s.Args, f.estimatorClientArgs(f.estimator.descheduler, f.estimator.deschedKey)...)
	if f.cfg.DeschedulingInterval > 0 {
		s.Args = append(s.Args, "--descheduling-interval="+f.cfg.DeschedulingInterval.String())
	}
	if f.cfg.UnschedulableThreshold > 0 {
		s.Args = append(s.Args, "--unschedulable-threshold="+f.cfg.UnschedulableThreshold.String())
	}
	for _, m := range f.clusters[1:] {
		s.After = append(s.After, estimatorStep(m.name))
	}
	return s
}

// schedulerEstimatorArgs point karmada-scheduler at every member's
// estimator.
func (f *fleet) schedulerEstimatorArgs() []string {
	return append([]string{"--enable-scheduler-estimator"}, f.estimatorClientArgs(f.estimator.schedulerCert, f.estimator.schedKey)...)
}

// estimatorClientArgs reach every member's estimator with a client
// certificate of the estimators' CA.
func (f *fleet) estimatorClientArgs(cert, key string) []string {
	var addrs []string
	for _, c := range f.clusters[1:] {
		addrs = append(addrs, fmt.Sprintf("%s=127.0.0.1:%d", c.name, c.ports[slotEstimatorGRPC]))
	}
	sort.Strings(addrs)
	return []string{
		"--scheduler-estimator-addresses=" + strings.Join(addrs, ","),
		"--scheduler-estimator-ca-file=" + f.estimator.ca,
		"--scheduler-estimator-cert-file=" + cert,
		"--scheduler-estimator-key-file=" + key,
	}
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
