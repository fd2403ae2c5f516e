// Package addons is `karmadactl addons`: list, enable and disable the
// optional components of a control plane that `karmadactl init` (or `helm
// install charts/karmada`) installed, with Karmada's addon names. An addon
// is one of the chart's components: enabling or disabling one upgrades the
// release with the values it has, its components changed, as `helm upgrade
// --reuse-values` would; nothing outside the release is written.
package addons

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// Addon is one optional component.
type Addon struct {
	// Name is Karmada's addon name.
	Name string
	// Component is the chart's name for it (the components value).
	Component string
}

// Known are the addons, in Karmada's order (by name).
var Known = []Addon{
	{Name: "karmada-descheduler", Component: "descheduler"},
	{Name: "karmada-metrics-adapter", Component: "metricsAdapter"},
	{Name: "karmada-scheduler-estimator", Component: "schedulerEstimator"},
	{Name: "karmada-search", Component: "search"},
}

const (
	estimator   = "karmada-scheduler-estimator"
	descheduler = "karmada-descheduler"
)

// Statuses, as Karmada's addons list prints them.
const (
	StatusEnabled   = "enabled"
	StatusDisabled  = "disabled"
	StatusUnhealthy = "unhealthy"
	StatusUnknown   = "unknown"
)

func find(name string) (Addon, bool) {
	i := slices.IndexFunc(Known, func(a Addon) bool { return a.Name == name })
	if i < 0 {
		return Addon{}, false
	}
	return Known[i], true
}

func names() string {
	var out []string
	for _, a := range Known {
		out = append(out, a.Name)
	}
	return strings.Join(out, ", ")
}

// Resolve checks the names given and expands "all": every addon but the
// scheduler estimator (one per member, named with --cluster), as
// Karmada's `addons enable all` does. Each name once, in Known's order.
func Resolve(args []string, disable bool) ([]Addon, error) {
	if len(args) == 0 {
		return nil, fmt.Errorf("name the addons (%s) or all", names())
	}
	want := map[string]bool{}
	for _, a := range args {
		if a == "all" {
			for _, k := range Known {
				if disable || k.Name != estimator {
					want[k.Name] = true
				}
			}
			continue
		}
		if _, ok := find(a); !ok {
			return nil, fmt.Errorf("unknown addon %q: the addons are %s (or all)", a, names())
		}
		want[a] = true
	}
	var out []Addon
	for _, k := range Known {
		if want[k.Name] {
			out = append(out, k)
		}
	}
	return out, nil
}

// Member is a member cluster's scheduler estimator: its name and the
// kubeconfig (a client certificate: the estimator's identity there).
type Member struct {
	Cluster string
	Server  string
	CA      []byte
	Cert    []byte
	Key     []byte
}

// MemberFromKubeconfig reads the context (its current one when empty) of
// the member's kubeconfig; it must carry a client certificate and key and
// the CA inline or in files (the chart writes them into the estimator's
// kubeconfig).
func MemberFromKubeconfig(cluster, path, context string) (*Member, error) {
	raw, err := clientcmd.LoadFromFile(path)
	if err != nil {
		return nil, fmt.Errorf("--member-kubeconfig=%s: %w", path, err)
	}
	if context == "" {
		context = raw.CurrentContext
	}
	cfg, err := clientcmd.NewNonInteractiveClientConfig(*raw, context, &clientcmd.ConfigOverrides{}, nil).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("--member-kubeconfig=%s --member-context=%q: %w", path, context, err)
	}
	// Files named by the kubeconfig are read into the data fields.
	if err := rest.LoadTLSFiles(cfg); err != nil {
		return nil, fmt.Errorf("--member-kubeconfig=%s (context %q): %w", path, context, err)
	}
	m := &Member{Cluster: cluster, Server: cfg.Host, CA: cfg.CAData, Cert: cfg.CertData, Key: cfg.KeyData}
	if len(m.Cert) == 0 || len(m.Key) == 0 {
		return nil, fmt.Errorf("--member-kubeconfig=%s (context %q): it must authenticate with a client certificate and key, the estimator's identity in %s", path, context, cluster)
	}
	if len(m.CA) == 0 {
		return nil, fmt.Errorf("--member-kubeconfig=%s (context %q): it must name the member's CA", path, context)
	}
	return m, nil
}

