package cluster

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/duration"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
)

// columns are `kubectl get clusters`'s, as the Cluster CRD printed them;
// priority 1 shows with -o wide.
var columns = []metav1.TableColumnDefinition{
	{Name: "Name", Type: "string", Format: "name", Description: "The cluster's name."},
	{Name: "Version", Type: "string", Description: "The Kubernetes version the member's API server reports."},
	{Name: "Mode", Type: "string", Description: "Push or Pull."},
	{Name: "Ready", Type: "string", Description: "The status of the Ready condition."},
	{Name: "Age", Type: "string", Description: "Time since the Cluster was created."},
	{Name: "APIEndpoint", Type: "string", Priority: 1, Description: "The member's API server."},
	{Name: "Insecure-Skip-TLS-Verify", Type: "boolean", Priority: 1, Description: "Whether the member's serving certificate is not verified."},
}

// tableConvertor prints Clusters as tables.
type tableConvertor struct{}

func (tableConvertor) ConvertToTable(_ context.Context, obj runtime.Object, tableOptions runtime.Object) (*metav1.Table, error) {
	table := &metav1.Table{}
	if opts, ok := tableOptions.(*metav1.TableOptions); !ok || !opts.NoHeaders {
		table.ColumnDefinitions = columns
	}
	var items []clusterv1alpha1.Cluster
	switch o := obj.(type) {
	case *clusterv1alpha1.Cluster:
		items = []clusterv1alpha1.Cluster{*o}
	case *clusterv1alpha1.ClusterList:
		items = o.Items
		table.ResourceVersion, table.Continue, table.RemainingItemCount = o.ResourceVersion, o.Continue, o.RemainingItemCount
	default:
		return nil, fmt.Errorf("cannot print %T as a table of Clusters", obj)
	}
	now := time.Now()
	table.Rows = make([]metav1.TableRow, 0, len(items))
	for i := range items {
		c := &items[i]
		table.Rows = append(table.Rows, metav1.TableRow{
			Cells:  Row(c, now),
			Object: runtime.RawExtension{Object: c},
		})
	}
	return table, nil
}

// Row is a Cluster's cells, in the order of the columns.
func Row(c *clusterv1alpha1.Cluster, now time.Time) []any {
	ready := "Unknown"
	if cond := meta.FindStatusCondition(c.Status.Conditions, clusterv1alpha1.ClusterConditionReady); cond != nil {
		ready = string(cond.Status)
	}
	age := "<unknown>"
	if !c.CreationTimestamp.IsZero() {
		age = duration.HumanDuration(now.Sub(c.CreationTimestamp.Time))
	}
	return []any{c.Name, c.Status.KubernetesVersion, string(c.Spec.SyncMode), ready, age, c.Spec.APIEndpoint, c.Spec.InsecureSkipTLSVerification}
}
