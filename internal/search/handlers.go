package search

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/apimachinery/pkg/util/proxy"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/endpoints/handlers/responsewriters"
	"k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	searchv1alpha1 "github.com/karmada-go/karmada/api/search/v1alpha1"
	clusterproxy "github.com/karmada-go/karmada/internal/aggregatedapiserver/registry/cluster"
	"github.com/karmada-go/karmada/internal/search/cache"
)

// Paths karmada-search serves beside the ResourceRegistry API: Karmada's.
const (
	SearchPrefix = "/apis/search.karmada.io/v1alpha1/search/cache/"
	ProxyPrefix  = "/apis/search.karmada.io/v1alpha1/proxying/karmada/proxy/"
)

// handlers serve the cache and the proxy.
type handlers struct {
	manager *cache.Manager
	// kube reaches the karmada-apiserver as karmada-search: discovery for
	// the proxy.
	kube kubernetes.Interface
	// authz decides for the caller (the server's delegated authorizer).
	authz   authorizer.Authorizer
	karmada client.Reader
	dialer  clusterproxy.Dialer
}

// target is a Kubernetes API path: a resource, in a namespace or not,
// named or not.
type target struct {
	gvr             schema.GroupVersionResource
	namespace, name string
}

// parseTarget reads api/v1/[namespaces/<ns>/]<resource>[/<name>] or
// apis/<group>/<version>/....
func parseTarget(p string) (target, bool) {
	parts := strings.Split(strings.Trim(p, "/"), "/")
	var t target
	switch {
	case len(parts) >= 3 && parts[0] == "api":
		t.gvr.Version, parts = parts[1], parts[2:]
	case len(parts) >= 4 && parts[0] == "apis":
		t.gvr.Group, t.gvr.Version, parts = parts[1], parts[2], parts[3:]
	default:
		return t, false
	}
	if len(parts) >= 3 && parts[0] == "namespaces" {
		t.namespace, parts = parts[1], parts[2:]
	}
	switch len(parts) {
	case 1:
		t.gvr.Resource = parts[0]
	case 2:
		t.gvr.Resource, t.name = parts[0], parts[1]
	default:
		return t, false
	}
	return t, t.gvr.Resource != ""
}

func (h *handlers) fail(w http.ResponseWriter, r *http.Request, err error) {
	responsewriters.ErrorNegotiated(err, Codecs, searchv1alpha1.SchemeGroupVersion, w, r)
}

// search serves /search/cache/<path>: lists and gets from the cache.
func (h *handlers) search(w http.ResponseWriter, r *http.Request) {
	t, ok := parseTarget(strings.TrimPrefix(r.URL.Path, strings.TrimSuffix(SearchPrefix, "/")))
	if !ok {
		h.fail(w, r, apierrors.NewNotFound(schema.GroupResource{Group: searchv1alpha1.GroupName, Resource: "search"}, r.URL.Path))
		return
	}
	if r.Method != http.MethodGet {
		h.fail(w, r, apierrors.NewMethodNotSupported(t.gvr.GroupResource(), r.Method))
		return
	}
	h.read(w, r, t, false)
}

// proxy serves /proxying/karmada/proxy/<path>: discovery from the
// karmada-apiserver, reads of cached kinds from the cache, writes of a
// cached object to the member that has it.
func (h *handlers) proxy(w http.ResponseWriter, r *http.Request) {
	p := strings.TrimPrefix(r.URL.Path, strings.TrimSuffix(ProxyPrefix, "/"))
	if isDiscovery(p) {
		h.discovery(w, r, p)
		return
	}
	t, ok := parseTarget(p)
	if !ok {
		h.fail(w, r, apierrors.NewNotFound(schema.GroupResource{Group: searchv1alpha1.GroupName, Resource: "proxying"}, p))
		return
	}
	// Whether a kind is cached, and what, is said only to a caller who may
	// read it: read and write authorize first.
	switch r.Method {
	case http.MethodGet:
		if r.URL.Query().Get("watch") == "true" || r.URL.Query().Get("watch") == "1" {
			h.fail(w, r, apierrors.NewBadRequest("karmada-search serves lists and gets of what it caches; watch the members or the karmada-apiserver"))
			return
		}
		h.read(w, r, t, true)
	case http.MethodPut, http.MethodPatch, http.MethodDelete:
		h.write(w, r, t, p)
	default:
		h.fail(w, r, apierrors.NewBadRequest(fmt.Sprintf("karmada-search cannot tell which member cluster a new %s belongs to: create it in the control plane (a template) or in the member", t.gvr.Resource)))
	}
}