// components are the values' components.
func components(vals map[string]any) []string {
	var out []string
	list, _ := vals["components"].([]any)
	for _, c := range list {
		if s, ok := c.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

func setComponents(vals map[string]any, comps []string) {
	sort.Strings(comps)
	list := make([]any, len(comps))
	for i, c := range comps {
		list[i] = c
	}
	vals["components"] = list
}

// section is a component's values (made when missing).
func section(vals map[string]any, key string) map[string]any {
	s, ok := vals[key].(map[string]any)
	if !ok {
		s = map[string]any{}
		vals[key] = s
	}
	return s
}

// EstimatorMembers are the members with an estimator in the values.
func EstimatorMembers(vals map[string]any) []string {
	var out []string
	est, _ := vals["schedulerEstimator"].(map[string]any)
	list, _ := est["memberClusters"].([]any)
	for _, m := range list {
		if mm, ok := m.(map[string]any); ok {
			if name, ok := mm["clusterName"].(string); ok {
				out = append(out, name)
			}
		}
	}
	return out
}

// Enabled says whether the values run the addon.
func Enabled(vals map[string]any, a Addon) bool {
	return slices.Contains(components(vals), a.Component)
}

// Enable returns the values with the addons on (vals is not changed).
// The estimator is per member: member names it; a member that has one
// already gets the kubeconfig given. The descheduler needs an estimator.
func Enable(vals map[string]any, add []Addon, member *Member) (map[string]any, error) {
	out := deepCopy(vals)
	comps := components(out)
	for _, a := range add {
		if a.Name == estimator {
			if member == nil {
				return nil, fmt.Errorf("%s runs one per member cluster: name it with --cluster and give its kubeconfig with --member-kubeconfig", estimator)
			}
			est := section(out, "schedulerEstimator")
			list, _ := est["memberClusters"].([]any)
			entry := map[string]any{"clusterName": member.Cluster, "kubeconfig": map[string]any{
				"server": member.Server, "caCrt": string(member.CA), "crt": string(member.Cert), "key": string(member.Key)}}
			replaced := false
			for i, m := range list {
				if mm, ok := m.(map[string]any); ok && mm["clusterName"] == member.Cluster {
					list[i], replaced = entry, true
				}
			}
			if !replaced {
				list = append(list, entry)
			}
			est["memberClusters"] = list
		}
		if !slices.Contains(comps, a.Component) {
			comps = append(comps, a.Component)
		}
	}
	if slices.Contains(comps, "descheduler") && len(EstimatorMembers(out)) == 0 {
		return nil, fmt.Errorf("%s needs %s: enable it for at least one member first (--cluster, --member-kubeconfig)", descheduler, estimator)
	}
	setComponents(out, comps)
	return out, nil
}

// Disable returns the values with the addons off. With cluster set, the
// estimator is removed for that member only (the addon stays on while
// other members have one); the last estimator cannot go while the
// descheduler runs.
func Disable(vals map[string]any, remove []Addon, cluster string) (map[string]any, error) {
	out := deepCopy(vals)
	comps := components(out)
	off := map[string]bool{}
	for _, a := range remove {
		if a.Name == estimator && cluster != "" {
			est := section(out, "schedulerEstimator")
			list, _ := est["memberClusters"].([]any)
			var kept []any
			found := false
			for _, m := range list {
				if mm, ok := m.(map[string]any); ok && mm["clusterName"] == cluster {
					found = true
					continue
				}
				kept = append(kept, m)
			}
			if !found {
				return nil, fmt.Errorf("--cluster=%s: no %s runs for that member (it runs for: %s)", cluster, estimator, strings.Join(EstimatorMembers(out), ", "))
			}
			est["memberClusters"] = kept
			if len(kept) > 0 {
				continue
			}
		} else if a.Name == estimator {
			section(out, "schedulerEstimator")["memberClusters"] = []any{}
		}
		off[a.Component] = true
	}
	var kept []string
	for _, c := range comps {
		if !off[c] {
			kept = append(kept, c)
		}
	}
	if slices.Contains(kept, "descheduler") && !slices.Contains(kept, "schedulerEstimator") {
		return nil, fmt.Errorf("%s needs %s: disable %s too, or keep an estimator", descheduler, estimator, descheduler)
	}
	setComponents(out, kept)
	return out, nil
}

func deepCopy(v map[string]any) map[string]any {
	out := make(map[string]any, len(v))
	for k, x := range v {
		out[k] = copyValue(x)
	}
	return out
}

func copyValue(x any) any {
	switch t := x.(type) {
	case map[string]any:
		return deepCopy(t)
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = copyValue(e)
		}
		return out
	}
	return x
}
