package openapi

import (
	"reflect"
	"sort"
	"strings"
	"testing"

	"k8s.io/kube-openapi/pkg/validation/spec"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
)

// The generated definitions match the Go types: every struct the Cluster
// kind reaches has a definition whose properties are exactly its JSON
// fields, and every reference resolves. Fails when a type changes and
// `make generate` was not run.
func TestDefinitionsMatchTheTypes(t *testing.T) {
	ref := func(path string) spec.Ref { return spec.MustCreateRef("#/definitions/" + path) }
	defs := Definitions(ref)
	seen := map[reflect.Type]bool{}
	var walk func(reflect.Type)
	walk = func(typ reflect.Type) {
		for typ.Kind() == reflect.Pointer || typ.Kind() == reflect.Slice || typ.Kind() == reflect.Map {
			typ = typ.Elem()
		}
		if typ.Kind() != reflect.Struct || seen[typ] || typ.PkgPath() == "" {
			return
		}
		seen[typ] = true
		name := typ.PkgPath() + "." + typ.Name()
		def, ok := defs[name]
		if !ok {
			t.Errorf("no OpenAPI definition of %s: run make generate", name)
			return
		}
		if !strings.HasPrefix(typ.PkgPath(), "github.com/karmada-go/") {
			return // apimachinery's and core/v1's: defined, their fields are theirs
		}
		var fields []string
		for i := range typ.NumField() {
			f := typ.Field(i)
			tag := strings.Split(f.Tag.Get("json"), ",")[0]
			if tag == "-" {
				continue
			}
			if tag == "" && f.Anonymous {
				walk(f.Type) // inline: TypeMeta, ObjectMeta's fields are its own
				sub := defs[f.Type.PkgPath()+"."+f.Type.Name()]
				for p := range sub.Schema.Properties {
					fields = append(fields, p)
				}
				continue
			}
			fields = append(fields, tag)
			walk(f.Type)
		}
		var props []string
		for p := range def.Schema.Properties {
			props = append(props, p)
		}
		sort.Strings(fields)
		sort.Strings(props)
		if strings.Join(fields, ",") != strings.Join(props, ",") {
			t.Errorf("%s: JSON fields %v, OpenAPI properties %v: run make generate", name, fields, props)
		}
	}
	for _, obj := range []any{clusterv1alpha1.Cluster{}, clusterv1alpha1.ClusterList{}, clusterv1alpha1.ClusterProxyOptions{}} {
		walk(reflect.TypeOf(obj))
	}
	for name, def := range defs {
		if !strings.HasPrefix(name, "github.com/karmada-go/") && name != "k8s.io/api/core/v1.Taint" {
			continue // apimachinery's own
		}
		for _, dep := range def.Dependencies {
			if _, ok := defs[dep]; !ok {
				t.Errorf("%s depends on %s, which has no definition", name, dep)
			}
		}
	}
}
