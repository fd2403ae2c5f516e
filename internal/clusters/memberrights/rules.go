// Package memberrights says what Karmada's identity may do in a member
// cluster: the kinds it may write (--propagate-kinds, with their default),
// the RBAC rules that grant them, the record of the grant on the member's
// ClusterRole, and, when a member refuses a write, which flag or command
// grants it. karmadactl join and register write the rules; the execution
// controller and the agent explain refusals with them.
package memberrights

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

// DefaultKinds are the resources the member identity may write unless
// --propagate-kinds says otherwise: what Karmada users propagate on a fresh
// fleet. Workloads and Pods, their configuration (ConfigMaps and Secrets:
// pull secrets, TLS), Services and Ingresses, ServiceAccounts and RBAC,
// quotas and policies, and CRDs. Writing Secrets in any namespace takes
// reading every Secret of the member; writing Pods (or any workload) in
// any namespace takes running them as any ServiceAccount there. RBAC
// objects may grant only rights the identity holds (Kubernetes' escalation
// check), besides binding the user-facing roles admin, edit and view
// (BindableRoles). docs/security.md weighs each; --propagate-kinds narrows
// the list.
var DefaultKinds = []string{
	"configmaps", "secrets", "services", "serviceaccounts", "persistentvolumeclaims", "pods",
	"limitranges", "resourcequotas",
	"deployments.apps", "statefulsets.apps", "daemonsets.apps", "replicasets.apps",
	"jobs.batch", "cronjobs.batch",
	"horizontalpodautoscalers.autoscaling",
	"ingresses.networking.k8s.io", "networkpolicies.networking.k8s.io",
	"endpointslices.discovery.k8s.io", "serviceexports.multicluster.x-k8s.io", "serviceimports.multicluster.x-k8s.io",
	"poddisruptionbudgets.policy",
	"roles.rbac.authorization.k8s.io", "rolebindings.rbac.authorization.k8s.io",
	"clusterroles.rbac.authorization.k8s.io", "clusterrolebindings.rbac.authorization.k8s.io",
	"customresourcedefinitions.apiextensions.k8s.io",
}

// BindableRoles are the ClusterRoles an identity that may write
// RoleBindings or ClusterRoleBindings may also bind without holding their
// rights: Kubernetes' user-facing roles, which platform teams bind to their
// tenants in every cluster.
var BindableRoles = []string{"admin", "edit", "view"}

// ClusterAdminGrant is the value of clusterv1alpha1.PropagateKindsAnnotation
// for an identity given cluster-admin.
const ClusterAdminGrant = "cluster-admin"

// PushClusterRole is the member ClusterRole (and binding) karmadactl join
// grants the controller manager's identity of a push-mode cluster.
func PushClusterRole(cluster string) string { return "karmada-controller-manager:karmada-" + cluster }

// PullClusterRole is the member ClusterRole (and binding) karmadactl
// register grants the agent of a pull-mode cluster.
const PullClusterRole = "karmada-agent"

// Kind is one entry of --propagate-kinds: a resource (plural, as RBAC names
// it) in an API group, or every resource of a group ("*.group").
type Kind struct {
	Group    string
	Resource string
}

func (k Kind) String() string {
	if k.Group == "" {
		return k.Resource
	}
	return k.Resource + "." + k.Group
}

// ParseKinds reads --propagate-kinds: resource[.group] as kubectl writes
// them (deployments.apps, configmaps, widgets.example.com), or *.group for
// a whole group. The core group is written without a suffix.
func ParseKinds(in []string) ([]Kind, error) {
	var out []Kind
	for _, s := range in {
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		resource, group, _ := strings.Cut(s, ".")
		if resource != "*" {
			for _, msg := range validation.IsDNS1123Label(resource) {
				return nil, fmt.Errorf("--propagate-kinds %q: resource %q: %s (write resource[.group], e.g. deployments.apps, configmaps, *.example.com)", s, resource, msg)
			}
		}
		if group != "" {
			for _, msg := range validation.IsDNS1123Subdomain(group) {
				return nil, fmt.Errorf("--propagate-kinds %q: group %q: %s", s, group, msg)
			}
		}
		if resource == "*" && group == "" {
			return nil, fmt.Errorf("--propagate-kinds %q: every resource of every group is what --cluster-admin grants; name the groups (*.apps) or pass --cluster-admin", s)
		}
		out = append(out, Kind{Group: group, Resource: resource})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("--propagate-kinds is empty: name at least one resource, e.g. deployments.apps")
	}
	return out, nil
}

// mcsGroup is the multi-cluster services API's group.
const mcsGroup = "multicluster.x-k8s.io"

