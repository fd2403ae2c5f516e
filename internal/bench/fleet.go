package bench

import (
	"context"
	"fmt"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/karmada-go/karmada/internal/scheme"
)

// ClientSettings are the benchmark's own client settings.
type ClientSettings struct {
	QPS   float32 `json:"qps"`
	Burst int     `json:"burst"`
}

// Fleet holds clients of the control plane and of each member.
type Fleet struct {
	Karmada    kubernetes.Interface
	KarmadaCRs client.Client
	// KarmadaConfig is the control plane's client configuration, for the
	// clients the interfaces above do not cover (metadata-only watches).
	KarmadaConfig *rest.Config
	MemberNames   []string
	Members       map[string]kubernetes.Interface
}

// Connect builds the clients from a kubeconfig: the control plane's context
// and one context per member, named as the member.
func Connect(kubeconfig, karmadaContext string, members []string, s ClientSettings) (*Fleet, error) {
	if len(members) == 0 {
		return nil, fmt.Errorf("--members: name at least one member cluster")
	}
	seen := map[string]bool{}
	for _, m := range members {
		if m == "" || seen[m] {
			return nil, fmt.Errorf("--members %s: names must be distinct and not empty", strings.Join(members, ","))
		}
		seen[m] = true
	}
	cfg, err := restConfig(kubeconfig, karmadaContext, s)
	if err != nil {
		return nil, err
	}
	f := &Fleet{MemberNames: members, Members: map[string]kubernetes.Interface{}, KarmadaConfig: cfg}
	if f.Karmada, err = kubernetes.NewForConfig(cfg); err != nil {
		return nil, err
	}
	if f.KarmadaCRs, err = client.New(cfg, client.Options{Scheme: scheme.Scheme}); err != nil {
		return nil, err
	}
	for _, m := range members {
		mc, err := restConfig(kubeconfig, m, s)
		if err != nil {
			return nil, fmt.Errorf("member %s: %w", m, err)
		}
		if f.Members[m], err = kubernetes.NewForConfig(mc); err != nil {
			return nil, err
		}
	}
	return f, nil
}

func restConfig(kubeconfig, context string, s ClientSettings) (*rest.Config, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if kubeconfig != "" {
		rules.ExplicitPath = kubeconfig
	}
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: context}).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("context %q of kubeconfig %s: %w", context, kubeconfig, err)
	}
	cfg.QPS, cfg.Burst = s.QPS, s.Burst
	cfg.Timeout = 60 * time.Second
	cfg.UserAgent = "karmada-bench"
	return cfg, nil
}

// DeploymentEvent is what a Deployment watch shows of one object.
type DeploymentEvent struct {
	Name                string
	Replicas, Available int32
	Annotations         map[string]string
	Deleted             bool
}

// deploymentEvent reads the fields the benchmark follows.
func deploymentEvent(obj interface{}, deleted bool) (DeploymentEvent, bool) {
	if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj, deleted = tomb.Obj, true
	}
	d, ok := obj.(*appsv1.Deployment)
	if !ok {
		return DeploymentEvent{}, false
	}
	ev := DeploymentEvent{Name: d.Name, Available: d.Status.AvailableReplicas, Annotations: d.Annotations, Deleted: deleted}
	ev.Replicas = 1
	if d.Spec.Replicas != nil {
		ev.Replicas = *d.Spec.Replicas
	}
	return ev, true
}

// WatchDeployments runs an informer over the Deployments of one namespace
// (list, then watch) and hands every change to fn, until ctx ends. It returns
// once the informer has synced.
func WatchDeployments(ctx context.Context, kc kubernetes.Interface, namespace string, fn func(DeploymentEvent)) error {
	factory := informers.NewSharedInformerFactoryWithOptions(kc, 0, informers.WithNamespace(namespace))
	inf := factory.Apps().V1().Deployments().Informer()
	// Only a few fields are read: drop the bulk before it is cached.
	_ = inf.SetTransform(func(obj interface{}) (interface{}, error) {
		if d, ok := obj.(*appsv1.Deployment); ok {
			d.ManagedFields = nil
			d.Spec.Template = corev1.PodTemplateSpec{}
			d.Status.Conditions = nil
		}
		return obj, nil
	})
	handle := func(obj interface{}, deleted bool) {
		if ev, ok := deploymentEvent(obj, deleted); ok {
			fn(ev)
		}
	}
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj interface{}) { handle(obj, false) },
		UpdateFunc: func(_, obj interface{}) { handle(obj, false) },
		DeleteFunc: func(obj interface{}) { handle(obj, true) },
	}); err != nil {
		return err
	}
	factory.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		return fmt.Errorf("watching Deployments in %s: %w", namespace, context.Cause(ctx))
	}
	return nil
}

// RunLabel marks every object of one benchmark run.
const RunLabel = "bench.karmada.io/run"

// Deployment is the template of the benchmark: a small Deployment whose
// pods kwok runs without pulling anything.
func Deployment(namespace, name, run string, replicas int32) *appsv1.Deployment {
	labels := map[string]string{"app": name, RunLabel: run}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace, Labels: labels},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": name}},
				Spec: corev1.PodSpec{
					Containers: []corev1.Container{{
						Name:  "app",
						Image: "registry.k8s.io/pause:3.10",
						Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
							corev1.ResourceCPU:    resource.MustParse("1m"),
							corev1.ResourceMemory: resource.MustParse("4Mi"),
						}},
					}},
				},
			},
		},
	}
}
