//go:build hoste2e

package hoste2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
	"github.com/karmada-go/karmada/internal/testenv"
)

// The images of make images are reproducible: built again from the same
// binaries, with the labels the first build recorded, they are the same
// bytes.
func TestImagesAreReproducible(t *testing.T) {
	dir := t.TempDir()
	labels := imageLabels(t, filepath.Join(lane.imageDir, "karmada-scheduler.tar"))
	created, err := time.Parse(time.RFC3339, labels["org.opencontainers.image.created"])
	if err != nil {
		t.Fatal(err)
	}
	ref := imageRef(t, filepath.Join(lane.imageDir, "karmada-scheduler.tar"))
	registry := ref[:strings.LastIndex(ref, "/")]
	out, err := command("", "go", "run", "./hack/images", "--bin-dir", lane.bin, "--output", dir, "--only", "karmada-scheduler,etcd,pause",
		"--registry", registry, "--tag", ref[strings.LastIndex(ref, ":")+1:], "--version", labels["org.opencontainers.image.version"],
		"--revision", labels["org.opencontainers.image.revision"], "--source-date-epoch", fmt.Sprint(created.Unix()))
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, name := range []string{"karmada-scheduler", "etcd", "pause"} {
		a, err := os.ReadFile(filepath.Join(lane.imageDir, name+".tar"))
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(dir, name+".tar"))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a, b) {
			t.Errorf("%s: a second build differs from make images' (%d and %d bytes)", name, len(a), len(b))
		}
	}
	t.Logf("image sizes:\n%s", out)
}

