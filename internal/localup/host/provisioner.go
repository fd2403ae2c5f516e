package host

// The host cluster's volumes: a provisioner of node-local PersistentVolumes
// for the StorageClass karmada-local-path, so that the chart's etcd keeps
// its data on a claim across pod restarts and upgrades, and loses it with
// its claim on uninstall. Local volumes (not hostPath) so that the kubelet
// gives them to the pod's fsGroup: etcd runs as a non-root user.

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"
)

// Annotations the provisioner reads and writes, Kubernetes' own.
const (
	annSelectedNode  = "volume.kubernetes.io/selected-node"
	annProvisionedBy = "pv.kubernetes.io/provisioned-by"
)

// ProvisionerOptions configure RunProvisioner.
type ProvisionerOptions struct {
	Kubeconfig string
	// VolumeDir holds one directory per volume.
	VolumeDir string
	// Node is the node the volumes live on.
	Node string
	// HealthAddress serves /healthz.
	HealthAddress string
}

// RunProvisioner provisions and deletes volumes until ctx ends.
func RunProvisioner(ctx context.Context, o ProvisionerOptions) error {
	log := klog.FromContext(ctx)
	cfg, err := clientcmd.BuildConfigFromFlags("", o.Kubeconfig)
	if err != nil {
		return err
	}
	kc, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(o.VolumeDir, 0o755); err != nil {
		return err
	}
	l, err := net.Listen("tcp", o.HealthAddress)
	if err != nil {
		return fmt.Errorf("--health-address: %w", err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) })
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(l) }()
	defer srv.Close()

	f := informers.NewSharedInformerFactory(kc, 5*time.Minute)
	pvcs, pvs, classes := f.Core().V1().PersistentVolumeClaims(), f.Core().V1().PersistentVolumes(), f.Storage().V1().StorageClasses()
	kick := make(chan struct{}, 1)
	poke := func() {
		select {
		case kick <- struct{}{}:
		default:
		}
	}
	handler := cache.ResourceEventHandlerFuncs{AddFunc: func(any) { poke() }, UpdateFunc: func(any, any) { poke() }, DeleteFunc: func(any) { poke() }}
	for _, inf := range []cache.SharedIndexInformer{pvcs.Informer(), pvs.Informer(), classes.Informer()} {
		if _, err := inf.AddEventHandler(handler); err != nil {
			return err
		}
	}
	f.Start(ctx.Done())
	f.WaitForCacheSync(ctx.Done())
	p := &provisioner{o: o, kc: kc}
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-kick:
		}
		claims, _ := pvcs.Lister().List(labels.Everything())
		volumes, _ := pvs.Lister().List(labels.Everything())
		scs, _ := classes.Lister().List(labels.Everything())
		ours := map[string]bool{}
		for _, sc := range scs {
			if sc.Provisioner == LocalPathProvisioner {
				ours[sc.Name] = true
			}
		}
		if err := p.reconcile(ctx, claims, volumes, ours); err != nil {
			log.Error(err, "Provisioning")
			// Tried again after the next change, or in a while.
			time.AfterFunc(5*time.Second, poke)
		}
	}
}

type provisioner struct {
	o  ProvisionerOptions
	kc kubernetes.Interface
}

// reconcile makes a volume for every pending claim of our classes that the
// scheduler placed on our node, and deletes (with its directory) every
// volume of ours that its claim released.
func (p *provisioner) reconcile(ctx context.Context, claims []*corev1.PersistentVolumeClaim, volumes []*corev1.PersistentVolume, ours map[string]bool) error {
	log := klog.FromContext(ctx)
	var errs []error
	bound := map[string]bool{}
	for _, v := range volumes {
		if v.Spec.ClaimRef != nil {
			bound[string(v.Spec.ClaimRef.UID)] = true
		}
	}
	for _, c := range claims {
		if c.Spec.StorageClassName == nil || !ours[*c.Spec.StorageClassName] || c.Spec.VolumeName != "" || bound[string(c.UID)] ||
			c.Annotations[annSelectedNode] != p.o.Node || c.DeletionTimestamp != nil {
			continue
		}
		pv := p.volumeFor(c)
		if err := os.MkdirAll(pv.Spec.Local.Path, 0o755); err != nil {
			errs = append(errs, err)
			continue
		}
		if _, err := p.kc.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			errs = append(errs, fmt.Errorf("creating volume %s for %s/%s: %w", pv.Name, c.Namespace, c.Name, err))
			continue
		}
		log.Info("Provisioned", "volume", pv.Name, "claim", klog.KObj(c), "path", pv.Spec.Local.Path)
	}
	for _, v := range volumes {
		if v.Annotations[annProvisionedBy] != LocalPathProvisioner || v.Status.Phase != corev1.VolumeReleased ||
			v.Spec.PersistentVolumeReclaimPolicy != corev1.PersistentVolumeReclaimDelete || v.Spec.Local == nil {
			continue
		}
		dir := v.Spec.Local.Path
		// Only a directory of ours is removed.
		if filepath.Dir(dir) != filepath.Clean(p.o.VolumeDir) {
			errs = append(errs, fmt.Errorf("volume %s: path %s is not under %s; not removing it", v.Name, dir, p.o.VolumeDir))
			continue
		}
		if err := os.RemoveAll(dir); err != nil {
			errs = append(errs, err)
			continue
		}
		if err := p.kc.CoreV1().PersistentVolumes().Delete(ctx, v.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &v.UID}}); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, err)
			continue
		}
		log.Info("Deleted released volume", "volume", v.Name, "path", dir)
	}
	return errors.Join(errs...)
}

func (p *provisioner) volumeFor(c *corev1.PersistentVolumeClaim) *corev1.PersistentVolume {
	name := "pvc-" + string(c.UID)
	fs := corev1.PersistentVolumeFilesystem
	return &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{annProvisionedBy: LocalPathProvisioner}},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: c.Spec.Resources.Requests[corev1.ResourceStorage]},
			AccessModes:                   c.Spec.AccessModes,
			PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimDelete,
			StorageClassName:              *c.Spec.StorageClassName,
			VolumeMode:                    &fs,
			ClaimRef:                      &corev1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1", Namespace: c.Namespace, Name: c.Name, UID: c.UID},
			PersistentVolumeSource:        corev1.PersistentVolumeSource{Local: &corev1.LocalVolumeSource{Path: filepath.Join(p.o.VolumeDir, name)}},
			NodeAffinity: &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
				MatchExpressions: []corev1.NodeSelectorRequirement{{Key: corev1.LabelHostname, Operator: corev1.NodeSelectorOpIn, Values: []string{p.o.Node}}},
			}}}},
		},
	}
}
