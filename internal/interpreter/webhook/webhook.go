// Package webhook calls the interpreter webhooks that
// ResourceInterpreterWebhookConfigurations register, for the kinds and
// operations they declare, in Karmada's wire format
// (ResourceInterpreterContext), and makes them an interpreter layer.
package webhook

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	jsonpatch "github.com/evanphx/json-patch/v5"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	configv1alpha1 "github.com/karmada-go/karmada/api/config/v1alpha1"
	workv1alpha1 "github.com/karmada-go/karmada/api/work/v1alpha1"
	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
	"github.com/karmada-go/karmada/internal/cache/reload"
	"github.com/karmada-go/karmada/internal/interpreter"
)

// DefaultTimeout is a call's timeout when the webhook sets none (Karmada's).
const DefaultTimeout = 10 * time.Second

// maxResponse bounds a webhook's answer.
const maxResponse = 16 << 20

// hook is one registered webhook, ready to call.
type hook struct {
	source  string // ResourceInterpreterWebhookConfiguration/<config>/<webhook>
	rules   []configv1alpha1.RuleWithOperations
	url     string
	client  *http.Client
	timeout time.Duration
}

// Layer is the registered webhooks as an interpreter layer, replaced whole
// when the configurations change.
type Layer struct {
	hooks atomic.Pointer[[]*hook]
	kinds sync.Map // schema.GroupKind -> *interpreter.Kind (nil: no webhook)
}

// Lookup implements interpreter.Layer: a Kind whose operations are those
// the first matching webhook declares for gk.
func (l *Layer) Lookup(gk schema.GroupKind) *interpreter.Kind {
	if v, ok := l.kinds.Load(gk); ok {
		return v.(*interpreter.Kind)
	}
	hooks := l.hooks.Load()
	var k *interpreter.Kind
	if hooks != nil {
		for _, op := range []configv1alpha1.InterpreterOperation{
			configv1alpha1.InterpreterOperationInterpretReplica, configv1alpha1.InterpreterOperationInterpretComponent,
			configv1alpha1.InterpreterOperationReviseReplica, configv1alpha1.InterpreterOperationRetain,
			configv1alpha1.InterpreterOperationAggregateStatus, configv1alpha1.InterpreterOperationInterpretStatus,
			configv1alpha1.InterpreterOperationInterpretHealth, configv1alpha1.InterpreterOperationInterpretDependency,
		} {
			for _, h := range *hooks {
				if h.matches(gk, "", op) {
					if k == nil {
						k = &interpreter.Kind{}
					}
					h.bind(k, op)
					break
				}
			}
		}
	}
	l.kinds.Store(gk, k)
	return k
}

// matches reports whether h declares op for gk and version ("": any
// version).
func (h *hook) matches(gk schema.GroupKind, version string, op configv1alpha1.InterpreterOperation) bool {
	for _, r := range h.rules {
		if (slices.Contains(r.Operations, op) || slices.Contains(r.Operations, configv1alpha1.InterpreterOperationAll)) &&
			(slices.Contains(r.APIGroups, gk.Group) || slices.Contains(r.APIGroups, "*")) &&
			(slices.Contains(r.Kinds, gk.Kind) || slices.Contains(r.Kinds, "*")) &&
			(version == "" || slices.Contains(r.APIVersions, version) || slices.Contains(r.APIVersions, "*")) {
			return true
		}
	}
	return false
}

// ServiceResolver turns a webhook's Service reference into a URL.
type ServiceResolver func(ctx context.Context, namespace, name string, port int32) (string, error)

// ResolveInCluster resolves a Service as Karmada does: the Service in the
// control plane (its cluster IP, or its external name), else the in-cluster
// DNS name.
func ResolveInCluster(reader client.Reader) ServiceResolver {
	return func(ctx context.Context, namespace, name string, port int32) (string, error) {
		svc := &corev1.Service{}
		if reader == nil || reader.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, svc) != nil {
			return "https://" + net.JoinHostPort(name+"."+namespace+".svc", strconv.Itoa(int(port))), nil
		}
		switch {
		case svc.Spec.Type == corev1.ServiceTypeExternalName:
			return "https://" + net.JoinHostPort(svc.Spec.ExternalName, strconv.Itoa(int(port))), nil
		case svc.Spec.ClusterIP == "" || svc.Spec.ClusterIP == corev1.ClusterIPNone:
			return "", fmt.Errorf("service %s/%s has no cluster IP", namespace, name)
		}
		return "https://" + net.JoinHostPort(svc.Spec.ClusterIP, strconv.Itoa(int(port))), nil
	}
}

