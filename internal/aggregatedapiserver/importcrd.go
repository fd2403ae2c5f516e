package aggregatedapiserver

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	genericrequest "k8s.io/apiserver/pkg/endpoints/request"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/client-go/dynamic"
	"k8s.io/klog/v2"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
)

var (
	apiServices = schema.GroupVersionResource{Group: "apiregistration.k8s.io", Version: "v1", Resource: "apiservices"}
	clustersGVR = clusterv1alpha1.SchemeGroupVersion.WithResource("clusters")
)

// ServedByCRD reports whether the karmada-apiserver still serves Clusters
// itself, from the Cluster CRD of an earlier version: the APIService of the
// group has no Service.
func ServedByCRD(ctx context.Context, dyn dynamic.Interface) (bool, error) {
	svc, err := dyn.Resource(apiServices).Get(ctx, clusterv1alpha1.APIServiceName, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	ref, found, _ := unstructured.NestedMap(svc.Object, "spec", "service")
	return !found || ref == nil, nil
}

// importFromCRD copies every Cluster the karmada-apiserver serves from the
// Cluster CRD into this server's storage as it is: uid, creation time,
// generation, labels, finalizers, owner references and status (objects
// owned by a Cluster keep their owner; a Cluster being deleted stays so).
// A Cluster already stored is left as stored. It does nothing once the
// APIService points at a Service (at this server). Run before the
// APIService is switched to this server (karmada-local's cluster-api step,
// after this server is ready).
func importFromCRD(ctx context.Context, dyn dynamic.Interface, store *genericregistry.Store) error {
	crd, err := ServedByCRD(ctx, dyn)
	if err != nil || !crd {
		return err
	}
	list, err := dyn.Resource(clustersGVR).List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("listing the Clusters the Cluster CRD serves: %w", err)
	}
	ctx = genericrequest.WithRequestInfo(ctx, &genericrequest.RequestInfo{})
	imported := 0
	for i := range list.Items {
		c := &clusterv1alpha1.Cluster{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(list.Items[i].Object, c); err != nil {
			return fmt.Errorf("cluster %s: %w", list.Items[i].GetName(), err)
		}
		c.ResourceVersion = ""
		c.ManagedFields = nil
		key, err := store.KeyFunc(ctx, c.Name)
		if err != nil {
			return err
		}
		out := &clusterv1alpha1.Cluster{}
		if err := store.Storage.Create(ctx, key, c, out, 0, false); err != nil {
			if apierrors.IsAlreadyExists(err) {
				continue
			}
			return fmt.Errorf("storing cluster %s: %w", c.Name, err)
		}
		imported++
	}
	klog.InfoS("Imported the Clusters of the Cluster CRD", "imported", imported, "listed", len(list.Items))
	return nil
}

// importHook runs importFromCRD until it succeeds (the server is not ready
// meanwhile: its readiness includes its post-start hooks).
func importHook(dyn dynamic.Interface, store *genericregistry.Store) func(context.Context) error {
	return func(ctx context.Context) error {
		return wait.PollUntilContextCancel(ctx, 2*time.Second, true, func(ctx context.Context) (bool, error) {
			if err := importFromCRD(ctx, dyn, store); err != nil {
				klog.ErrorS(err, "Importing the Clusters of the Cluster CRD; retrying")
				return false, nil
			}
			return true, nil
		})
	}
}
