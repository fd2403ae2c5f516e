package webhook

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net/url"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"

	configv1alpha1 "github.com/karmada-go/karmada/api/config/v1alpha1"
	"github.com/karmada-go/karmada/internal/interpreter"
	"github.com/karmada-go/karmada/internal/interpreter/customization"
	"github.com/karmada-go/karmada/internal/interpreter/luavm"
)

// checkVM runs the chunks of submitted scripts (which only define
// functions) with a short budget: a script whose top level loops is refused
// quickly.
var checkVM = luavm.New(luavm.Budget{Timeout: 500 * time.Millisecond, Memory: 64 << 20})

// validateCustomization checks a ResourceInterpreterCustomization: a target
// kind, at least one script, every script compiling and defining its
// function; and, when others can be read, that no other customization
// already defines one of its operations for the same kind (Karmada allows
// one script per kind and operation).
func validateCustomization(ric *configv1alpha1.ResourceInterpreterCustomization, others client.Reader) field.ErrorList {
	var errs field.ErrorList
	target := field.NewPath("spec", "target")
	if ric.Spec.Target.APIVersion == "" {
		errs = append(errs, field.Required(target.Child("apiVersion"), "the API version of the kind the scripts interpret, e.g. apps.kruise.io/v1alpha1"))
	} else if _, err := schema.ParseGroupVersion(ric.Spec.Target.APIVersion); err != nil {
		errs = append(errs, field.Invalid(target.Child("apiVersion"), ric.Spec.Target.APIVersion, "must be group/version or version: "+err.Error()))
	}
	if ric.Spec.Target.Kind == "" {
		errs = append(errs, field.Required(target.Child("kind"), "the kind the scripts interpret, e.g. CloneSet"))
	}
	rules := field.NewPath("spec", "customizations")
	scripts := customization.Scripts(&ric.Spec.Customizations)
	if len(scripts) == 0 {
		errs = append(errs, field.Required(rules, "at least one of retention, replicaResource, componentResource, replicaRevision, statusReflection, statusAggregation, healthInterpretation, dependencyInterpretation"))
	}
	compiler := customization.NewCompiler(checkVM)
	for _, s := range scripts {
		p := rules.Child(s.Field, "luaScript")
		if strings.TrimSpace(s.Source) == "" {
			errs = append(errs, field.Required(p, fmt.Sprintf("a Lua script defining function %s", s.Function)))
			continue
		}
		if _, err := compiler.Compile(s); err != nil {
			errs = append(errs, field.Invalid(p, elide(s.Source), fmt.Sprintf("must be a Lua script defining function %s: %v", s.Function, err)))
		}
	}
	if len(errs) > 0 || others == nil {
		return errs
	}
	gk, _ := customization.Target(ric)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	list := &configv1alpha1.ResourceInterpreterCustomizationList{}
	if err := others.List(ctx, list); err != nil {
		return field.ErrorList{field.InternalError(rules, fmt.Errorf("reading the other customizations to check that none defines the same operations: %w", err))}
	}
	mine := map[string]string{}
	for _, s := range scripts {
		mine[string(s.Operation)] = s.Field
	}
	for i := range list.Items {
		other := &list.Items[i]
		if other.Name == ric.Name {
			continue
		}
		if ogk, err := customization.Target(other); err != nil || ogk != gk {
			continue
		}
		for _, s := range customization.Scripts(&other.Spec.Customizations) {
			// Dependencies add up across customizations (Karmada's rule).
			if s.Operation == interpreter.OpInterpretDependency {
				continue
			}
			if f, ok := mine[string(s.Operation)]; ok {
				errs = append(errs, field.Duplicate(rules.Child(f), fmt.Sprintf("conflicting with InterpreterOperation(%s) of existing ResourceInterpreterCustomization(%s): one customization per kind (%s %s) and operation, but for InterpretDependency",
					s.Operation, other.Name, ric.Spec.Target.APIVersion, ric.Spec.Target.Kind)))
			}
		}
	}
	return errs
}

