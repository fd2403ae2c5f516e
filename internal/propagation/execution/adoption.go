package execution

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	workv1alpha1 "github.com/karmada-go/karmada/api/work/v1alpha1"
	"github.com/karmada-go/karmada/internal/clusters/clusterclient"
)

// adopt marks a manifest as taking over an object that was in the member
// before Karmada (cur): the Work that adopted it, and what it was.
func adopt(obj, cur *unstructured.Unstructured, work *workv1alpha1.Work) {
	a := obj.GetAnnotations()
	if a == nil {
		a = map[string]string{}
	}
	a[workv1alpha1.AdoptedAnnotation] = work.Namespace + "/" + work.Name
	a[workv1alpha1.PreAdoptionAnnotation] = RecordPreAdoption(cur)
	obj.SetAnnotations(a)
}

// keepAdoption carries the adoption marks of the member's copy into the
// manifest: applied without them, server-side apply would remove them.
func keepAdoption(obj, cur *unstructured.Unstructured) {
	ca := cur.GetAnnotations()
	if ca[workv1alpha1.AdoptedAnnotation] == "" {
		return
	}
	a := obj.GetAnnotations()
	if a == nil {
		a = map[string]string{}
	}
	for _, k := range []string{workv1alpha1.AdoptedAnnotation, workv1alpha1.PreAdoptionAnnotation} {
		if v, ok := ca[k]; ok {
			a[k] = v
		}
	}
	obj.SetAnnotations(a)
}

// maxPreAdoption bounds the record (annotations of an object share 256 KiB).
const maxPreAdoption = 64 << 10

// RecordPreAdoption is the work.karmada.io/pre-adoption value of an object
// about to be adopted.
func RecordPreAdoption(cur *unstructured.Unstructured) string {
	snap := map[string]any{}
	for k, v := range cur.Object {
		if k != "metadata" && k != "status" {
			snap[k] = v
		}
	}
	md := map[string]any{"name": cur.GetName()}
	if ns := cur.GetNamespace(); ns != "" {
		md["namespace"] = ns
	}
	if l := cur.GetLabels(); len(l) > 0 {
		md["labels"] = l
	}
	if a := cur.GetAnnotations(); len(a) > 0 {
		kept := map[string]string{}
		for k, v := range a {
			// An earlier record is not recorded again.
			if k != workv1alpha1.PreAdoptionAnnotation {
				kept[k] = v
			}
		}
		md["annotations"] = kept
	}
	snap["metadata"] = md
	raw, err := json.Marshal(snap)
	if err != nil {
		return "omitted: " + err.Error()
	}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	_, _ = zw.Write(raw)
	_ = zw.Close()
	enc := base64.StdEncoding.EncodeToString(buf.Bytes())
	if len(enc) > maxPreAdoption {
		return fmt.Sprintf("omitted: %d bytes, sha256 %x", len(raw), sha256.Sum256(raw))
	}
	return enc
}

// ReadPreAdoption decodes a work.karmada.io/pre-adoption value.
func ReadPreAdoption(v string) (*unstructured.Unstructured, error) {
	data, err := base64.StdEncoding.DecodeString(v)
	if err != nil {
		return nil, fmt.Errorf("not a recorded object (%.40s): %w", v, err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		return nil, err
	}
	obj := &unstructured.Unstructured{}
	return obj, obj.UnmarshalJSON(raw)
}

// maxForeign bounds how many of a namespace's foreign objects are named.
const maxForeign = 3

// foreignObjects lists (up to maxForeign) objects in a member namespace
// that Karmada did not put there: neither marked as Karmada's nor made by
// a controller from something else (an owner reference), nor what every
// namespace gets (the default ServiceAccount, the root CA ConfigMap,
// events, the Endpoints of a Service). Kinds the member identity may not
// list (Secrets, with the rights join gives by default) are returned apart,
// to be counted another way. When the member's discovery is incomplete, the
// namespace cannot be known empty: that is an error, and the namespace is
// not deleted.
func foreignObjects(ctx context.Context, m *clusterclient.Member, namespace string) (foreign []string, unlisted []unlistedKind, err error) {
	lists, err := m.Kube.Discovery().ServerPreferredNamespacedResources()
	if err != nil {
		return nil, nil, err
	}
	for _, list := range lists {
		gv, err := schema.ParseGroupVersion(list.GroupVersion)
		if err != nil {
			return nil, nil, err
		}
		for _, res := range list.APIResources {
			if !slices.Contains(res.Verbs, "list") || res.Kind == "Event" {
				continue
			}
			items, err := m.Dynamic.Resource(gv.WithResource(res.Name)).Namespace(namespace).List(ctx, metav1.ListOptions{})
			if err != nil {
				if apierrors.IsNotFound(err) || apierrors.IsMethodNotSupported(err) {
					continue
				}
				if apierrors.IsForbidden(err) {
					unlisted = append(unlisted, unlistedKind{Kind: res.Kind, Resource: schema.GroupResource{Group: gv.Group, Resource: res.Name}})
					continue
				}
				return nil, nil, fmt.Errorf("listing %s: %w", res.Name, err)
			}
			for i := range items.Items {
				it := &items.Items[i]
				if derivedOrOurs(it, res.Kind) {
					continue
				}
				foreign = append(foreign, fmt.Sprintf("%s %s", res.Kind, it.GetName()))
				if len(foreign) == maxForeign {
					return foreign, nil, nil
				}
			}
		}
	}
	return foreign, unlisted, nil
}

// derivedOrOurs reports whether a member object in a Karmada namespace is
// Karmada's own (created by it, not adopted) or comes with something else.
func derivedOrOurs(obj *unstructured.Unstructured, kind string) bool {
	if obj.GetAnnotations()[workv1alpha1.AdoptedAnnotation] != "" {
		// Adopted: the member's own object, which Karmada only manages for
		// now; it is released, never deleted with the namespace.
		return false
	}
	if obj.GetLabels()[workv1alpha1.ManagedLabel] == "true" || len(obj.GetOwnerReferences()) > 0 || !obj.GetDeletionTimestamp().IsZero() {
		return true
	}
	switch {
	case kind == "ServiceAccount" && obj.GetName() == "default",
		kind == "ConfigMap" && obj.GetName() == "kube-root-ca.crt",
		kind == "Endpoints":
		return true
	}
	return false
}
