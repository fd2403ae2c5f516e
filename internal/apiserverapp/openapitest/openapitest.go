// Package openapitest checks generated OpenAPI definitions against the Go
// types they describe, for the aggregated API servers' tests.
package openapitest

import (
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"k8s.io/kube-openapi/pkg/common"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

// CheckDefinitions fails t unless every struct the roots reach has a
// definition whose properties are exactly its JSON fields, and every
// dependency of those definitions (ours and the handWritten ones) resolves.
// Fails when a type changed and `make generate` was not run.
func CheckDefinitions(t *testing.T, definitions common.GetOpenAPIDefinitions, roots []any, handWritten ...string) {
	t.Helper()
	ref := func(path string) spec.Ref { return spec.MustCreateRef("#/definitions/" + path) }
	defs := definitions(ref)
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
	for _, obj := range roots {
		walk(reflect.TypeOf(obj))
	}
	// What the roots reach must resolve (the generator also writes the
	// other types of a tagged package, which the server never serves).
	for typ := range seen {
		name := typ.PkgPath() + "." + typ.Name()
		if !strings.HasPrefix(name, "github.com/karmada-go/") && !slices.Contains(handWritten, name) {
			continue // apimachinery's own
		}
		def := defs[name]
		for _, dep := range def.Dependencies {
			if _, ok := defs[dep]; !ok {
				t.Errorf("%s depends on %s, which has no definition", name, dep)
			}
		}
	}
}
