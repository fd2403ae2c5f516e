package aggregatedapiserver

import (
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/registry/rest"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	generatedopenapi "github.com/karmada-go/karmada/internal/aggregatedapiserver/openapi"
	"github.com/karmada-go/karmada/internal/aggregatedapiserver/registry/cluster"
	"github.com/karmada-go/karmada/internal/apiserverapp"
	"github.com/karmada-go/karmada/internal/names"
)

// Name is the server's name, in its logs and its OpenAPI.
const Name = "karmada-aggregated-apiserver"

// SetOpenAPI gives the generic server's configuration the Cluster API's
// OpenAPI (v2 and v3).
func SetOpenAPI(c *genericapiserver.RecommendedConfig) {
	apiserverapp.SetOpenAPI(c, Scheme, generatedopenapi.Definitions)
}

// New makes the server from a completed configuration: the Cluster API
// installed, a post-start hook that imports the Clusters of an earlier
// version's Cluster CRD (importFromCRD), and one that starts the informer
// of the member credentials the proxy uses (Secrets in karmada-cluster
// only).
func New(c genericapiserver.CompletedConfig, kube kubernetes.Interface, dyn dynamic.Interface) (*genericapiserver.GenericAPIServer, error) {
	server, err := c.New(Name, genericapiserver.NewEmptyDelegate())
	if err != nil {
		return nil, err
	}
	secrets := informers.NewSharedInformerFactoryWithOptions(kube, 10*time.Minute, informers.WithNamespace(names.ClusterNamespace))
	lister := secrets.Core().V1().Secrets().Lister()
	storage, err := cluster.NewStorage(Scheme, c.RESTOptionsGetter, NewSecretDialer(lister))
	if err != nil {
		return nil, fmt.Errorf("the Cluster storage: %w", err)
	}
	info := genericapiserver.NewDefaultAPIGroupInfo(clusterv1alpha1.GroupName, Scheme, ParameterCodec, Codecs)
	info.VersionedResourcesStorageMap[clusterv1alpha1.SchemeGroupVersion.Version] = map[string]rest.Storage{
		"clusters":        storage.Cluster,
		"clusters/status": storage.Status,
		"clusters/proxy":  storage.Proxy,
	}
	if err := server.InstallAPIGroup(&info); err != nil {
		return nil, err
	}
	// An upgraded control plane: the Clusters the Cluster CRD served are
	// copied first (the server is not ready until they are).
	importClusters := importHook(dyn, storage.Cluster.Store)
	server.AddPostStartHookOrDie("import-clusters-from-crd", func(ctx genericapiserver.PostStartHookContext) error {
		return importClusters(ctx)
	})
	server.AddPostStartHookOrDie("start-member-credentials-informer", func(ctx genericapiserver.PostStartHookContext) error {
		secrets.Start(ctx.Done())
		return nil
	})
	return server, nil
}

// StorageVersion is the version Clusters are stored in.
var StorageVersion = schema.GroupVersions{clusterv1alpha1.SchemeGroupVersion}
