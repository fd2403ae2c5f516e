package interpreter

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/equality"

	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
	workv1alpha1 "github.com/karmada-go/karmada/api/work/v1alpha1"
)

func TestPrune(t *testing.T) {
	cases := []struct {
		name, in, want string
	}{
		{"metadata and status go; claims and the rest stay", `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: shop
  uid: 1234
  resourceVersion: "99"
  generation: 3
  creationTimestamp: "2026-01-01T00:00:00Z"
  managedFields: [{manager: kubectl}]
  ownerReferences: [{apiVersion: v1, kind: X, name: y, uid: z}]
  finalizers: [karmada.io/x]
  labels: {app: web, propagationpolicy.karmada.io/permanent-id: abc}
  annotations: {note: keep, clusterpropagationpolicy.karmada.io/name: cpp}
spec: {replicas: 2}
status: {replicas: 2}
`, `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop, labels: {app: web, propagationpolicy.karmada.io/permanent-id: abc}, annotations: {note: keep, clusterpropagationpolicy.karmada.io/name: cpp}}
spec: {replicas: 2}
`},
		{"service loses assigned IPs", `
apiVersion: v1
kind: Service
metadata: {name: s}
spec: {clusterIP: 10.0.0.1, clusterIPs: [10.0.0.1], healthCheckNodePort: 30001, ports: [{port: 80, nodePort: 30080}]}
`, `
apiVersion: v1
kind: Service
metadata: {name: s}
spec: {ports: [{port: 80, nodePort: 30080}]}
`},
		{"headless service keeps clusterIP None", `
apiVersion: v1
kind: Service
metadata: {name: s}
spec: {clusterIP: None, clusterIPs: [None]}
`, `
apiVersion: v1
kind: Service
metadata: {name: s}
spec: {clusterIP: None, clusterIPs: [None]}
`},
		{"job loses its generated selector and labels", `
apiVersion: batch/v1
kind: Job
metadata: {name: j}
spec:
  selector: {matchLabels: {controller-uid: u1}}
  template: {metadata: {labels: {controller-uid: u1, batch.kubernetes.io/controller-uid: u1, job-name: j, batch.kubernetes.io/job-name: j, app: x}}}
`, `
apiVersion: batch/v1
kind: Job
metadata: {name: j}
spec: {template: {metadata: {labels: {app: x}}}}
`},
		{"job with a manual selector keeps it", `
apiVersion: batch/v1
kind: Job
metadata: {name: j}
spec: {manualSelector: true, selector: {matchLabels: {app: x}}, template: {metadata: {labels: {app: x}}}}
`, `
apiVersion: batch/v1
kind: Job
metadata: {name: j}
spec: {manualSelector: true, selector: {matchLabels: {app: x}}, template: {metadata: {labels: {app: x}}}}
`},
		{"service account loses token secrets", `
apiVersion: v1
kind: ServiceAccount
metadata: {name: sa}
secrets: [{name: sa-token-x}]
imagePullSecrets: [{name: reg}]
`, `
apiVersion: v1
kind: ServiceAccount
metadata: {name: sa}
imagePullSecrets: [{name: reg}]
`},
	}
	for _, c := range cases {
		in := obj(t, c.in)
		before := in.DeepCopy()
		got := Default.Prune(in)
		if diff := cmp.Diff(obj(t, c.want).Object, got.Object); diff != "" {
			t.Errorf("%s (-want,+got):\n%s", c.name, diff)
		}
		if !equality.Semantic.DeepEqual(before, in) {
			t.Errorf("%s: the input was modified", c.name)
		}
	}
}

// The marks the controllers write and trust never come from a template: a
// tenant's planted pre-adoption record, adoption or Work mark is dropped;
// the policy's claim and the template's own labels stay, retain-replicas
// among them (the execution controller reads it from the manifest).
func TestPruneDropsControllerMarks(t *testing.T) {
	in := obj(t, `
apiVersion: v1
kind: ConfigMap
metadata:
  name: planted
  namespace: t1
  labels: {app: web, karmada.io/managed: "true", resourcebinding.karmada.io/permanent-id: x, propagationpolicy.karmada.io/permanent-id: p, resourcetemplate.karmada.io/retain-replicas: "true", resourcetemplate.karmada.io/uid: u}
  annotations: {work.karmada.io/pre-adoption: H4sI, work.karmada.io/adopted-by: karmada-es-m1/other, work.karmada.io/name: other, resourcetemplate.karmada.io/generation: "9", propagationpolicy.karmada.io/name: pp, note: kept}
`)
	out := Default.Prune(in)
	if got := out.GetLabels(); len(got) != 3 || got["app"] != "web" || got["propagationpolicy.karmada.io/permanent-id"] != "p" ||
		got["resourcetemplate.karmada.io/retain-replicas"] != "true" {
		t.Errorf("labels %v, want the template's own, retain-replicas and the claim", got)
	}
	if got := out.GetAnnotations(); len(got) != 2 || got["note"] != "kept" || got["propagationpolicy.karmada.io/name"] != "pp" {
		t.Errorf("annotations %v, want the template's own and the claim", got)
	}
	if workv1alpha1.IsControllerMark(policyv1alpha1.RetainReplicasLabel) {
		t.Errorf("%s taken for a controller mark", policyv1alpha1.RetainReplicasLabel)
	}
	if len(in.GetAnnotations()) != 6 {
		t.Error("the template was changed")
	}
}
