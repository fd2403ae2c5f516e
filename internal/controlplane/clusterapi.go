package controlplane

import (
	"context"
	"encoding/base64"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
)

// ClusterCRD is the CRD that served Clusters before
// karmada-aggregated-apiserver did. A control plane upgraded in place keeps
// it (not served: the APIService points at the server), holding the
// Clusters as they were at the upgrade.
const ClusterCRD = "clusters.cluster.karmada.io"

// AggregatedAPIServerService is the Service the Cluster API's APIService
// names.
const AggregatedAPIServerService = "karmada-aggregated-apiserver"

// AggregatedAPIServer is where the karmada-apiserver reaches
// karmada-aggregated-apiserver: Host (a DNS name or address the
// karmada-apiserver resolves: an ExternalName Service) and Port, serving
// with a certificate of CABundle valid for
// karmada-aggregated-apiserver.karmada-system.svc.
type AggregatedAPIServer struct {
	Host     string
	Port     int32
	CABundle []byte
}

// EnsureClusterAPIService makes the Service karmada-system/
// karmada-aggregated-apiserver (ExternalName a.Host) and points the
// APIService of cluster.karmada.io/v1alpha1 at it. The APIService the
// karmada-apiserver made for the old Cluster CRD is replaced only when
// fromCRD is true (SwitchClusterAPI: the server has imported the Clusters);
// otherwise it is left, and the Clusters stay served by the CRD until then.
func EnsureClusterAPIService(ctx context.Context, c client.Client, a AggregatedAPIServer, fromCRD bool) error {
	if err := ensureExternalNameService(ctx, c, AggregatedAPIServerService, a); err != nil {
		return err
	}
	// The aggregator writes the APIService's status meanwhile: a conflict
	// is retried with what is there now.
	return retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		return pointClusterAPIService(ctx, c, a, fromCRD)
	})
}

func pointClusterAPIService(ctx context.Context, c client.Client, a AggregatedAPIServer, fromCRD bool) error {
	api := &unstructured.Unstructured{}
	api.SetAPIVersion("apiregistration.k8s.io/v1")
	api.SetKind("APIService")
	api.SetName(clusterv1alpha1.APIServiceName)
	err := c.Get(ctx, client.ObjectKeyFromObject(api), api)
	switch {
	case apierrors.IsNotFound(err):
		// A new control plane, or the CRD's APIService not made yet: only
		// when there is no CRD may it be made here.
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := c.Get(ctx, client.ObjectKey{Name: ClusterCRD}, crd); err == nil && !fromCRD {
			return nil
		} else if err != nil && !apierrors.IsNotFound(err) {
			return err
		}
		setAPIServiceSpec(api, a)
		if err := c.Create(ctx, api); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating APIService %s: %w", clusterv1alpha1.APIServiceName, err)
		}
		return nil
	case err != nil:
		return err
	}
	if api.GetLabels()[clusterv1alpha1.APIServiceAutomanagedLabel] != "" && !fromCRD {
		return nil
	}
	want := api.DeepCopy()
	labels := want.GetLabels()
	delete(labels, clusterv1alpha1.APIServiceAutomanagedLabel)
	want.SetLabels(labels)
	setAPIServiceSpec(want, a)
	if equality.Semantic.DeepEqual(want.Object["spec"], api.Object["spec"]) && equality.Semantic.DeepEqual(want.GetLabels(), api.GetLabels()) {
		return nil
	}
	if err := c.Update(ctx, want); err != nil {
		if apierrors.IsConflict(err) {
			return err
		}
		return fmt.Errorf("pointing APIService %s at %s: %w", clusterv1alpha1.APIServiceName, AggregatedAPIServerService, err)
	}
	return nil
}

func setAPIServiceSpec(api *unstructured.Unstructured, a AggregatedAPIServer) {
	api.Object["spec"] = map[string]any{
		"group":                clusterv1alpha1.GroupName,
		"version":              clusterv1alpha1.SchemeGroupVersion.Version,
		"service":              map[string]any{"namespace": "karmada-system", "name": AggregatedAPIServerService, "port": int64(a.Port)},
		"caBundle":             base64.StdEncoding.EncodeToString(a.CABundle), // []byte's JSON form
		"groupPriorityMinimum": int64(2000),
		"versionPriority":      int64(10),
	}
}

// SwitchClusterAPI points the Cluster API at karmada-aggregated-apiserver
// (replacing the old CRD's APIService, once the server has imported its
// Clusters: the server is ready only then) and waits until the
// karmada-apiserver serves Clusters through it and its discovery lists them.
func SwitchClusterAPI(ctx context.Context, c client.Client, disc discovery.DiscoveryInterface, a AggregatedAPIServer, timeout time.Duration) error {
	if err := EnsureClusterAPIService(ctx, c, a, true); err != nil {
		return err
	}
	var last string
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		api := &unstructured.Unstructured{}
		api.SetAPIVersion("apiregistration.k8s.io/v1")
		api.SetKind("APIService")
		if err := c.Get(ctx, client.ObjectKey{Name: clusterv1alpha1.APIServiceName}, api); err != nil {
			last = err.Error()
			return false, nil
		}
		conds, _, _ := unstructured.NestedSlice(api.Object, "status", "conditions")
		for _, cond := range conds {
			m, _ := cond.(map[string]any)
			if m["type"] == "Available" {
				last = fmt.Sprintf("Available=%v: %v", m["status"], m["message"])
				if m["status"] != "True" {
					return false, nil
				}
			}
		}
		if err := c.List(ctx, &clusterv1alpha1.ClusterList{}, client.Limit(1)); err != nil {
			last = "listing Clusters: " + err.Error()
			return false, nil
		}
		// Clients map kinds through the karmada-apiserver's discovery,
		// which takes the group in a moment after the APIService is
		// available: a join started before that would fail.
		_, lists, err := disc.ServerGroupsAndResources()
		if failed, ok := err.(*discovery.ErrGroupDiscoveryFailed); ok && failed.Groups[clusterv1alpha1.SchemeGroupVersion] != nil {
			last = "discovery: " + failed.Groups[clusterv1alpha1.SchemeGroupVersion].Error()
			return false, nil
		}
		for _, l := range lists {
			if l.GroupVersion != clusterv1alpha1.SchemeGroupVersion.String() {
				continue
			}
			for _, r := range l.APIResources {
				if r.Name == "clusters" {
					return true, nil
				}
			}
		}
		last = "discovery does not list clusters yet"
		return false, nil
	})
	if err != nil {
		return fmt.Errorf("the Cluster API through karmada-aggregated-apiserver: %s: %w", last, err)
	}
	return nil
}