// isDiscovery: the paths kubectl reads before anything else, exactly:
// /api, /apis, /version, /api/<version>, /apis/<group>[/<version>],
// /openapi/v2, /openapi/v3 and /openapi/v3/api/<version> or
// /openapi/v3/apis/<group>/<version>. They are answered as karmada-search,
// so nothing else may be: any other path goes to the cache, authorized as
// the caller.
func isDiscovery(p string) bool {
	parts := strings.Split(strings.Trim(p, "/"), "/")
	for _, s := range parts {
		if !discoverySegment(s) {
			return false
		}
	}
	switch {
	case len(parts) == 1:
		return parts[0] == "api" || parts[0] == "apis" || parts[0] == "version"
	case parts[0] == "api":
		return len(parts) == 2
	case parts[0] == "apis":
		return len(parts) <= 3
	case parts[0] == "openapi":
		switch {
		case len(parts) == 2:
			return parts[1] == "v2" || parts[1] == "v3"
		case parts[1] != "v3":
			return false
		case parts[2] == "api":
			return len(parts) == 4
		case parts[2] == "apis":
			return len(parts) == 5
		}
	}
	return false
}

// discoverySegment: a group or version name (lower-case letters, digits,
// dots and dashes, not a dot segment).
func discoverySegment(s string) bool {
	if s == "" || s == "." || s == ".." || len(s) > 253 {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '.' || c == '-') {
			return false
		}
	}
	return true
}

// discovery answers from the karmada-apiserver's discovery (readable by
// every authenticated user), as karmada-search.
func (h *handlers) discovery(w http.ResponseWriter, r *http.Request, p string) {
	if r.Method != http.MethodGet {
		h.fail(w, r, apierrors.NewMethodNotSupported(schema.GroupResource{Resource: "discovery"}, r.Method))
		return
	}
	req := h.kube.Discovery().RESTClient().Get().AbsPath(p)
	for k, v := range r.URL.Query() {
		for _, x := range v {
			req = req.Param(k, x)
		}
	}
	if a := r.Header.Get("Accept"); a != "" {
		req = req.SetHeader("Accept", a)
	}
	res := req.Do(r.Context())
	body, err := res.Raw()
	var code int
	res.StatusCode(&code)
	if err != nil && len(body) == 0 {
		h.fail(w, r, err)
		return
	}
	var ct string
	res.ContentType(&ct)
	if ct != "" {
		w.Header().Set("Content-Type", ct)
	}
	if code == 0 {
		code = http.StatusOK
	}
	w.WriteHeader(code)
	_, _ = w.Write(body)
}

// authorize asks whether the caller may do verb on the target in the
// karmada-apiserver: the server's delegated authorizer, which asks the
// karmada-apiserver (SubjectAccessReview) and caches its answers briefly,
// as it does for every request the server serves.
func (h *handlers) authorize(ctx context.Context, ra authorizer.AttributesRecord) error {
	u, ok := request.UserFrom(ctx)
	if !ok {
		return apierrors.NewUnauthorized("no user in the request")
	}
	ra.User, ra.ResourceRequest = u, true
	decision, _, err := h.authz.Authorize(ctx, ra)
	if err != nil && decision != authorizer.DecisionAllow {
		return apierrors.NewInternalError(fmt.Errorf("checking the caller's rights: %w", err))
	}
	if decision != authorizer.DecisionAllow {
		gr := schema.GroupResource{Group: ra.APIGroup, Resource: ra.Resource}
		if ra.Subresource != "" {
			gr.Resource += "/" + ra.Subresource
		}
		return apierrors.NewForbidden(gr, ra.Name, fmt.Errorf("user %q cannot %s %s in the control plane (karmada-search serves only what the karmada-apiserver lets the caller read)", u.GetName(), ra.Verb, gr))
	}
	return nil
}

