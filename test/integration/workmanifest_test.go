package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha1 "github.com/karmada-go/karmada/api/work/v1alpha1"
	"github.com/karmada-go/karmada/internal/testenv"
)

// The binding controller skips a Work whose listed manifest has the bytes it
// would write (binding.upToDate); any other bytes cost a read and a patch
// computation that then finds nothing to change. That skip works only while
// the API server hands a manifest back as json.Marshal wrote it.
func TestWorkManifestComesBackAsWritten(t *testing.T) {
	t.Parallel()
	env := testenv.Start(t)
	ctx := context.Background()
	createNamespace(ctx, t, env.Client, "karmada-es-member1")
	manifest := map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "web", "namespace": "shop",
			"labels":      map[string]any{"app": "web", "propagationpolicy.karmada.io/permanent-id": "0b6c"},
			"annotations": map[string]any{"resourcetemplate.karmada.io/generation": "3", "work.karmada.io/conflict-resolution": "abort"}},
		"spec": map[string]any{"replicas": int64(2), "selector": map[string]any{"matchLabels": map[string]any{"app": "web"}},
			"template": map[string]any{"metadata": map[string]any{"labels": map[string]any{"app": "web"}},
				"spec": map[string]any{"containers": []any{map[string]any{"name": "web", "image": "nginx:1.27", "args": []any{"--port=8080", "--a&b<c>"}}}}}},
	}
	raw, err := json.Marshal(manifest)
	if err != nil {
		t.Fatal(err)
	}
	w := &workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Namespace: "karmada-es-member1", Name: "web"},
		Spec: workv1alpha1.WorkSpec{Workload: workv1alpha1.WorkloadTemplate{Manifests: []workv1alpha1.Manifest{{RawExtension: runtime.RawExtension{Raw: raw}}}}}}
	if err := env.Client.Create(ctx, w); err != nil {
		t.Fatal(err)
	}
	got := &workv1alpha1.Work{}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(w), got); err != nil {
		t.Fatal(err)
	}
	if back := got.Spec.Workload.Manifests[0].Raw; !bytes.Equal(back, raw) {
		t.Errorf("manifest changed on the way through the API server:\nsent %s\ngot  %s", raw, back)
	}
}
