package webhook

import (
	"context"
	"fmt"
	"slices"
	"strings"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/validation/field"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
	"github.com/karmada-go/karmada/internal/names"
)

// AdoptVerb is the RBAC verb the author of a policy (or binding) with
// conflictResolution: Overwrite needs on the policy's resource, in its
// namespace: Overwrite takes over objects a member cluster made, which is
// the platform's to grant. Administrators (every verb) hold it; a tenant
// with the usual namespaced roles does not.
const AdoptVerb = "adopt"

// policyAdoption refuses a policy with conflictResolution: Overwrite whose
// author may not adopt, when it is created, or its spec changes (a new
// selector would take over other objects).
func (o Options) policyAdoption(ctx context.Context, user authenticationv1.UserInfo, resource, namespace string, spec, old *policyv1alpha1.PropagationSpec) (field.ErrorList, error) {
	if spec.ConflictResolution != policyv1alpha1.ConflictOverwrite || (old != nil && equality.Semantic.DeepEqual(spec, old)) {
		return nil, nil
	}
	return o.mayAdopt(ctx, user, policyv1alpha1.GroupName, resource, namespace)
}

// bindingAdoption refuses a binding with conflictResolution: Overwrite
// whose author may not adopt, when it is created so, turned to Overwrite,
// or pointed at another template (its resourceVersion aside). The
// controllers write bindings on every scheduling and template change; only
// those changes need the right.
func (o Options) bindingAdoption(ctx context.Context, user authenticationv1.UserInfo, resource, namespace string, spec, old *workv1alpha2.ResourceBindingSpec) (field.ErrorList, error) {
	if spec.ConflictResolution != policyv1alpha1.ConflictOverwrite ||
		(old != nil && old.ConflictResolution == policyv1alpha1.ConflictOverwrite && sameTemplate(spec.Resource, old.Resource)) {
		return nil, nil
	}
	return o.mayAdopt(ctx, user, workv1alpha2.GroupName, resource, namespace)
}

func sameTemplate(a, b workv1alpha2.ObjectReference) bool {
	a.ResourceVersion, b.ResourceVersion = "", ""
	return a == b
}

func (o Options) mayAdopt(ctx context.Context, user authenticationv1.UserInfo, group, resource, namespace string) (field.ErrorList, error) {
	path := field.NewPath("spec", "conflictResolution")
	where := resource + "." + group
	if namespace != "" {
		where += " in namespace " + namespace
	}
	if o.Authorizer == nil {
		return field.ErrorList{field.Forbidden(path, fmt.Sprintf("Overwrite takes over objects a member cluster made, which needs the author's %q right on %s; karmada-webhook runs without --kubeconfig and cannot check it, so Overwrite is refused", AdoptVerb, where))}, nil
	}
	allowed, err := o.Authorizer.Allowed(ctx, user, authorizationv1.ResourceAttributes{Group: group, Resource: resource, Namespace: namespace, Verb: AdoptVerb})
	if err != nil {
		return nil, fmt.Errorf("asking whether %s may adopt member objects: %w", user.Username, err)
	}
	if allowed {
		return nil, nil
	}
	return field.ErrorList{field.Forbidden(path, fmt.Sprintf("Overwrite takes over objects a member cluster made; %s may not: it needs the %q verb on %s, which a platform administrator grants (use Abort, the default, to leave the members' own objects alone)",
		user.Username, AdoptVerb, where))}, nil
}

// agentClusterChange refuses what a pull-mode cluster's agent may not
// change of its Cluster: anything but its status (a subresource, not
// admitted here), and, when it claims the Cluster (spec.id not set yet),
// spec.id and the topology it was given (provider, region, zone, zones).
// Labels, annotations, taints, endpoints and the rest are the control
// plane's administrators'.
func agentClusterChange(user authenticationv1.UserInfo, c, old *clusterv1alpha1.Cluster) field.ErrorList {
	if old == nil || (!strings.HasPrefix(user.Username, names.AgentUserPrefix) && !slices.Contains(user.Groups, names.AgentGroup)) {
		return nil
	}
	var errs field.ErrorList
	deny := func(path *field.Path, what string) {
		errs = append(errs, field.Forbidden(path, fmt.Sprintf("%s is the control plane's to set: an agent (%s) may change of its Cluster only its status, and when it claims the Cluster spec.id, provider, region, zone and zones", what, user.Username)))
	}
	meta := field.NewPath("metadata")
	if !equality.Semantic.DeepEqual(c.Labels, old.Labels) {
		deny(meta.Child("labels"), "metadata.labels")
	}
	if !equality.Semantic.DeepEqual(c.Annotations, old.Annotations) {
		deny(meta.Child("annotations"), "metadata.annotations")
	}
	if !equality.Semantic.DeepEqual(c.Finalizers, old.Finalizers) {
		deny(meta.Child("finalizers"), "metadata.finalizers")
	}
	if !equality.Semantic.DeepEqual(c.OwnerReferences, old.OwnerReferences) {
		deny(meta.Child("ownerReferences"), "metadata.ownerReferences")
	}
	spec, was := c.Spec, old.Spec
	if old.Spec.ID == "" {
		// Claiming: what the agent records of its member.
		spec.ID, spec.Provider, spec.Region, spec.Zone, spec.Zones = "", "", "", "", nil
		was.ID, was.Provider, was.Region, was.Zone, was.Zones = "", "", "", "", nil
	}
	if !equality.Semantic.DeepEqual(spec, was) {
		for _, f := range specFieldsChanged(c.Spec, old.Spec, old.Spec.ID == "") {
			deny(field.NewPath("spec").Child(f), "spec."+f)
		}
	}
	return errs
}

// specFieldsChanged names the spec fields that differ (those a claim may
// set left out when claiming).
func specFieldsChanged(a, b clusterv1alpha1.ClusterSpec, claiming bool) []string {
	var out []string
	add := func(name string, changed bool) {
		if changed {
			out = append(out, name)
		}
	}
	if !claiming {
		add("id", a.ID != b.ID)
		add("provider", a.Provider != b.Provider)
		add("region", a.Region != b.Region)
		add("zone", a.Zone != b.Zone)
		add("zones", !equality.Semantic.DeepEqual(a.Zones, b.Zones))
	}
	add("syncMode", a.SyncMode != b.SyncMode)
	add("apiEndpoint", a.APIEndpoint != b.APIEndpoint)
	add("secretRef", !equality.Semantic.DeepEqual(a.SecretRef, b.SecretRef))
	add("impersonatorSecretRef", !equality.Semantic.DeepEqual(a.ImpersonatorSecretRef, b.ImpersonatorSecretRef))
	add("insecureSkipTLSVerification", a.InsecureSkipTLSVerification != b.InsecureSkipTLSVerification)
	add("proxyURL", a.ProxyURL != b.ProxyURL)
	add("proxyHeader", !equality.Semantic.DeepEqual(a.ProxyHeader, b.ProxyHeader))
	add("taints", !equality.Semantic.DeepEqual(a.Taints, b.Taints))
	add("resourceModels", !equality.Semantic.DeepEqual(a.ResourceModels, b.ResourceModels))
	if len(out) == 0 {
		out = append(out, "*") // a field this list does not know yet
	}
	return out
}