// The control plane keeps the member copies across a helm upgrade to
// another build: every component's pod is replaced, no copy is deleted,
// recreated or rewritten, and propagation works afterwards.
func TestHelmUpgradeKeepsEveryMemberCopy(t *testing.T) {
	ctx := t.Context()
	c := karmadaClient(t)
	ns := "hoste2e-upgrade"
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}) })
	dep := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web", Labels: map[string]string{"app": "web"}},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](1),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx"}}}},
		},
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web-config"}, Data: map[string]string{"k": "v"}}
	pp := &policyv1alpha1.PropagationPolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"},
		Spec: policyv1alpha1.PropagationSpec{
			ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"}, {APIVersion: "v1", Kind: "ConfigMap", Name: "web-config"}},
			Placement:         policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1", "member2"}}},
		},
	}
	for _, o := range []client.Object{dep, cm, pp} {
		if err := c.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	type copyID struct{ uid, gen, rv string }
	copies := func(ctx context.Context, mk kubernetes.Interface) (map[string]copyID, error) {
		d, err := mk.AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		if d.Status.AvailableReplicas != 1 {
			return nil, fmt.Errorf("web available %d", d.Status.AvailableReplicas)
		}
		m, err := mk.CoreV1().ConfigMaps(ns).Get(ctx, "web-config", metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		return map[string]copyID{
			"deployment": {string(d.UID), fmt.Sprint(d.Generation), d.ResourceVersion},
			"configmap":  {string(m.UID), fmt.Sprint(m.Generation), m.ResourceVersion},
		}, nil
	}
	before := map[string]map[string]copyID{}
	for _, m := range []string{"member1", "member2"} {
		mk := memberKube(t, m)
		testenv.Eventually(t, 2*time.Minute, "web in "+m, func(ctx context.Context) error {
			var err error
			before[m], err = copies(ctx, mk)
			return err
		})
	}

	// Another build: our binaries linked again with another version, and
	// their images with another tag, imported into the node.
	next := "v0.0.0-hoste2e-next"
	dir := t.TempDir()
	// Static, as make build links them: the images hold no C library.
	t.Setenv("CGO_ENABLED", "0")
	binDir := filepath.Join(dir, "bin")
	if out, err := command("", "go", "build", "-trimpath", "-o", binDir+"/",
		"-ldflags", "-s -w -X github.com/karmada-go/karmada/internal/version.gitVersion="+next,
		// Only what the images below hold.
		"./cmd/karmada-controller-manager", "./cmd/karmada-scheduler", "./cmd/karmada-webhook", "./cmd/karmada-aggregated-apiserver", "./cmd/karmadactl",
		"./cmd/pause"); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	ref := imageRef(t, filepath.Join(lane.imageDir, "karmada-scheduler.tar"))
	if out, err := command("", "go", "run", "./hack/images", "--bin-dir", binDir, "--upstream-bin-dir", lane.bin, "--output", filepath.Join(dir, "images"),
		"--registry", ref[:strings.LastIndex(ref, "/")], "--tag", next, "--source-date-epoch", "0",
		"--only", "karmada-controller-manager,karmada-scheduler,karmada-webhook,karmada-aggregated-apiserver,karmadactl,kube-apiserver,kube-controller-manager,etcd,pause,coredns"); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if out, err := command("", filepath.Join(lane.bin, "karmada-local"), "host", "--host-dir", lane.hostDir, "up", "--kubeconfig", lane.hostKubeconfig,
		"--images", filepath.Join(dir, "images"), "--node-ip", nodeIP); err != nil {
		t.Fatalf("importing the new images: %v\n%s", err, out)
	}
	var tags []string
	for _, comp := range []string{"etcd.internal", "apiServer", "kubeControllerManager", "controllerManager", "scheduler", "webhook", "aggregatedApiServer", "postInstallJob"} {
		tags = append(tags, comp+".image.tag="+next)
	}
	podsBefore := releasePods(ctx, t)
	start := time.Now()
	out, err := helm("upgrade", release, filepath.Join(lane.root, "charts", "karmada"), "-f", lane.valuesFile, "--set", strings.Join(tags, ","), "--wait", "--wait-for-jobs", "--timeout", "10m")
	if err != nil {
		dumpPods()
		t.Fatalf("helm upgrade: %v\n%s", err, out)
	}
	t.Logf("helm upgrade to another build took %s", time.Since(start).Round(100*time.Millisecond))
	for name, p := range releasePods(ctx, t) {
		if p.DeletionTimestamp != nil {
			continue
		}
		if old, ok := podsBefore[name]; ok && old.UID == p.UID && p.Labels["app"] != "karmada-setup" {
			t.Errorf("pod %s was not replaced by the upgrade", name)
		}
		if img := p.Spec.Containers[0].Image; !strings.HasSuffix(img, ":"+next) {
			t.Errorf("pod %s runs %s after the upgrade, want the tag %s", name, img, next)
		}
	}
	// The Karmada API answers with the kept certificates (the CA did not
	// change: the agent's and the members' trust still holds).
	testenv.Eventually(t, 2*time.Minute, "every cluster Ready after the upgrade", func(ctx context.Context) error {
		list := &clusterv1alpha1.ClusterList{}
		if err := c.List(ctx, list); err != nil {
			return err
		}
		for _, cl := range list.Items {
			if !meta.IsStatusConditionTrue(cl.Status.Conditions, clusterv1alpha1.ClusterConditionReady) {
				return fmt.Errorf("%s not Ready", cl.Name)
			}
		}
		return nil
	})
	// Nothing in the members was deleted, recreated or rewritten (both
	// members looked at together, for 15 s).
	kubes := map[string]kubernetes.Interface{"member1": memberKube(t, "member1"), "member2": memberKube(t, "member2")}
	testenv.Consistently(t, 15*time.Second, "the copies in member1 and member2 untouched after the upgrade", func(ctx context.Context) error {
		for _, m := range []string{"member1", "member2"} {
			now, err := copies(ctx, kubes[m])
			if err != nil {
				return fmt.Errorf("%s: %w", m, err)
			}
			for k, id := range before[m] {
				if now[k].uid != id.uid {
					return fmt.Errorf("%s in %s recreated (uid %s, was %s)", k, m, now[k].uid, id.uid)
				}
				if now[k].gen != id.gen {
					return fmt.Errorf("%s in %s rewritten (generation %s, was %s)", k, m, now[k].gen, id.gen)
				}
			}
		}
		return nil
	})
	// The upgraded control plane propagates.
	patch := client.RawPatch(types.MergePatchType, []byte(`{"data":{"k":"after-upgrade"}}`))
	if err := c.Patch(ctx, cm, patch); err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{"member1", "member2"} {
		mk := memberKube(t, m)
		testenv.Eventually(t, time.Minute, "the change reaches "+m, func(ctx context.Context) error {
			got, err := mk.CoreV1().ConfigMaps(ns).Get(ctx, "web-config", metav1.GetOptions{})
			if err != nil {
				return err
			}
			if got.Data["k"] != "after-upgrade" {
				return fmt.Errorf("data %v", got.Data)
			}
			return nil
		})
	}
}

// imageLabels reads the config labels of an OCI layout tarball.
func imageLabels(t *testing.T, file string) map[string]string {
	t.Helper()
	files := untar(t, file)
	var idx struct {
		Manifests []struct{ Digest string } `json:"manifests"`
	}
	mustJSON(t, files["index.json"], &idx)
	var manifest struct {
		Config struct{ Digest string } `json:"config"`
	}
	mustJSON(t, files["blobs/sha256/"+strings.TrimPrefix(idx.Manifests[0].Digest, "sha256:")], &manifest)
	var config struct {
		Config struct{ Labels map[string]string } `json:"config"`
	}
	mustJSON(t, files["blobs/sha256/"+strings.TrimPrefix(manifest.Config.Digest, "sha256:")], &config)
	return config.Config.Labels
}

func imageRef(t *testing.T, file string) string {
	t.Helper()
	var idx struct {
		Manifests []struct {
			Annotations map[string]string `json:"annotations"`
		} `json:"manifests"`
	}
	mustJSON(t, untar(t, file)["index.json"], &idx)
	return idx.Manifests[0].Annotations["io.containerd.image.name"]
}