// Set replaces the layer's webhooks with those of configs; a webhook that
// cannot be set up (a bad CA bundle, an unresolvable service) is left out
// and reported.
func (l *Layer) Set(ctx context.Context, configs []configv1alpha1.ResourceInterpreterWebhookConfiguration, resolve ServiceResolver) error {
	slices.SortFunc(configs, func(a, b configv1alpha1.ResourceInterpreterWebhookConfiguration) int {
		switch {
		case a.Name < b.Name:
			return -1
		case a.Name > b.Name:
			return 1
		}
		return 0
	})
	var hooks []*hook
	var errs []error
	for _, c := range configs {
		for _, w := range c.Webhooks {
			h, err := newHook(ctx, c.Name, w, resolve)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			hooks = append(hooks, h)
		}
	}
	l.hooks.Store(&hooks)
	l.kinds.Clear()
	return errors.Join(errs...)
}

func newHook(ctx context.Context, config string, w configv1alpha1.ResourceInterpreterWebhook, resolve ServiceResolver) (*hook, error) {
	source := "ResourceInterpreterWebhookConfiguration/" + config + "/" + w.Name
	h := &hook{source: source, rules: w.Rules, timeout: DefaultTimeout}
	if w.TimeoutSeconds != nil && *w.TimeoutSeconds > 0 {
		h.timeout = time.Duration(*w.TimeoutSeconds) * time.Second
	}
	cc := w.ClientConfig
	switch {
	case cc.URL != nil:
		h.url = *cc.URL
	case cc.Service != nil:
		port := int32(443)
		if cc.Service.Port != nil {
			port = *cc.Service.Port
		}
		u, err := resolve(ctx, cc.Service.Namespace, cc.Service.Name, port)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", source, err)
		}
		if cc.Service.Path != nil {
			u += *cc.Service.Path
		}
		h.url = u
	default:
		return nil, fmt.Errorf("%s: clientConfig has neither url nor service", source)
	}
	if _, err := url.Parse(h.url); err != nil {
		return nil, fmt.Errorf("%s: %w", source, err)
	}
	tlsConfig := &tls.Config{MinVersion: tls.VersionTLS12}
	if len(cc.CABundle) > 0 {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(cc.CABundle) {
			return nil, fmt.Errorf("%s: clientConfig.caBundle holds no PEM certificate", source)
		}
		tlsConfig.RootCAs = pool
	}
	h.client = &http.Client{Transport: &http.Transport{TLSClientConfig: tlsConfig, Proxy: nil, MaxIdleConnsPerHost: 16, IdleConnTimeout: 90 * time.Second},
		// A redirect is an answer (refused below), never followed: the
		// object would otherwise go to whatever host, plain HTTP included,
		// the webhook names.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	return h, nil
}

// call asks the webhook one operation and returns its successful answer.
func (h *hook) call(op configv1alpha1.InterpreterOperation, req *configv1alpha1.ResourceInterpreterRequest) (*configv1alpha1.ResourceInterpreterResponse, error) {
	req.UID = uuid.NewUUID()
	req.Operation = op
	body, err := json.Marshal(&configv1alpha1.ResourceInterpreterContext{
		TypeMeta: metav1.TypeMeta{APIVersion: configv1alpha1.SchemeGroupVersion.String(), Kind: "ResourceInterpreterContext"},
		Request:  req,
	})
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), h.timeout)
	defer cancel()
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, h.url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	hr.Header.Set("Content-Type", "application/json")
	hr.Header.Set("Accept", "application/json")
	resp, err := h.client.Do(hr)
	if err != nil {
		return nil, fmt.Errorf("calling %s: %w", h.url, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxResponse+1))
	if err != nil {
		return nil, fmt.Errorf("reading the answer of %s: %w", h.url, err)
	}
	if len(data) > maxResponse {
		return nil, fmt.Errorf("the answer of %s is over %d MiB", h.url, maxResponse>>20)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s answered HTTP %d: %s", h.url, resp.StatusCode, bytes.TrimSpace(data[:min(len(data), 512)]))
	}
	var out configv1alpha1.ResourceInterpreterContext
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, fmt.Errorf("the answer of %s is not a ResourceInterpreterContext: %w", h.url, err)
	}
	r := out.Response
	switch {
	case r == nil:
		return nil, fmt.Errorf("the answer of %s has no response", h.url)
	case r.UID != req.UID:
		return nil, fmt.Errorf("the answer of %s is for request %q, not %q", h.url, r.UID, req.UID)
	case !r.Successful:
		msg := "no reason given"
		if r.Status != nil && r.Status.Message != "" {
			msg = r.Status.Message
		}
		return nil, fmt.Errorf("the webhook did not interpret it: %s", msg)
	}
	return r, nil
}