// read lists or gets from the cache, authorized as the caller's list or
// get of the resource in the control plane.
func (h *handlers) read(w http.ResponseWriter, r *http.Request, t target, proxied bool) {
	stores := h.manager.Stores(t.gvr.GroupResource())
	verb := "list"
	if t.name != "" {
		verb = "get"
	}
	if err := h.authorize(r.Context(), authorizer.AttributesRecord{Verb: verb, APIGroup: t.gvr.Group, APIVersion: t.gvr.Version, Resource: t.gvr.Resource, Namespace: t.namespace, Name: t.name}); err != nil {
		h.fail(w, r, err)
		return
	}
	if proxied && len(stores) == 0 {
		// The proxy serves only what is cached (the search API answers an
		// empty list).
		h.fail(w, r, notCached(t.gvr.GroupResource()))
		return
	}
	q, err := queryOf(r, t)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	var entries []*cache.Entry
	kind := ""
	for _, s := range stores {
		if kind == "" {
			kind = s.Kind
		}
		entries = append(entries, s.Select(q)...)
	}
	if t.name != "" {
		h.writeOne(w, r, t, entries, proxied)
		return
	}
	entries, next, err := page(r, entries)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	if wantsTable(r) {
		h.writeTable(w, entries)
		return
	}
	writeList(w, t, kind, entries, next)
}

// queryOf is the request's query of the cache: the target's namespace and
// name, and its label and field selectors.
func queryOf(r *http.Request, t target) (cache.Query, error) {
	q := cache.Query{Namespace: t.namespace, Name: t.name}
	qs := r.URL.Query()
	if s := qs.Get("labelSelector"); s != "" {
		sel, err := labels.Parse(s)
		if err != nil {
			return q, apierrors.NewBadRequest(fmt.Sprintf("labelSelector %q: %v", s, err))
		}
		q.Labels = sel
	}
	if s := qs.Get("fieldSelector"); s != "" {
		if err := fieldQuery(&q, s, t.gvr.GroupResource()); err != nil {
			return q, err
		}
	}
	return q, nil
}

