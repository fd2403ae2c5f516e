package estimator

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// ParseResourceList reads RESOURCE=QUANTITY pairs separated by commas, as
// flags give a replica's requests or a node's capacity (cpu=2,memory=4Gi).
// Every quantity must be positive. Errors name the pair, not the flag: the
// caller adds it.
func ParseResourceList(s string) (corev1.ResourceList, error) {
	out := corev1.ResourceList{}
	for _, kv := range strings.Split(s, ",") {
		name, value, ok := strings.Cut(strings.TrimSpace(kv), "=")
		if !ok || name == "" {
			return nil, fmt.Errorf("%q is not RESOURCE=QUANTITY (want name=quantity pairs separated by commas, e.g. cpu=2,memory=4Gi)", kv)
		}
		q, err := resource.ParseQuantity(value)
		if err != nil {
			return nil, fmt.Errorf("%s=%q is not a quantity (e.g. 500m, 2, 4Gi): %v", name, value, err)
		}
		if q.Sign() <= 0 {
			return nil, fmt.Errorf("%s must be positive", name)
		}
		out[corev1.ResourceName(name)] = q
	}
	return out, nil
}