// SearchService is the Service karmada-search's APIService names.
const SearchService = "karmada-search"

// SearchAPIServiceName is the APIService of search.karmada.io/v1alpha1.
const SearchAPIServiceName = "v1alpha1.search.karmada.io"

// EnsureSearchAPIService makes the Service karmada-system/karmada-search
// (ExternalName a.Host) and the APIService of search.karmada.io/v1alpha1
// pointing at it, then waits until it is Available.
func EnsureSearchAPIService(ctx context.Context, c client.Client, a AggregatedAPIServer, timeout time.Duration) error {
	return ensureAPIService(ctx, c, SearchService, SearchAPIServiceName, "search.karmada.io", "v1alpha1", a, timeout)
}

// MetricsAdapterService is the Service karmada-metrics-adapter's
// APIService names.
const MetricsAdapterService = "karmada-metrics-adapter"

// MetricsAPIServiceName is the APIService of metrics.k8s.io/v1beta1.
const MetricsAPIServiceName = "v1beta1.metrics.k8s.io"

// EnsureMetricsAPIService makes the Service
// karmada-system/karmada-metrics-adapter (ExternalName a.Host) and the
// APIServices karmada-metrics-adapter serves pointing at it
// (metrics.k8s.io/v1beta1, custom.metrics.k8s.io/v1beta2 and v1beta1, as
// Karmada registers them), then waits until each is Available.
func EnsureMetricsAPIService(ctx context.Context, c client.Client, a AggregatedAPIServer, timeout time.Duration) error {
	if err := ensureAPIService(ctx, c, MetricsAdapterService, MetricsAPIServiceName, "metrics.k8s.io", "v1beta1", a, timeout); err != nil {
		return err
	}
	for _, version := range []string{"v1beta2", "v1beta1"} {
		if err := ensureAPIService(ctx, c, MetricsAdapterService, version+".custom.metrics.k8s.io", "custom.metrics.k8s.io", version, a, timeout); err != nil {
			return err
		}
	}
	return nil
}

// ensureAPIService makes the Service karmada-system/<service>
// (ExternalName a.Host) and the APIService <name> of group/version
// pointing at it, then waits until it is Available.
func ensureAPIService(ctx context.Context, c client.Client, service, name, group, version string, a AggregatedAPIServer, timeout time.Duration) error {
	if err := ensureExternalNameService(ctx, c, service, a); err != nil {
		return err
	}
	api := &unstructured.Unstructured{}
	api.SetAPIVersion("apiregistration.k8s.io/v1")
	api.SetKind("APIService")
	api.SetName(name)
	if err := retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		_, err := controllerutil.CreateOrUpdate(ctx, c, api, func() error {
			api.Object["spec"] = map[string]any{
				"group":                group,
				"version":              version,
				"service":              map[string]any{"namespace": "karmada-system", "name": service, "port": int64(a.Port)},
				"caBundle":             base64.StdEncoding.EncodeToString(a.CABundle),
				"groupPriorityMinimum": int64(2000),
				"versionPriority":      int64(10),
			}
			return nil
		})
		return err
	}); err != nil {
		return fmt.Errorf("writing APIService %s: %w", name, err)
	}
	var last string
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		if err := c.Get(ctx, client.ObjectKey{Name: name}, api); err != nil {
			last = err.Error()
			return false, nil
		}
		conds, _, _ := unstructured.NestedSlice(api.Object, "status", "conditions")
		for _, cond := range conds {
			if m, _ := cond.(map[string]any); m["type"] == "Available" {
				last = fmt.Sprintf("Available=%v: %v", m["status"], m["message"])
				return m["status"] == "True", nil
			}
		}
		return false, nil
	})
	if err != nil {
		return fmt.Errorf("APIService %s: %s: %w", name, last, err)
	}
	return nil
}

// ensureExternalNameService makes the Service karmada-system/<name> of an
// aggregated API server: an ExternalName of a.Host, port a.Port (what an
// APIService names, and the karmada-apiserver resolves).
func ensureExternalNameService(ctx context.Context, c client.Client, name string, a AggregatedAPIServer) error {
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "karmada-system", Name: name}}
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: svc.Namespace}}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	if _, err := controllerutil.CreateOrUpdate(ctx, c, svc, func() error {
		svc.Spec.Type = corev1.ServiceTypeExternalName
		svc.Spec.ExternalName = a.Host
		svc.Spec.Ports = []corev1.ServicePort{{Name: "https", Port: a.Port}}
		return nil
	}); err != nil {
		return fmt.Errorf("writing Service %s/%s: %w", svc.Namespace, svc.Name, err)
	}
	return nil
}