var (
	readVerbs  = []string{"get", "list", "watch"}
	writeVerbs = []string{"get", "list", "watch", "create", "update", "patch", "delete"}
)

// Rules is what the member identity may do (the ClusterRole join
// creates), given the member's API resources (from discovery) and the kinds
// to propagate:
//   - read every resource the member serves, except Secrets unless they
//     are propagated (core resources listed one by one, other groups with
//     "*"): cluster status reads nodes
//     and pods, work status reads the propagated kinds, and a namespace
//     Karmada created is deleted only after seeing that it holds nothing of
//     the member's own;
//   - write the propagated kinds, and namespaces (Karmada propagates them);
//   - bind the BindableRoles, when it may write role bindings;
//   - write the status of ServiceExports, when it may write them (the
//     export's Valid and Conflict conditions);
//   - create and delete ResourceQuotas: before deleting a namespace it
//     created, Karmada has the member count, with a quota, the objects of
//     the kinds it may not list there (Secrets);
//   - read the discovery and health endpoints.
//
// Listing a kind's group with "*" also covers resources the group serves
// later; a group that appears later (a new CRD group) is covered only when
// named in kinds.
func Rules(resources []*metav1.APIResourceList, kinds []Kind) []rbacv1.PolicyRule {
	var core []string
	groups := map[string]bool{}
	for _, list := range resources {
		group, _, ok := strings.Cut(list.GroupVersion, "/")
		if !ok {
			group = ""
		}
		if group != "" {
			groups[group] = true
			continue
		}
		for _, r := range list.APIResources {
			if strings.Contains(r.Name, "/") || r.Name == "secrets" || slices.Contains(core, r.Name) {
				continue
			}
			core = append(core, r.Name)
		}
	}
	sort.Strings(core)
	var rules []rbacv1.PolicyRule
	if len(core) > 0 {
		rules = append(rules, rbacv1.PolicyRule{APIGroups: []string{""}, Resources: core, Verbs: readVerbs})
	}
	if len(groups) > 0 {
		names := make([]string, 0, len(groups))
		for g := range groups {
			names = append(names, g)
		}
		sort.Strings(names)
		rules = append(rules, rbacv1.PolicyRule{APIGroups: names, Resources: []string{"*"}, Verbs: readVerbs})
	}
	// Writes, one rule per group.
	byGroup := map[string][]string{"": {"namespaces"}}
	for _, k := range kinds {
		if !slices.Contains(byGroup[k.Group], k.Resource) {
			byGroup[k.Group] = append(byGroup[k.Group], k.Resource)
		}
	}
	groupNames := make([]string, 0, len(byGroup))
	for g := range byGroup {
		groupNames = append(groupNames, g)
	}
	sort.Strings(groupNames)
	for _, g := range groupNames {
		res := byGroup[g]
		if slices.Contains(res, "*") {
			res = []string{"*"}
		}
		sort.Strings(res)
		rules = append(rules, rbacv1.PolicyRule{APIGroups: []string{g}, Resources: res, Verbs: writeVerbs})
	}
	// An exported Service's ServiceExport says whether the export is valid
	// and in conflict: its status is written by whoever collects it.
	if slices.Contains(byGroup[mcsGroup], "serviceexports") {
		rules = append(rules, rbacv1.PolicyRule{APIGroups: []string{mcsGroup}, Resources: []string{"serviceexports/status"}, Verbs: []string{"get", "update", "patch"}})
	}
	if rbac := byGroup[rbacv1.GroupName]; slices.ContainsFunc(rbac, func(r string) bool { return r == "*" || r == "rolebindings" || r == "clusterrolebindings" }) {
		rules = append(rules, rbacv1.PolicyRule{APIGroups: []string{rbacv1.GroupName}, Resources: []string{"clusterroles"}, ResourceNames: BindableRoles, Verbs: []string{"bind"}})
	}
	rules = append(rules,
		rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"resourcequotas"}, Verbs: []string{"create", "delete"}},
		rbacv1.PolicyRule{NonResourceURLs: []string{"/api", "/api/*", "/apis", "/apis/*", "/version", "/healthz", "/readyz", "/livez"}, Verbs: []string{"get"}},
	)
	return rules
}

// AdminRules are the rules of --cluster-admin: every verb on every
// resource, escalate, bind and impersonate included.
func AdminRules() []rbacv1.PolicyRule {
	return []rbacv1.PolicyRule{
		{APIGroups: []string{"*"}, Resources: []string{"*"}, Verbs: []string{"*"}},
		{NonResourceURLs: []string{"*"}, Verbs: []string{"get"}},
	}
}