// writeOne answers a get: the first entry, or NotFound; through the proxy,
// which stands for one object, a name several members have is refused
// rather than guessed (as Karmada's).
func (h *handlers) writeOne(w http.ResponseWriter, r *http.Request, t target, entries []*cache.Entry, proxied bool) {
	if len(entries) == 0 {
		h.fail(w, r, apierrors.NewNotFound(t.gvr.GroupResource(), t.name))
		return
	}
	if proxied {
		if err := ambiguous(t, entries); err != nil {
			h.fail(w, r, err)
			return
		}
	}
	if wantsTable(r) {
		h.writeTable(w, entries[:1])
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(entries[0].Raw)
}

// page cuts a list to the request's page: continue names the last entry
// served (cluster, namespace, name, in the order served), limit the
// page's size; next is the continue token of the page after.
func page(r *http.Request, entries []*cache.Entry) (_ []*cache.Entry, next string, _ error) {
	qs := r.URL.Query()
	if c := qs.Get("continue"); c != "" {
		last, err := base64.RawURLEncoding.DecodeString(c)
		if err != nil {
			return nil, "", apierrors.NewBadRequest("continue: not a token this server gave")
		}
		i := 0
		for i < len(entries) && orderKey(entries[i]) <= string(last) {
			i++
		}
		entries = entries[i:]
	}
	if l, err := strconv.Atoi(qs.Get("limit")); err == nil && l > 0 && len(entries) > l {
		entries = entries[:l]
		next = base64.RawURLEncoding.EncodeToString([]byte(orderKey(entries[l-1])))
	}
	return entries, next, nil
}

// writeList answers a list as a List of the kind (List when nothing of the
// kind is cached), the entries' JSON as cached.
func writeList(w http.ResponseWriter, t target, kind string, entries []*cache.Entry, next string) {
	apiVersion := t.gvr.GroupVersion().String()
	// Nothing cached of the kind: an empty List.
	listKind := "List"
	if kind != "" {
		listKind = kind + "List"
	}
	var b bytes.Buffer
	meta, _ := json.Marshal(metav1.ListMeta{Continue: next})
	fmt.Fprintf(&b, `{"apiVersion":%q,"kind":%q,"metadata":%s,"items":[`, apiVersion, listKind, meta)
	for i, e := range entries {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(e.Raw)
	}
	b.WriteString("]}")
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(b.Bytes())
}

// orderKey is an entry's place in a list.
func orderKey(e *cache.Entry) string {
	return e.Cluster + "\x00" + e.Namespace + "\x00" + e.Name
}

// fieldQuery reads a field selector the cache can answer.
func fieldQuery(q *cache.Query, s string, gr schema.GroupResource) error {
	sel, err := fields.ParseSelector(s)
	if err != nil {
		return apierrors.NewBadRequest(fmt.Sprintf("fieldSelector %q: %v", s, err))
	}
	supported := append([]string{"metadata.name", "metadata.namespace"}, cache.FieldPaths[gr]...)
	for _, req := range sel.Requirements() {
		ok := false
		for _, f := range supported {
			ok = ok || f == req.Field
		}
		if !ok {
			return apierrors.NewBadRequest(fmt.Sprintf("fieldSelector %q: the cache of %s answers only %s", req.Field, gr, strings.Join(supported, ", ")))
		}
		switch req.Operator {
		case selection.Equals, selection.DoubleEquals:
			if q.Fields == nil {
				q.Fields = map[string]string{}
			}
			q.Fields[req.Field] = req.Value
		case selection.NotEquals:
			if q.NotFields == nil {
				q.NotFields = map[string]string{}
			}
			q.NotFields[req.Field] = req.Value
		}
	}
	return nil
}

func wantsTable(r *http.Request) bool {
	return strings.Contains(r.Header.Get("Accept"), "as=Table")
}

// writeTable answers kubectl get: NAME, CLUSTER, AGE.
func (h *handlers) writeTable(w http.ResponseWriter, entries []*cache.Entry) {
	t := &metav1.Table{
		TypeMeta: metav1.TypeMeta{APIVersion: "meta.k8s.io/v1", Kind: "Table"},
		ColumnDefinitions: []metav1.TableColumnDefinition{
			{Name: "Name", Type: "string", Format: "name", Description: "the object's name"},
			{Name: "Cluster", Type: "string", Description: "the member cluster it is cached from"},
			{Name: "Age", Type: "string", Description: "time since creation"},
		},
	}
	for _, e := range entries {
		var obj struct {
			Metadata metav1.ObjectMeta `json:"metadata"`
		}
		_ = json.Unmarshal(e.Raw, &obj)
		age := "<unknown>"
		if !obj.Metadata.CreationTimestamp.IsZero() {
			age = duration.HumanDuration(time.Since(obj.Metadata.CreationTimestamp.Time))
		}
		pom := &metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{APIVersion: "meta.k8s.io/v1", Kind: "PartialObjectMetadata"}, ObjectMeta: obj.Metadata}
		pom.ManagedFields = nil
		t.Rows = append(t.Rows, metav1.TableRow{Cells: []any{e.Name, e.Cluster, age}, Object: runtime.RawExtension{Object: pom}})
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(t)
}

// write sends a change of a cached object to the member that has it, as
// the caller (the Cluster's impersonator acting as them), once the control
// plane lets the caller proxy to that cluster.
func (h *handlers) write(w http.ResponseWriter, r *http.Request, t target, p string) {
	if t.name == "" {
		h.fail(w, r, apierrors.NewBadRequest("karmada-search changes one named object at a time"))
		return
	}
	// Only what the caller may read is looked for: an object's presence
	// is not told to anyone else.
	if err := h.authorize(r.Context(), authorizer.AttributesRecord{Verb: "get", APIGroup: t.gvr.Group, APIVersion: t.gvr.Version, Resource: t.gvr.Resource, Namespace: t.namespace, Name: t.name}); err != nil {
		h.fail(w, r, err)
		return
	}
	stores := h.manager.Stores(t.gvr.GroupResource())
	if len(stores) == 0 {
		h.fail(w, r, notCached(t.gvr.GroupResource()))
		return
	}
	var entries []*cache.Entry
	for _, s := range stores {
		entries = append(entries, s.Select(cache.Query{Namespace: t.namespace, Name: t.name})...)
	}
	if len(entries) == 0 {
		h.fail(w, r, apierrors.NewNotFound(t.gvr.GroupResource(), t.name))
		return
	}
	// A change goes to the member meant, never to whichever caches the
	// name first: an object several members hold is refused.
	if err := ambiguous(t, entries); err != nil {
		h.fail(w, r, err)
		return
	}
	found := entries[0]
	verb := map[string]string{http.MethodPut: "update", http.MethodPatch: "patch", http.MethodDelete: "delete"}[r.Method]
	if err := h.authorize(r.Context(), authorizer.AttributesRecord{Verb: verb, APIGroup: clusterv1alpha1.GroupName, APIVersion: clusterv1alpha1.SchemeGroupVersion.Version, Resource: "clusters", Subresource: "proxy", Name: found.Cluster}); err != nil {
		h.fail(w, r, err)
		return
	}
	cl := &clusterv1alpha1.Cluster{}
	if err := h.karmada.Get(r.Context(), client.ObjectKey{Name: found.Cluster}, cl); err != nil {
		h.fail(w, r, err)
		return
	}
	conn, err := h.dialer.Dial(r.Context(), cl)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	caller, _ := request.UserFrom(r.Context())
	loc := clusterproxy.Location(conn.Endpoint, p)
	loc.RawQuery = r.URL.RawQuery
	r.Header = clusterproxy.ForwardHeaders(r.Header, caller, conn.Token)
	proxy.NewUpgradeAwareHandler(loc, conn.Transport, false, false, errorResponder{h, w, r}).ServeHTTP(w, r)
}

type errorResponder struct {
	h *handlers
	w http.ResponseWriter
	r *http.Request
}

func (e errorResponder) Error(w http.ResponseWriter, r *http.Request, err error) {
	e.h.fail(w, r, apierrors.NewServiceUnavailable("the member cluster could not be reached: "+err.Error()))
}

// ambiguous is the Conflict of a named object cached from more than one
// member (Karmada's error), or nil.
func ambiguous(t target, entries []*cache.Entry) error {
	seen := map[string]bool{}
	var clusters []string
	for _, e := range entries {
		if !seen[e.Cluster] {
			seen[e.Cluster] = true
			clusters = append(clusters, e.Cluster)
		}
	}
	if len(clusters) < 2 {
		return nil
	}
	sort.Strings(clusters)
	return apierrors.NewConflict(t.gvr.GroupResource(), t.name, fmt.Errorf("ambiguous objects in clusters [%s]", strings.Join(clusters, ", ")))
}

// notCached is the error of a resource no registry selects.
func notCached(gr schema.GroupResource) error {
	err := apierrors.NewNotFound(gr, "")
	err.ErrStatus.Message = fmt.Sprintf("karmada-search caches no %s: no ResourceRegistry selects them (read them from the karmada-apiserver)", gr)
	return err
}
