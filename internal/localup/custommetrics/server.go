package custommetrics

import (
	"context"
	"fmt"

	"github.com/spf13/pflag"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	basecmd "sigs.k8s.io/custom-metrics-apiserver/pkg/cmd"
)

// Name is the server's name (its OpenAPI title, its logs).
const Name = "karmada-local-custom-metrics"

// NewAdapter is the server with its flags (the library's: the generic
// API server's serving, delegated authentication and authorization,
// --lister-kubeconfig for the member it reads) on fs.
func NewAdapter(fs *pflag.FlagSet) *basecmd.AdapterBase {
	a := &basecmd.AdapterBase{Name: Name, FlagSet: fs}
	a.InstallFlags()
	return a
}

// Run serves custom.metrics.k8s.io from the member the adapter's
// --lister-kubeconfig reaches until ctx ends.
func Run(ctx context.Context, a *basecmd.AdapterBase) error {
	cfg, err := a.ClientConfig()
	if err != nil {
		return err
	}
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	dyn, err := a.DynamicClient()
	if err != nil {
		return err
	}
	mapper, err := a.RESTMapper()
	if err != nil {
		return err
	}
	factory := informers.NewSharedInformerFactory(kube, 0)
	pods := factory.Core().V1().Pods()
	p := &Provider{Pods: pods.Lister(), Dynamic: dyn, Mapper: mapper}
	a.WithCustomMetrics(p)
	factory.Start(ctx.Done())
	for typ, ok := range factory.WaitForCacheSync(ctx.Done()) {
		if !ok {
			return fmt.Errorf("the member's %v did not sync", typ)
		}
	}
	return a.Run(ctx)
}
