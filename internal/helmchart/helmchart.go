// Package helmchart loads the embedded Karmada chart (charts/karmada) and
// renders, installs, upgrades and uninstalls it with the Helm SDK: the one
// source of the manifests `helm install` and `karmadactl init` install.
package helmchart

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"sort"
	"strings"
	"time"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	kubefake "helm.sh/helm/v3/pkg/kube/fake"
	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/releaseutil"
	"helm.sh/helm/v3/pkg/storage"
	"helm.sh/helm/v3/pkg/storage/driver"
	"k8s.io/cli-runtime/pkg/genericclioptions"

	"github.com/karmada-go/karmada/charts"
)

// ChartDir is the chart's directory in charts.FS.
const ChartDir = "karmada"

// DefaultNamespace and DefaultRelease are what Karmada's documentation
// installs the chart as.
const (
	DefaultNamespace = "karmada-system"
	DefaultRelease   = "karmada"
)

// Load returns the embedded chart.
func Load() (*chart.Chart, error) {
	return LoadFS(charts.FS, ChartDir)
}

// LoadFS loads the chart in dir of fsys.
func LoadFS(fsys fs.FS, dir string) (*chart.Chart, error) {
	var files []*loader.BufferedFile
	err := fs.WalkDir(fsys, dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		files = append(files, &loader.BufferedFile{Name: strings.TrimPrefix(p, dir+"/"), Data: data})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading the chart: %w", err)
	}
	return loader.LoadFiles(files)
}

// KubeVersion is the Kubernetes version a render without a cluster
// assumes: the pinned one the project builds.
const KubeVersion = "v1.33.13"

// Rendered is what an install would apply.
type Rendered struct {
	// Manifests are the release's objects, in Helm's install order, each
	// with the template it came from.
	Manifests []releaseutil.Manifest
	// Hooks are the hook objects (the setup Job).
	Hooks []*release.Hook
	Notes string
}

// Render renders ch with vals as `helm template` does: no cluster, so
// lookups find nothing (fresh certificates every time). Errors name the
// value at fault (the chart fails with them).
func Render(ctx context.Context, ch *chart.Chart, vals map[string]any, releaseName, namespace string) (*Rendered, error) {
	kv, err := chartutil.ParseKubeVersion(KubeVersion)
	if err != nil {
		return nil, err
	}
	cfg := &action.Configuration{
		Releases:     storage.Init(driver.NewMemory()),
		KubeClient:   &kubefake.PrintingKubeClient{Out: io.Discard},
		Capabilities: chartutil.DefaultCapabilities,
		Log:          func(string, ...any) {},
	}
	in := action.NewInstall(cfg)
	in.DryRun, in.ClientOnly, in.Replace = true, true, true
	in.ReleaseName, in.Namespace = releaseName, namespace
	in.KubeVersion = kv
	rel, err := in.RunWithContext(ctx, ch, vals)
	if err != nil {
		return nil, err
	}
	_, manifests, err := releaseutil.SortManifests(releaseutil.SplitManifests(rel.Manifest), nil, releaseutil.InstallOrder)
	if err != nil {
		return nil, err
	}
	return &Rendered{Manifests: manifests, Hooks: rel.Hooks, Notes: rel.Info.Notes}, nil
}

// Options say where and how Apply installs.
type Options struct {
	// Getter reaches the host cluster (kubeconfig and context).
	Getter genericclioptions.RESTClientGetter
	// Namespace and Release name the release.
	Namespace, Release string
	// CreateNamespace creates the namespace when missing.
	CreateNamespace bool
	// Wait waits until every object is ready and the setup Job has run.
	Wait bool
	// Timeout bounds the wait for every object to be ready and the setup
	// Job to finish.
	Timeout time.Duration
	// Log receives Helm's progress.
	Log func(format string, v ...any)
}

func (o Options) config() (*action.Configuration, error) {
	cfg := &action.Configuration{}
	log := o.Log
	if log == nil {
		log = func(string, ...any) {}
	}
	if err := cfg.Init(o.Getter, o.Namespace, "secret", log); err != nil {
		return nil, fmt.Errorf("reaching the host cluster: %w", err)
	}
	return cfg, nil
}

// Apply installs the chart as a release, or upgrades the release when it
// exists, and (with o.Wait) waits until every object is ready and the setup
// Job has run. Running it again with the same values changes nothing that
// runs.
func Apply(ctx context.Context, ch *chart.Chart, vals map[string]any, o Options) (*release.Release, error) {
	cfg, err := o.config()
	if err != nil {
		return nil, err
	}
	hist := action.NewHistory(cfg)
	hist.Max = 1
	_, err = hist.Run(o.Release)
	switch {
	case errors.Is(err, driver.ErrReleaseNotFound):
		in := action.NewInstall(cfg)
		in.ReleaseName, in.Namespace = o.Release, o.Namespace
		in.CreateNamespace = o.CreateNamespace
		in.Wait, in.WaitForJobs, in.Timeout = o.Wait, o.Wait, o.Timeout
		rel, err := in.RunWithContext(ctx, ch, vals)
		if err != nil {
			return nil, fmt.Errorf("installing release %s in namespace %s: %w", o.Release, o.Namespace, err)
		}
		return rel, nil
	case err != nil:
		return nil, fmt.Errorf("reading release %s: %w", o.Release, err)
	}
	up := action.NewUpgrade(cfg)
	up.Namespace = o.Namespace
	up.Wait, up.WaitForJobs, up.Timeout = o.Wait, o.Wait, o.Timeout
	rel, err := up.RunWithContext(ctx, o.Release, ch, vals)
	if err != nil {
		return nil, fmt.Errorf("upgrading release %s in namespace %s: %w", o.Release, o.Namespace, err)
	}
	return rel, nil
}

// Uninstall removes the release and waits until its objects are gone; a
// release that is not there is not an error (uninstalled is uninstalled).
func Uninstall(o Options) (found bool, err error) {
	cfg, err := o.config()
	if err != nil {
		return false, err
	}
	un := action.NewUninstall(cfg)
	un.Wait, un.Timeout = o.Wait, o.Timeout
	if _, err := un.Run(o.Release); err != nil {
		if errors.Is(err, driver.ErrReleaseNotFound) || strings.Contains(err.Error(), "not found") {
			return false, nil
		}
		return true, fmt.Errorf("uninstalling release %s in namespace %s: %w", o.Release, o.Namespace, err)
	}
	return true, nil
}

// Kinds lists "Kind/name" of rendered manifests, sorted: what a test or a
// dry run prints.
func Kinds(r *Rendered) []string {
	var out []string
	for _, m := range r.Manifests {
		if m.Head != nil && m.Head.Metadata != nil {
			out = append(out, m.Head.Kind+"/"+m.Head.Metadata.Name)
		}
	}
	for _, h := range r.Hooks {
		out = append(out, h.Kind+"/"+h.Name)
	}
	sort.Strings(out)
	return out
}

// TemplateOf names the template a manifest came from (karmada/templates/x.yaml → x.yaml).
func TemplateOf(m releaseutil.Manifest) string { return path.Base(m.Name) }
