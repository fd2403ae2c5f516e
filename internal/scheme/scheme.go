// Package scheme holds the runtime scheme that knows the Kubernetes built-in
// kinds, CustomResourceDefinitions, and every Karmada kind of this project.
package scheme

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	appsv1alpha1 "github.com/karmada-go/karmada/api/apps/v1alpha1"
	autoscalingv1alpha1 "github.com/karmada-go/karmada/api/autoscaling/v1alpha1"
	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	configv1alpha1 "github.com/karmada-go/karmada/api/config/v1alpha1"
	mcsv1alpha1 "github.com/karmada-go/karmada/api/multicluster/v1alpha1"
	networkingv1alpha1 "github.com/karmada-go/karmada/api/networking/v1alpha1"
	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
	remedyv1alpha1 "github.com/karmada-go/karmada/api/remedy/v1alpha1"
	searchv1alpha1 "github.com/karmada-go/karmada/api/search/v1alpha1"
	workv1alpha1 "github.com/karmada-go/karmada/api/work/v1alpha1"
	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
)

// Scheme knows the built-in and Karmada kinds.
var Scheme = runtime.NewScheme()

func init() {
	utilruntime.Must(clientgoscheme.AddToScheme(Scheme))
	utilruntime.Must(apiextensionsv1.AddToScheme(Scheme))
	utilruntime.Must(appsv1alpha1.AddToScheme(Scheme))
	utilruntime.Must(autoscalingv1alpha1.AddToScheme(Scheme))
	utilruntime.Must(clusterv1alpha1.AddToScheme(Scheme))
	utilruntime.Must(configv1alpha1.AddToScheme(Scheme))
	utilruntime.Must(mcsv1alpha1.AddToScheme(Scheme))
	utilruntime.Must(networkingv1alpha1.AddToScheme(Scheme))
	utilruntime.Must(policyv1alpha1.AddToScheme(Scheme))
	utilruntime.Must(remedyv1alpha1.AddToScheme(Scheme))
	utilruntime.Must(searchv1alpha1.AddToScheme(Scheme))
	utilruntime.Must(workv1alpha1.AddToScheme(Scheme))
	utilruntime.Must(workv1alpha2.AddToScheme(Scheme))
}
