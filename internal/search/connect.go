package search

import (
	"context"
	"net/http"
	"net/url"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/conversion"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/rest"

	searchv1alpha1 "github.com/karmada-go/karmada/api/search/v1alpha1"
)

func init() {
	Scheme.AddKnownTypes(internalVersion, &searchv1alpha1.Search{}, &searchv1alpha1.Proxying{})
	// Their options are query parameters the handlers read themselves.
	for _, t := range []any{(*searchv1alpha1.Search)(nil), (*searchv1alpha1.Proxying)(nil)} {
		if err := Scheme.AddConversionFunc((*url.Values)(nil), t, func(any, any, conversion.Scope) error { return nil }); err != nil {
			panic(err)
		}
	}
}

// endpoint is the search (name cache) or proxying (name karmada) resource:
// a Connecter whose handler reads the path below <resource>/<name>/.
type endpoint struct {
	resource, name string
	newObj         func() runtime.Object
	methods        []string
	serve          http.HandlerFunc
}

var (
	_ rest.Connecter            = &endpoint{}
	_ rest.Scoper               = &endpoint{}
	_ rest.SingularNameProvider = &endpoint{}
)

func (e *endpoint) New() runtime.Object      { return e.newObj() }
func (e *endpoint) Destroy()                 {}
func (e *endpoint) NamespaceScoped() bool    { return false }
func (e *endpoint) GetSingularName() string  { return e.resource }
func (e *endpoint) ConnectMethods() []string { return e.methods }
func (e *endpoint) NewConnectOptions() (runtime.Object, bool, string) {
	return e.newObj(), true, "path"
}

// Connect serves <resource>/<name>/<path>; only the name Karmada uses
// exists.
func (e *endpoint) Connect(_ context.Context, name string, _ runtime.Object, _ rest.Responder) (http.Handler, error) {
	if name != e.name {
		return nil, apierrors.NewNotFound(searchv1alpha1.SchemeGroupVersion.WithResource(e.resource).GroupResource(), name)
	}
	return e.serve, nil
}
