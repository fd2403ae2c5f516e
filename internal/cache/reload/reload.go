// Package reload runs a function again whenever objects of one type
// change: the informer's events only kick it, so a burst of changes costs
// one run (or two: one running, one pending), never one per event.
package reload

import (
	"context"

	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// OnChange calls fn, from one goroutine, after every add, update or delete
// of an object of obj's type in informers, until ctx ends; changes that
// come while fn runs bring one more call.
func OnChange(ctx context.Context, informers cache.Cache, obj client.Object, fn func(ctx context.Context)) error {
	inf, err := informers.GetInformer(ctx, obj)
	if err != nil {
		return err
	}
	kick := make(chan struct{}, 1)
	poke := func() {
		select {
		case kick <- struct{}{}:
		default:
		}
	}
	if _, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { poke() },
		UpdateFunc: func(any, any) { poke() },
		DeleteFunc: func(any) { poke() },
	}); err != nil {
		return err
	}
	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case <-kick:
			}
			fn(ctx)
		}
	}()
	return nil
}
