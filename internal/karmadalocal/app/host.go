package app

import (
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/karmada-go/karmada/internal/localup/host"
	"github.com/karmada-go/karmada/internal/localup/process"
)

// newHostCommand is `karmada-local host`: a real single-node Kubernetes
// cluster to install the control plane into with its Helm chart.
func newHostCommand(g *globalOptions) *cobra.Command {
	home, _ := os.UserHomeDir()
	dir := filepath.Join(home, ".karmada-local-host")
	if env := os.Getenv("KARMADA_LOCAL_HOST_DIR"); env != "" {
		dir = env
	}
	cmd := &cobra.Command{
		Use:   "host",
		Short: "Run a real single-node Kubernetes cluster to install Karmada into (needs root)",
		Long: `Run a real single-node Kubernetes cluster on this machine, to install the
Karmada control plane into with its Helm chart (or karmadactl init), as a
platform team does on its own host cluster. Its node is a real kubelet whose
pods run in containers (containerd and runc from Debian's packages, CNI
bridge networking, kube-proxy, CoreDNS), with a node address of its own
(--node-ip, on a bridge no interface joins). The images come from
make images and are imported into containerd: nothing is pulled. It needs
root and the packages of make host-deps.`,
	}
	cmd.PersistentFlags().StringVar(&dir, "host-dir", dir, "directory holding the host cluster's certificates, etcd data, containerd's images, volumes, logs and pids (env KARMADA_LOCAL_HOST_DIR)")

	cfg := host.Config{}
	up := &cobra.Command{
		Use:   "up",
		Short: "Start the host cluster, or whatever part of it is not running",
		Long: `Start the host cluster's etcd, kube-apiserver, kube-controller-manager,
kube-scheduler, containerd, kubelet, kube-proxy and volume provisioner,
import the images of --images into containerd, install cluster DNS and the
default StorageClass, and wait until the node is Ready and DNS answers.
Running it again changes nothing that runs (new images are imported).`,
		Example: `  make images host-deps
  sudo bin/karmada-local host up
  kubectl --context karmada-host get nodes,pods -A
  helm install karmada charts/karmada -n karmada-system --create-namespace --kube-context karmada-host`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg.StateDir, cfg.BinDir = dir, g.binDir
			if cfg.ImageDir == "" {
				cfg.ImageDir = filepath.Join(g.binDir, "..", "_output", "images")
			}
			return host.Up(cmd.Context(), cfg, cmd.OutOrStdout())
		},
	}
	up.Flags().StringVar(&cfg.Kubeconfig, "kubeconfig", filepath.Join(home, ".kube", "karmada.config"), "kubeconfig file that receives the context karmada-host")
	up.Flags().StringVar(&cfg.NodeIP, "node-ip", host.DefaultNodeIP, "the node's address, given to a bridge of its own; the API server listens there, NodePorts answer there")
	up.Flags().StringVar(&cfg.ImageDir, "images", "", "directory of the OCI image tarballs to import (default: <bin-dir>/../_output/images, where make images writes them)")

	var purge bool
	down := &cobra.Command{
		Use:   "down",
		Short: "Stop the host cluster: its pods, processes, iptables rules and links",
		Long: `Stop the kubelet, then every pod (through the CRI, so that their networks and
mounts are released), then the other processes, and remove kube-proxy's
iptables rules and the links up made. Data (etcd, images, volumes) is kept
for the next up unless --purge.`,
		Example: `  karmada-local host down
  karmada-local host down --purge`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return host.Down(cmd.Context(), dir, purge, cmd.OutOrStdout())
		},
	}
	down.Flags().BoolVar(&purge, "purge", false, "also delete the host directory and the kubeconfig context karmada-host")

	status := &cobra.Command{
		Use:   "status",
		Short: "List each process of the host cluster with its pid, ports and health",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			st, err := host.Status(cmd.Context(), dir)
			if err != nil {
				return err
			}
			process.PrintStatus(cmd.OutOrStdout(), st)
			return nil
		},
	}

	po := host.ProvisionerOptions{}
	provisioner := &cobra.Command{
		Use:    "provisioner",
		Short:  "Provision node-local volumes for the StorageClass " + host.StorageClass + " (run by host up)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return host.RunProvisioner(cmd.Context(), po)
		},
	}
	provisioner.Flags().StringVar(&po.Kubeconfig, "kubeconfig", "", "kubeconfig of the host cluster")
	provisioner.Flags().StringVar(&po.VolumeDir, "volume-dir", "", "directory of the volumes")
	provisioner.Flags().StringVar(&po.Node, "node", host.NodeName, "the node the volumes are on")
	provisioner.Flags().StringVar(&po.HealthAddress, "health-address", "127.0.0.1:10261", "address of /healthz")

	cmd.AddCommand(up, down, status, provisioner)
	return cmd
}
