package localup

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/kubernetes"

	autoscalingv1alpha1 "github.com/karmada-go/karmada/api/autoscaling/v1alpha1"
	"github.com/karmada-go/karmada/internal/localup/kwok"
	"github.com/karmada-go/karmada/internal/localup/plan"
)

// UsageOptions say which members' pods use how much.
type UsageOptions struct {
	Namespace string
	Selector  string
	// CPU and Memory are quantities; an empty one is left as it is.
	CPU, Memory string
	// Metrics are custom metrics, NAME=QUANTITY (served by each push
	// member's custom.metrics.k8s.io as pods/NAME).
	Metrics []string
	// Cluster limits the change to one member ("" for every member).
	Cluster string
}

// metrics parses Metrics into annotations.
func (o UsageOptions) metrics() (map[string]string, error) {
	out := map[string]string{}
	for _, m := range o.Metrics {
		name, value, ok := strings.Cut(m, "=")
		if !ok || name == "" {
			return nil, fmt.Errorf("--metric=%q: want NAME=QUANTITY, e.g. http_requests_per_second=120", m)
		}
		key := autoscalingv1alpha1.LocalCustomMetricAnnotationPrefix + name
		if errs := validation.IsQualifiedName(key); len(errs) > 0 {
			return nil, fmt.Errorf("--metric=%q: the name %q: %s", m, name, strings.Join(errs, "; "))
		}
		if _, err := resource.ParseQuantity(value); err != nil {
			return nil, fmt.Errorf("--metric=%q: %q is not a quantity (e.g. 120, 1500m, 2k)", m, value)
		}
		out[key] = value
	}
	return out, nil
}

// Validate refuses what cannot be applied, naming the flag.
func (o UsageOptions) Validate() error {
	if o.CPU == "" && o.Memory == "" && len(o.Metrics) == 0 {
		return fmt.Errorf("nothing to set: give --cpu, --memory, --metric or several")
	}
	if _, err := o.metrics(); err != nil {
		return err
	}
	if _, err := labels.Parse(o.Selector); err != nil {
		return fmt.Errorf("--selector=%q: %w", o.Selector, err)
	}
	for flag, v := range map[string]string{"--cpu": o.CPU, "--memory": o.Memory} {
		if v == "" {
			continue
		}
		q, err := resource.ParseQuantity(v)
		if err != nil {
			return fmt.Errorf("%s=%q: not a quantity (e.g. 500m, 2, 256Mi)", flag, v)
		}
		if q.Sign() < 0 {
			return fmt.Errorf("%s=%q: must not be negative", flag, v)
		}
	}
	return nil
}

// UsageSet sets the emulated usage of every container of the matching
// pods of the fleet's members (kwok reports it; each member's
// metrics-server serves it): the pods' usage annotations. Pods created
// later start at kwok's default (1m cpu, 1Mi) unless their template
// carries the annotations.
func UsageSet(ctx context.Context, stateDir, binDir string, o UsageOptions, out io.Writer) error {
	if err := o.Validate(); err != nil {
		return err
	}
	f, err := fleetFromState(stateDir, binDir)
	if err != nil {
		return err
	}
	var members []*plan.Cluster
	for _, c := range f.Members() {
		if o.Cluster == "" || c.Name == o.Cluster {
			members = append(members, c)
		}
	}
	if len(members) == 0 {
		return fmt.Errorf("--cluster=%q: no such member", o.Cluster)
	}
	annotations := map[string]any{}
	if o.CPU != "" {
		annotations[kwok.UsageCPUAnnotation] = o.CPU
	}
	if o.Memory != "" {
		annotations[kwok.UsageMemoryAnnotation] = o.Memory
	}
	metrics, _ := o.metrics()
	for k, v := range metrics {
		annotations[k] = v
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": annotations}})
	if err != nil {
		return err
	}
	total := 0
	for _, c := range members {
		cfg, err := c.RestConfig()
		if err != nil {
			return err
		}
		kc, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			return err
		}
		pods, err := kc.CoreV1().Pods(o.Namespace).List(ctx, metav1.ListOptions{LabelSelector: o.Selector})
		if err != nil {
			return fmt.Errorf("listing pods of %s: %w", c.Name, err)
		}
		for _, p := range pods.Items {
			if _, err := kc.CoreV1().Pods(p.Namespace).Patch(ctx, p.Name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
				return fmt.Errorf("setting the usage of %s/%s in %s: %w", p.Namespace, p.Name, c.Name, err)
			}
		}
		fmt.Fprintf(out, "%s: %d pods\n", c.Name, len(pods.Items))
		total += len(pods.Items)
	}
	if total == 0 {
		fmt.Fprintln(out, "No pod matched: nothing changed.")
	}
	return nil
}