func request(obj *unstructured.Unstructured) (*configv1alpha1.ResourceInterpreterRequest, error) {
	raw, err := obj.MarshalJSON()
	if err != nil {
		return nil, err
	}
	gvk := obj.GroupVersionKind()
	return &configv1alpha1.ResourceInterpreterRequest{
		Kind: metav1.GroupVersionKind{Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind},
		Name: obj.GetName(), Namespace: obj.GetNamespace(), Object: runtime.RawExtension{Raw: raw},
	}, nil
}

// patched applies the response's JSON patch to obj.
func patched(obj *unstructured.Unstructured, r *configv1alpha1.ResourceInterpreterResponse) (*unstructured.Unstructured, error) {
	if len(r.Patch) == 0 {
		return obj.DeepCopy(), nil
	}
	if r.PatchType != nil && *r.PatchType != configv1alpha1.PatchTypeJSONPatch {
		return nil, fmt.Errorf("patchType %q: only JSONPatch is supported", *r.PatchType)
	}
	patch, err := jsonpatch.DecodePatch(r.Patch)
	if err != nil {
		return nil, fmt.Errorf("patch: %w", err)
	}
	raw, err := obj.MarshalJSON()
	if err != nil {
		return nil, err
	}
	if raw, err = patch.Apply(raw); err != nil {
		return nil, fmt.Errorf("applying the patch: %w", err)
	}
	out := &unstructured.Unstructured{}
	if err := out.UnmarshalJSON(raw); err != nil {
		return nil, fmt.Errorf("the patched object: %w", err)
	}
	if out.GroupVersionKind() != obj.GroupVersionKind() {
		return nil, fmt.Errorf("the patch changed the object's kind to %s", out.GroupVersionKind())
	}
	return out, nil
}

// call asks one webhook for one operation of a kind, its failures said
// as the webhook's.
type call struct {
	ask  func(obj *unstructured.Unstructured, fill func(*configv1alpha1.ResourceInterpreterRequest)) (*configv1alpha1.ResourceInterpreterResponse, error)
	fail func(error) error
}

// askers set a kind's function for each operation a webhook may answer.
var askers = map[configv1alpha1.InterpreterOperation]func(*interpreter.Kind, call){
	configv1alpha1.InterpreterOperationInterpretReplica:    askReplicas,
	configv1alpha1.InterpreterOperationInterpretComponent:  askComponents,
	configv1alpha1.InterpreterOperationReviseReplica:       askReviseReplica,
	configv1alpha1.InterpreterOperationRetain:              askRetain,
	configv1alpha1.InterpreterOperationAggregateStatus:     askAggregateStatus,
	configv1alpha1.InterpreterOperationInterpretStatus:     askReflectStatus,
	configv1alpha1.InterpreterOperationInterpretHealth:     askHealth,
	configv1alpha1.InterpreterOperationInterpretDependency: askDependencies,
}

// bind sets k's function for op to call h.
func (h *hook) bind(k *interpreter.Kind, op configv1alpha1.InterpreterOperation) {
	iop := interpreter.Operation(op)
	fail := func(err error) error { return &interpreter.Error{Source: h.source, Operation: iop, Err: err} }
	ask := func(obj *unstructured.Unstructured, fill func(*configv1alpha1.ResourceInterpreterRequest)) (*configv1alpha1.ResourceInterpreterResponse, error) {
		if gvk := obj.GroupVersionKind(); !h.matches(gvk.GroupKind(), gvk.Version, op) {
			return nil, fail(fmt.Errorf("the webhook's rules do not name version %s", obj.GroupVersionKind().Version))
		}
		req, err := request(obj)
		if err != nil {
			return nil, fail(err)
		}
		if fill != nil {
			fill(req)
		}
		r, err := h.call(op, req)
		if err != nil {
			return nil, fail(err)
		}
		return r, nil
	}
	if a, ok := askers[op]; ok {
		a(k, call{ask: ask, fail: fail})
	}
}

// askReplicas asks the webhook for the replica count and requirements.
func askReplicas(k *interpreter.Kind, c call) {
	k.GetReplicas = func(obj *unstructured.Unstructured) (int32, *workv1alpha2.ReplicaRequirements, error) {
		r, err := c.ask(obj, nil)
		if err != nil {
			return 0, nil, err
		}
		if r.Replicas == nil {
			return 0, nil, c.fail(errors.New("the response has no replicas"))
		}
		return *r.Replicas, r.ReplicaRequirements, nil
	}
}

// askComponents asks the webhook for the components.
func askComponents(k *interpreter.Kind, c call) {
	k.GetComponents = func(obj *unstructured.Unstructured) ([]workv1alpha2.Component, error) {
		r, err := c.ask(obj, nil)
		if err != nil {
			return nil, err
		}
		return r.Components, nil
	}
}