// elide shortens a script for an error message.
func elide(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > 80 {
		return s[:77] + "..."
	}
	return s
}

// interpreterOperations are the operations a webhook may declare.
var interpreterOperations = sets.New(
	configv1alpha1.InterpreterOperationAll,
	configv1alpha1.InterpreterOperationInterpretReplica,
	configv1alpha1.InterpreterOperationInterpretComponent,
	configv1alpha1.InterpreterOperationReviseReplica,
	configv1alpha1.InterpreterOperationInterpretStatus,
	configv1alpha1.InterpreterOperationRetain,
	configv1alpha1.InterpreterOperationAggregateStatus,
	configv1alpha1.InterpreterOperationInterpretHealth,
	configv1alpha1.InterpreterOperationInterpretDependency,
)

// InterpreterContextVersions are the ResourceInterpreterContext versions we
// speak.
var InterpreterContextVersions = []string{"v1alpha1"}

// validateInterpreterWebhooks checks a ResourceInterpreterWebhookConfiguration
// as Karmada does: unique names, exactly one of url and service, an https
// URL without query or fragment, a port in range, a CA bundle that parses,
// known operations, non-empty rules, a timeout of 1 to 30 seconds, and a
// context version we speak.
func validateInterpreterWebhooks(c *configv1alpha1.ResourceInterpreterWebhookConfiguration) field.ErrorList {
	var errs field.ErrorList
	names := sets.New[string]()
	for i, w := range c.Webhooks {
		p := field.NewPath("webhooks").Index(i)
		switch {
		case w.Name == "":
			errs = append(errs, field.Required(p.Child("name"), "a fully-qualified name, e.g. workloads.example.com"))
		case names.Has(w.Name):
			errs = append(errs, field.Duplicate(p.Child("name"), w.Name))
		case strings.Count(w.Name, ".") < 2:
			errs = append(errs, field.Invalid(p.Child("name"), w.Name, "must be fully qualified, with at least three segments separated by dots"))
		}
		names.Insert(w.Name)
		errs = append(errs, validateClientConfig(p.Child("clientConfig"), w.ClientConfig.URL, w.ClientConfig.Service != nil, w.ClientConfig.CABundle)...)
		if s := w.ClientConfig.Service; s != nil {
			sp := p.Child("clientConfig", "service")
			if s.Name == "" {
				errs = append(errs, field.Required(sp.Child("name"), "the Service's name"))
			}
			if s.Namespace == "" {
				errs = append(errs, field.Required(sp.Child("namespace"), "the Service's namespace"))
			}
			if s.Port != nil && (*s.Port < 1 || *s.Port > 65535) {
				errs = append(errs, field.Invalid(sp.Child("port"), *s.Port, "must be from 1 to 65535"))
			}
			if s.Path != nil && *s.Path != "" && !strings.HasPrefix(*s.Path, "/") {
				errs = append(errs, field.Invalid(sp.Child("path"), *s.Path, "must start with /"))
			}
		}
		for j, r := range w.Rules {
			rp := p.Child("rules").Index(j)
			if len(r.Operations) == 0 {
				errs = append(errs, field.Required(rp.Child("operations"), "at least one operation, or *"))
			}
			for k, op := range r.Operations {
				if !interpreterOperations.Has(op) {
					errs = append(errs, field.NotSupported(rp.Child("operations").Index(k), op, sets.List(interpreterOperations)))
				}
			}
			for _, l := range []struct {
				name string
				vals []string
			}{{"apiGroups", r.APIGroups}, {"apiVersions", r.APIVersions}, {"kinds", r.Kinds}} {
				if len(l.vals) == 0 {
					errs = append(errs, field.Required(rp.Child(l.name), "at least one, or *"))
				}
			}
		}
		if t := w.TimeoutSeconds; t != nil && (*t < 1 || *t > 30) {
			errs = append(errs, field.Invalid(p.Child("timeoutSeconds"), *t, "must be from 1 to 30 seconds"))
		}
		ok := false
		for _, v := range w.InterpreterContextVersions {
			for _, known := range InterpreterContextVersions {
				ok = ok || v == known
			}
		}
		if !ok {
			errs = append(errs, field.Invalid(p.Child("interpreterContextVersions"), w.InterpreterContextVersions, fmt.Sprintf("must include a version Karmada speaks: %v", InterpreterContextVersions)))
		}
	}
	return errs
}

