package app

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/karmada-go/karmada/internal/bench"
)

func newEndpointsCommand() *cobra.Command {
	c := &common{}
	var (
		provider  string
		consumers []string
		changes   int
		timeout   time.Duration
	)
	cmd := &cobra.Command{
		Use:   "endpoints",
		Short: "Time a Service's endpoints from the provider to every importing cluster",
		Long: `endpoints propagates the multi-cluster services' CRDs to the members, creates
in a new namespace a Deployment serve with its Service and ServiceExport in
--provider and its ServiceImport in --consumers, then scales serve between 2
and 3 replicas --changes times. Each change is timed from the provider's
EndpointSlice showing it (a ready endpoint added or removed, as a watch on
the provider delivers it) to every consumer's derived-serve slices showing
the same ready endpoints; the karmada-apiserver's requests are counted per
change. The namespace is deleted at the end.`,
		Example: `  karmada-bench endpoints --provider member1 --consumers member2,member3 --changes 200`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := c.validate(); err != nil {
				return err
			}
			switch {
			case changes < 1:
				return fmt.Errorf("--changes=%d: must be at least 1", changes)
			case len(consumers) == 0 || slices.Contains(consumers, provider):
				return fmt.Errorf("--consumers %s: name at least one cluster other than --provider %s", strings.Join(consumers, ","), provider)
			case timeout <= 0:
				return fmt.Errorf("--change-timeout=%s: must be positive", timeout)
			}
			out := cmd.OutOrStdout()
			f, err := bench.Connect(c.kubeconfig, c.karmadaContext, c.members, c.client())
			if err != nil {
				return err
			}
			r := bench.Endpoints(cmd.Context(), f, bench.EndpointsOptions{Provider: provider, Consumers: consumers, Changes: changes, ChangeTimeout: timeout, Log: out})
			return finish(out, c.out, r, r.Error, true, nil)
		},
	}
	c.addFlags(cmd.Flags())
	fs := cmd.Flags()
	fs.StringVar(&provider, "provider", "member1", "the cluster the Service runs in and is exported from")
	fs.StringSliceVar(&consumers, "consumers", []string{"member2", "member3"}, "the clusters the Service is imported into")
	fs.IntVar(&changes, "changes", 200, "how many times serve is scaled (one endpoint added or removed each time)")
	fs.DurationVar(&timeout, "change-timeout", 30*time.Second, "how long one change may take to reach every consumer")
	return cmd
}

func newAutoscaleCommand() *cobra.Command {
	c := &common{}
	var (
		workloads int
		timeout   time.Duration
	)
	cmd := &cobra.Command{
		Use:   "autoscale",
		Short: "Time FederatedHPAs from a change of their pods' cpu to the new replicas in every member",
		Long: `autoscale creates in a new namespace --workloads Deployments of 2 replicas
(100m cpu each) divided over --members, each with a FederatedHPA (min 2, max 4,
cpu at 50 %), waits until every pod runs, then sets every pod's emulated cpu to
150m at once (the kwok usage annotation karmada-local usage set writes; each
member's metrics-server serves it). Each workload is timed from that change to
its members running more than 2 replicas in all. Needs a karmada-local fleet
(metrics-server in the members). The namespace is deleted at the end.`,
		Example: `  karmada-bench autoscale --workloads 20 --members member1,member2`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := c.validate(); err != nil {
				return err
			}
			switch {
			case workloads < 1:
				return fmt.Errorf("--workloads=%d: must be at least 1", workloads)
			case timeout <= 0:
				return fmt.Errorf("--timeout=%s: must be positive", timeout)
			}
			out := cmd.OutOrStdout()
			f, err := bench.Connect(c.kubeconfig, c.karmadaContext, c.members, c.client())
			if err != nil {
				return err
			}
			r := bench.Autoscale(cmd.Context(), f, bench.AutoscaleOptions{Workloads: workloads, Timeout: timeout, Log: out})
			return finish(out, c.out, r, r.Error, true, nil)
		},
	}
	c.addFlags(cmd.Flags())
	cmd.Flags().IntVar(&workloads, "workloads", 20, "how many Deployments with a FederatedHPA")
	cmd.Flags().DurationVar(&timeout, "timeout", 5*time.Minute, "how long the pods may take to run, and each workload to scale")
	return cmd
}