// askReviseReplica asks the webhook for the copy with revised replicas.
func askReviseReplica(k *interpreter.Kind, c call) {
	k.ReviseReplica = func(obj *unstructured.Unstructured, replicas int32) (*unstructured.Unstructured, error) {
		r, err := c.ask(obj, func(req *configv1alpha1.ResourceInterpreterRequest) { req.DesiredReplicas = &replicas })
		if err != nil {
			return nil, err
		}
		out, err := patched(obj, r)
		if err != nil {
			return nil, c.fail(err)
		}
		return out, nil
	}
}

// askRetain asks the webhook for the desired copy keeping what the member changed.
func askRetain(k *interpreter.Kind, c call) {
	k.Retain = func(desired, observed *unstructured.Unstructured) (*unstructured.Unstructured, error) {
		raw, err := observed.MarshalJSON()
		if err != nil {
			return nil, c.fail(err)
		}
		r, err := c.ask(desired, func(req *configv1alpha1.ResourceInterpreterRequest) {
			req.ObservedObject = &runtime.RawExtension{Raw: raw}
		})
		if err != nil {
			return nil, err
		}
		out, err := patched(desired, r)
		if err != nil {
			return nil, c.fail(err)
		}
		return out, nil
	}
}

// askAggregateStatus asks the webhook for the template with the members' status aggregated.
func askAggregateStatus(k *interpreter.Kind, c call) {
	k.AggregateStatus = func(template *unstructured.Unstructured, items []workv1alpha2.AggregatedStatusItem) (*unstructured.Unstructured, error) {
		r, err := c.ask(template, func(req *configv1alpha1.ResourceInterpreterRequest) { req.AggregatedStatus = items })
		if err != nil {
			return nil, err
		}
		out, err := patched(template, r)
		if err != nil {
			return nil, c.fail(err)
		}
		return out, nil
	}
}

// askReflectStatus asks the webhook for the status reflected from a member's copy.
func askReflectStatus(k *interpreter.Kind, c call) {
	k.ReflectStatus = func(obj *unstructured.Unstructured) (*runtime.RawExtension, error) {
		r, err := c.ask(obj, nil)
		if err != nil {
			return nil, err
		}
		return r.RawStatus, nil
	}
}

// askHealth asks the webhook for the health of a member's copy.
func askHealth(k *interpreter.Kind, c call) {
	k.Health = func(obj *unstructured.Unstructured) (workv1alpha1.ResourceHealth, error) {
		r, err := c.ask(obj, nil)
		if err != nil {
			return workv1alpha1.ResourceUnknownHealth, err
		}
		if r.Healthy == nil {
			return workv1alpha1.ResourceUnknownHealth, c.fail(errors.New("the response has no healthy"))
		}
		if *r.Healthy {
			return workv1alpha1.ResourceHealthy, nil
		}
		return workv1alpha1.ResourceUnhealthy, nil
	}
}

// askDependencies asks the webhook for the objects a workload depends on.
func askDependencies(k *interpreter.Kind, c call) {
	k.Dependencies = func(obj *unstructured.Unstructured) ([]interpreter.DependentObject, error) {
		r, err := c.ask(obj, nil)
		if err != nil {
			return nil, err
		}
		out := make([]interpreter.DependentObject, 0, len(r.Dependencies))
		for _, d := range r.Dependencies {
			out = append(out, interpreter.DependentObject{APIVersion: d.APIVersion, Kind: d.Kind, Namespace: d.Namespace, Name: d.Name, LabelSelector: d.LabelSelector})
		}
		return out, nil
	}
}

// Watch keeps l in step with the ResourceInterpreterWebhookConfigurations
// reader lists, loading them once now and again at every change the
// informers see. An identity that may not read them (an agent registered
// by an older version) gets no webhooks, and a log line saying so.
func Watch(ctx context.Context, reader client.Reader, informers cache.Cache, l *Layer) error {
	resolve := ResolveInCluster(reader)
	load := func(r client.Reader) error {
		list := &configv1alpha1.ResourceInterpreterWebhookConfigurationList{}
		if err := r.List(ctx, list); err != nil {
			return err
		}
		if err := l.Set(ctx, list.Items, resolve); err != nil {
			klog.FromContext(ctx).Error(err, "Some interpreter webhooks are not used")
		}
		return nil
	}
	if err := load(reader); err != nil {
		if apierrors.IsForbidden(err) {
			klog.FromContext(ctx).Info("Not using interpreter webhooks: this identity may not list ResourceInterpreterWebhookConfigurations", "err", err.Error())
			return nil
		}
		return fmt.Errorf("listing ResourceInterpreterWebhookConfigurations: %w", err)
	}
	return reload.OnChange(ctx, informers, &configv1alpha1.ResourceInterpreterWebhookConfiguration{}, func(ctx context.Context) {
		if err := load(informers); err != nil {
			klog.FromContext(ctx).Error(err, "Failed to list ResourceInterpreterWebhookConfigurations")
		}
	})
}
