package customization

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	configv1alpha1 "github.com/karmada-go/karmada/api/config/v1alpha1"
	"github.com/karmada-go/karmada/internal/cache/reload"
	"github.com/karmada-go/karmada/internal/interpreter/luavm"
)

// Watcher keeps a Layer in step with the customizations of a cluster.
type Watcher struct {
	Compiler *Compiler
	Layer    *Layer
	// Changed, when set, is told the kinds whose customizations changed
	// (the detector interprets their templates again).
	Changed func(kinds []schema.GroupKind)

	last map[schema.GroupKind]string
}

// Load builds the layer once from reader (before the controllers start, so
// that none interprets a template without its customization).
func (w *Watcher) Load(ctx context.Context, reader client.Reader) error {
	list := &configv1alpha1.ResourceInterpreterCustomizationList{}
	if err := reader.List(ctx, list); err != nil {
		return fmt.Errorf("listing ResourceInterpreterCustomizations: %w", err)
	}
	w.rebuild(ctx, list.Items)
	return nil
}

// Start watches the customizations through informers and rebuilds the layer
// at every change, until ctx ends.
func (w *Watcher) Start(ctx context.Context, informers cache.Cache) error {
	return reload.OnChange(ctx, informers, &configv1alpha1.ResourceInterpreterCustomization{}, func(ctx context.Context) {
		list := &configv1alpha1.ResourceInterpreterCustomizationList{}
		if err := informers.List(ctx, list); err != nil {
			klog.FromContext(ctx).Error(err, "Failed to list ResourceInterpreterCustomizations")
			return
		}
		w.rebuild(ctx, list.Items)
	})
}

func (w *Watcher) rebuild(ctx context.Context, items []configv1alpha1.ResourceInterpreterCustomization) {
	log := klog.FromContext(ctx)
	reg, err := w.Compiler.Build(items)
	if err != nil {
		// The webhook refuses scripts that do not compile; one that gets in
		// (the webhook was down, or an older version let it) answers
		// nothing, and its operations fall to the next interpreter.
		log.Error(err, "Some customizations are not used")
	}
	w.Layer.Set(reg)
	// Which kinds changed: their scripts' sources differ.
	now := map[schema.GroupKind]string{}
	for i := range items {
		gk, err := Target(&items[i])
		if err != nil {
			continue
		}
		for _, s := range Scripts(&items[i].Spec.Customizations) {
			now[gk] += string(s.Operation) + "\x00" + s.Source + "\x00"
		}
	}
	var changed []schema.GroupKind
	for gk, v := range now {
		if w.last[gk] != v {
			changed = append(changed, gk)
		}
	}
	for gk := range w.last {
		if _, ok := now[gk]; !ok {
			changed = append(changed, gk)
		}
	}
	first := w.last == nil
	w.last = now
	log.V(2).Info("Loaded resource interpreter customizations", "customizations", len(items), "kinds", len(reg))
	if !first && len(changed) > 0 && w.Changed != nil {
		w.Changed(changed)
	}
}

// NewWatcher returns a watcher of an empty layer (Install fills it) that
// compiles with Karmada's Lua VM and tells changed of the kinds whose
// customizations change. Put its Layer in front of the other layers of the
// binary's interpreter.
func NewWatcher(changed func(kinds []schema.GroupKind)) *Watcher {
	return &Watcher{Compiler: NewCompiler(luavm.Default), Layer: &Layer{}, Changed: changed}
}

// Install builds the layer from reader and keeps it in step through
// informers. An identity that may not read customizations (an agent
// registered by an older version) gets an empty layer (the interpreter's
// other layers answer), and a log line saying so.
func (w *Watcher) Install(ctx context.Context, reader client.Reader, informers cache.Cache) error {
	if err := w.Load(ctx, reader); err != nil {
		if apierrors.IsForbidden(err) {
			klog.FromContext(ctx).Info("Not using ResourceInterpreterCustomizations: this identity may not list them", "err", err.Error())
			return nil
		}
		return err
	}
	return w.Start(ctx, informers)
}
