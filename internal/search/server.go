package search

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/apiserver/pkg/registry/rest"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	searchv1alpha1 "github.com/karmada-go/karmada/api/search/v1alpha1"
	"github.com/karmada-go/karmada/internal/aggregatedapiserver"
	"github.com/karmada-go/karmada/internal/apiserverapp"
	"github.com/karmada-go/karmada/internal/clusters/clusterclient"
	"github.com/karmada-go/karmada/internal/names"
	"github.com/karmada-go/karmada/internal/search/cache"
	generatedopenapi "github.com/karmada-go/karmada/internal/search/openapi"
	"github.com/karmada-go/karmada/internal/search/registry"
)

// Name is the server's name.
const Name = "karmada-search"

// SetOpenAPI gives the generic server's configuration the search API's
// OpenAPI (v2 and v3).
func SetOpenAPI(c *genericapiserver.RecommendedConfig) {
	apiserverapp.SetOpenAPI(c, Scheme, generatedopenapi.Definitions)
}

// Server is karmada-search: the generic server and its cache.
type Server struct {
	*genericapiserver.GenericAPIServer
	Manager *cache.Manager
}

// New makes the server from a completed configuration: the
// ResourceRegistry API, the search and proxying endpoints, and a post-start
// hook running the controller that keeps the cache what the registries
// select. kube and karmada reach the karmada-apiserver as karmada-search
// (Clusters, their credentials in karmada-cluster, access reviews).
func New(c genericapiserver.CompletedConfig, kube kubernetes.Interface, karmada client.Client) (*Server, error) {
	server, err := c.New(Name, genericapiserver.NewEmptyDelegate())
	if err != nil {
		return nil, err
	}
	storage, err := registry.NewStorage(Scheme, c.RESTOptionsGetter)
	if err != nil {
		return nil, fmt.Errorf("the ResourceRegistry storage: %w", err)
	}
	secrets := informers.NewSharedInformerFactoryWithOptions(kube, 10*time.Minute, informers.WithNamespace(names.ClusterNamespace))
	manager := cache.NewManager()
	h := &handlers{manager: manager, kube: kube, authz: c.Authorization.Authorizer, karmada: karmada, dialer: aggregatedapiserver.NewSecretDialer(secrets.Core().V1().Secrets().Lister())}
	info := genericapiserver.NewDefaultAPIGroupInfo(searchv1alpha1.GroupName, Scheme, ParameterCodec, Codecs)
	info.VersionedResourcesStorageMap[searchv1alpha1.SchemeGroupVersion.Version] = map[string]rest.Storage{
		"resourceregistries":        &registryREST{storage.Registry},
		"resourceregistries/status": storage.Status,
		"search": &endpoint{resource: "search", name: "cache", newObj: func() runtime.Object { return &searchv1alpha1.Search{} },
			methods: []string{http.MethodGet}, serve: h.search},
		"proxying": &endpoint{resource: "proxying", name: "karmada", newObj: func() runtime.Object { return &searchv1alpha1.Proxying{} },
			methods: []string{http.MethodGet, http.MethodPut, http.MethodPatch, http.MethodDelete, http.MethodPost}, serve: h.proxy},
	}
	if err := server.InstallAPIGroup(&info); err != nil {
		return nil, err
	}
	ctrl := &controller{registries: storage.Registry, status: storage.Status, karmada: karmada,
		members: clusterclient.NewCache(karmada, clusterclient.Options{QPS: 20, Burst: 40}), manager: manager}
	server.AddPostStartHookOrDie("start-karmada-search-cache", func(ctx genericapiserver.PostStartHookContext) error {
		secrets.Start(ctx.Done())
		runCtx, cancel := context.WithCancel(context.Background())
		go func() {
			<-ctx.Done()
			cancel()
			manager.Close()
		}()
		go ctrl.run(runCtx)
		return nil
	})
	return &Server{GenericAPIServer: server, Manager: manager}, nil
}

// registryREST is the ResourceRegistry resource, in `kubectl get
// karmada-io`.
type registryREST struct{ *genericregistry.Store }

// Categories puts ResourceRegistries in `kubectl get karmada-io`.
func (*registryREST) Categories() []string { return []string{"karmada-io"} }