// validateClientConfig checks where a webhook is and the CA of its
// certificate.
func validateClientConfig(p *field.Path, u *string, service bool, ca []byte) field.ErrorList {
	var errs field.ErrorList
	switch {
	case u == nil && !service:
		errs = append(errs, field.Required(p, "exactly one of url and service"))
	case u != nil && service:
		errs = append(errs, field.Invalid(p, "url and service", "exactly one of url and service, not both"))
	case u != nil:
		parsed, err := url.Parse(*u)
		switch {
		case err != nil:
			errs = append(errs, field.Invalid(p.Child("url"), *u, "must be a URL: "+err.Error()))
		case parsed.Scheme != "https":
			errs = append(errs, field.Invalid(p.Child("url"), *u, "must use https"))
		case parsed.Host == "":
			errs = append(errs, field.Invalid(p.Child("url"), *u, "must have a host"))
		case parsed.User != nil:
			errs = append(errs, field.Invalid(p.Child("url"), *u, "must not hold user information"))
		case parsed.RawQuery != "" || parsed.Fragment != "":
			errs = append(errs, field.Invalid(p.Child("url"), *u, "must not have a query or a fragment"))
		}
	}
	if len(ca) > 0 {
		rest, found := ca, false
		for {
			var block *pem.Block
			block, rest = pem.Decode(rest)
			if block == nil {
				break
			}
			if _, err := x509.ParseCertificate(block.Bytes); err != nil {
				errs = append(errs, field.Invalid(p.Child("caBundle"), "<PEM>", "holds a certificate that does not parse: "+err.Error()))
			}
			found = true
		}
		if !found {
			errs = append(errs, field.Invalid(p.Child("caBundle"), "<bytes>", "must be PEM-encoded CA certificates"))
		}
	}
	return errs
}

// interpreterEndpoints are the admission endpoints of
// ResourceInterpreterCustomizations (scripts compiled and run on samples)
// and ResourceInterpreterWebhookConfigurations.
func interpreterEndpoints(k kindEnv) []Endpoint {
	dec, o := k.dec, k.o
	return []Endpoint{
		{Path: "/validate-resourceinterpretercustomization", GVR: configResource("resourceinterpretercustomizations"), Kind: "ResourceInterpreterCustomization",
			handler: &validating[*configv1alpha1.ResourceInterpreterCustomization]{dec: dec, new: func() *configv1alpha1.ResourceInterpreterCustomization {
				return &configv1alpha1.ResourceInterpreterCustomization{}
			},
				validate: func(c, old *configv1alpha1.ResourceInterpreterCustomization) field.ErrorList {
					if old != nil && equality.Semantic.DeepEqual(c.Spec, old.Spec) {
						return nil
					}
					return validateCustomization(c, o.Clusters)
				}}},
		{Path: "/validate-resourceinterpreterwebhookconfiguration", GVR: configResource("resourceinterpreterwebhookconfigurations"), Kind: "ResourceInterpreterWebhookConfiguration",
			handler: &validating[*configv1alpha1.ResourceInterpreterWebhookConfiguration]{dec: dec, new: func() *configv1alpha1.ResourceInterpreterWebhookConfiguration {
				return &configv1alpha1.ResourceInterpreterWebhookConfiguration{}
			},
				validate: func(c, _ *configv1alpha1.ResourceInterpreterWebhookConfiguration) field.ErrorList {
					return validateInterpreterWebhooks(c)
				}}},
	}
}
