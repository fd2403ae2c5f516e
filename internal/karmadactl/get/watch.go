package get

import (
	"context"
	"errors"
	"fmt"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/cli-runtime/pkg/printers"

	searchv1alpha1 "github.com/karmada-go/karmada/api/search/v1alpha1"
)

// watched is one target's list and watch of one resource type.
type watched struct {
	cluster string
	gk      schema.GroupKind
	list    runtime.Object
	w       watch.Interface
}

// runWatch is get -w/--watch-only: each target (the control plane, each
// member) is listed and then watched, in parallel; what was there is
// printed first (not with --watch-only), then every change as it comes,
// each row or object with the cluster it is in. It returns when every watch
// has ended or ctx is done (Ctrl-C).
func (o *Options) runWatch(ctx context.Context, targets []string) error {
	table := o.Output == "" || o.Output == "wide"
	ws := make([]*watched, len(targets))
	errs := make([]error, len(targets))
	var wg sync.WaitGroup
	for i, c := range targets {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ws[i], errs[i] = o.startWatch(c, table)
		}()
	}
	wg.Wait()
	var live []*watched
	for i, w := range ws {
		if errs[i] != nil {
			fmt.Fprintf(o.Err, "error: cluster %s: %v\n", source{cluster: targets[i]}.name(), errs[i])
			continue
		}
		live = append(live, w)
	}
	if len(live) == 0 {
		return errors.New("no cluster could be watched")
	}
	defer func() {
		for _, w := range live {
			w.w.Stop()
		}
	}()
	print, err := o.watchPrinter(table, live[0].gk)
	if err != nil {
		return err
	}
	if !o.WatchOnly {
		for _, w := range live {
			if err := print(w.cluster, w.list); err != nil {
				return err
			}
		}
	}
	// Every target's events, printed one at a time.
	type event struct {
		cluster string
		obj     runtime.Object
	}
	events := make(chan event)
	var readers sync.WaitGroup
	for _, w := range live {
		readers.Add(1)
		go func() {
			defer readers.Done()
			for e := range w.w.ResultChan() {
				if e.Type == watch.Error {
					if ctx.Err() == nil {
						fmt.Fprintf(o.Err, "error: cluster %s: watch: %v\n", source{cluster: w.cluster}.name(), apierrors.FromObject(e.Object))
					}
					return
				}
				select {
				case events <- event{cluster: w.cluster, obj: e.Object}:
				case <-ctx.Done():
					return
				}
			}
		}()
	}
	go func() { readers.Wait(); close(events) }()
	for {
		select {
		case <-ctx.Done():
			return nil
		case e, ok := <-events:
			if !ok {
				return nil
			}
			if err := print(e.cluster, e.obj); err != nil {
				return err
			}
		}
	}
}

// startWatch lists the one resource type args name in a cluster and
// watches it from that list's version.
func (o *Options) startWatch(cluster string, table bool) (*watched, error) {
	b, err := o.builder(cluster, o.args, table)
	if err != nil {
		return nil, err
	}
	r := b.SingleResourceType().Do()
	if err := r.Err(); err != nil {
		return nil, err
	}
	infos, err := r.Infos()
	if err != nil {
		return nil, err
	}
	if len(infos) != 1 {
		return nil, fmt.Errorf("watch is only supported on individual resources and resource collections, but %d resources were found", len(infos))
	}
	list := infos[0].Object
	rv := "0"
	if m, err := meta.ListAccessor(list); err == nil {
		rv = m.GetResourceVersion()
	} else if m, err := meta.Accessor(list); err == nil {
		rv = m.GetResourceVersion()
	}
	w, err := r.Watch(rv)
	if err != nil {
		return nil, err
	}
	gk := schema.GroupKind{}
	if len(infos) > 0 && infos[0].Mapping != nil {
		gk = infos[0].Mapping.GroupVersionKind.GroupKind()
	}
	return &watched{cluster: cluster, gk: gk, list: list, w: w}, nil
}

// watchPrinter prints a list or one event's object from a cluster: table
// rows with the CLUSTER and ADOPTION columns (headers once), or objects
// with -o's printer, a member's annotated with its cluster.
func (o *Options) watchPrinter(table bool, gk schema.GroupKind) (func(cluster string, obj runtime.Object) error, error) {
	if table {
		p := printers.NewTablePrinter(printers.PrintOptions{
			NoHeaders: o.NoHeaders, WithNamespace: o.AllNamespaces, WithKind: o.ShowKind, Kind: gk,
			Wide: o.Output == "wide", ShowLabels: o.ShowLabels, ColumnLabels: o.LabelColumns,
		})
		// A watch's tables after the first carry rows without their
		// columns: each cluster's are remembered (the printer reuses the
		// last it printed).
		width := map[string]int{}
		return func(cluster string, obj runtime.Object) error {
			t, err := decodeTable(obj)
			if err != nil {
				return fmt.Errorf("cluster %s: %w", source{cluster: cluster}.name(), err)
			}
			var cols []metav1.TableColumnDefinition
			if len(t.ColumnDefinitions) > 0 {
				width[cluster] = len(t.ColumnDefinitions)
				cols = withClusterColumns(t.ColumnDefinitions)
			}
			rows := make([]metav1.TableRow, 0, len(t.Rows))
			for _, row := range t.Rows {
				rows = append(rows, withClusterCells(row, cluster, width[cluster]))
			}
			return p.PrintObj(&metav1.Table{ColumnDefinitions: cols, Rows: rows}, o.Out)
		}, nil
	}
	p, err := o.objectPrinter()
	if err != nil {
		return nil, err
	}
	return func(cluster string, obj runtime.Object) error {
		var items []runtime.Object
		if meta.IsListType(obj) {
			if items, err = meta.ExtractList(obj); err != nil {
				return err
			}
		} else {
			items = []runtime.Object{obj}
		}
		for _, item := range items {
			if u, ok := item.(*unstructured.Unstructured); ok && cluster != "" {
				u = u.DeepCopy()
				a := u.GetAnnotations()
				if a == nil {
					a = map[string]string{}
				}
				a[searchv1alpha1.CachedFromClusterAnnotation] = cluster
				u.SetAnnotations(a)
				item = u
			}
			if err := p.PrintObj(item, o.Out); err != nil {
				return err
			}
		}
		return nil
	}, nil
}
