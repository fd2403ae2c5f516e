package overridemanager

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"sigs.k8s.io/yaml"

	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
)

// applyOverriders applies one rule's overriders to obj, in Karmada's order:
// images, commands, args, labels, annotations, embedded fields, then the
// plaintext JSON patches.
func applyOverriders(obj *unstructured.Unstructured, o *policyv1alpha1.Overriders) error {
	for i, io := range o.ImageOverrider {
		if err := overrideImage(obj, io); err != nil {
			return fmt.Errorf("imageOverrider[%d]: %w", i, err)
		}
	}
	for i, c := range o.CommandOverrider {
		if err := overrideCommandArgs(obj, c, "command"); err != nil {
			return fmt.Errorf("commandOverrider[%d]: %w", i, err)
		}
	}
	for i, c := range o.ArgsOverrider {
		if err := overrideCommandArgs(obj, c, "args"); err != nil {
			return fmt.Errorf("argsOverrider[%d]: %w", i, err)
		}
	}
	for i, l := range o.LabelsOverrider {
		m, err := overrideMap(obj.GetLabels(), l)
		if err != nil {
			return fmt.Errorf("labelsOverrider[%d]: %w", i, err)
		}
		obj.SetLabels(m)
	}
	for i, a := range o.AnnotationsOverrider {
		m, err := overrideMap(obj.GetAnnotations(), a)
		if err != nil {
			return fmt.Errorf("annotationsOverrider[%d]: %w", i, err)
		}
		obj.SetAnnotations(m)
	}
	for i, f := range o.FieldOverrider {
		if err := overrideField(obj, f); err != nil {
			return fmt.Errorf("fieldOverrider[%d] (fieldPath %s): %w", i, f.FieldPath, err)
		}
	}
	if len(o.Plaintext) > 0 {
		ops := make([]patchOp, 0, len(o.Plaintext))
		for _, p := range o.Plaintext {
			ops = append(ops, patchOp{Op: string(p.Operator), Path: p.Path, Value: p.Value.Raw})
		}
		out, err := applyPatch(obj.Object, ops)
		if err != nil {
			return fmt.Errorf("plaintext: %w", err)
		}
		m, ok := out.(map[string]any)
		if !ok {
			return fmt.Errorf("plaintext: the result is not an object")
		}
		obj.Object = m
	}
	return nil
}

type patchOp struct {
	Op    string          `json:"op"`
	Path  string          `json:"path"`
	Value json.RawMessage `json:"value,omitempty"`
}

// applyPatch applies JSON patch operations to any JSON value; an error names
// the failing operation and path.
func applyPatch(doc any, ops []patchOp) (any, error) {
	raw, err := json.Marshal(doc)
	if err != nil {
		return nil, err
	}
	for _, op := range ops {
		switch op.Op {
		case "add", "replace":
			if len(op.Value) == 0 {
				op.Value = json.RawMessage("null")
			}
		case "remove":
			op.Value = nil
		default:
			return nil, fmt.Errorf("operator %q at path %s: must be add, remove or replace", op.Op, op.Path)
		}
		b, err := json.Marshal([]patchOp{op})
		if err != nil {
			return nil, err
		}
		p, err := jsonpatch.DecodePatch(b)
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", op.Op, op.Path, err)
		}
		if raw, err = p.Apply(raw); err != nil {
			return nil, fmt.Errorf("%s %s: %w", op.Op, op.Path, err)
		}
	}
	// apimachinery's decoder keeps whole numbers int64, as unstructured
	// objects expect.
	var out any
	if err := utiljson.Unmarshal(raw, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// podSpecPaths are where a kind keeps its pod spec.
func podSpecPath(obj *unstructured.Unstructured) []string {
	switch obj.GetKind() {
	case "Pod":
		return []string{"spec"}
	case "CronJob":
		return []string{"spec", "jobTemplate", "spec", "template", "spec"}
	}
	if _, ok, _ := unstructured.NestedMap(obj.Object, "spec", "template", "spec"); ok {
		return []string{"spec", "template", "spec"}
	}
	return nil
}

// containerImagePaths lists the JSON pointers of every container's image.
func containerImagePaths(obj *unstructured.Unstructured) []string {
	base := podSpecPath(obj)
	if base == nil {
		return nil
	}
	var out []string
	for _, list := range []string{"initContainers", "containers"} {
		cs, _, _ := unstructured.NestedSlice(obj.Object, append(slices.Clone(base), list)...)
		for i := range cs {
			out = append(out, "/"+strings.Join(base, "/")+"/"+list+"/"+strconv.Itoa(i)+"/image")
		}
	}
	return out
}

func overrideImage(obj *unstructured.Unstructured, o policyv1alpha1.ImageOverrider) error {
	paths := containerImagePaths(obj)
	if o.Predicate != nil {
		paths = []string{o.Predicate.Path}
	}
	for _, p := range paths {
		v, err := getPointer(obj.Object, p)
		if err != nil {
			return fmt.Errorf("path %s: %w", p, err)
		}
		s, ok := v.(string)
		if !ok {
			return fmt.Errorf("path %s: holds %T, not an image string", p, v)
		}
		img := ParseImage(s)
		if err := img.Override(o.Component, o.Operator, o.Value); err != nil {
			return fmt.Errorf("path %s: %w", p, err)
		}
		if err := setPointer(obj.Object, p, img.String()); err != nil {
			return fmt.Errorf("path %s: %w", p, err)
		}
	}
	return nil
}

func overrideCommandArgs(obj *unstructured.Unstructured, o policyv1alpha1.CommandArgsOverrider, field string) error {
	base := podSpecPath(obj)
	if base == nil {
		return fmt.Errorf("%s has no pod template", obj.GetKind())
	}
	for _, list := range []string{"initContainers", "containers"} {
		path := append(slices.Clone(base), list)
		cs, _, _ := unstructured.NestedSlice(obj.Object, path...)
		for i, c := range cs {
			cm, ok := c.(map[string]any)
			if !ok || cm["name"] != o.ContainerName {
				continue
			}
			cur, _, _ := unstructured.NestedStringSlice(cm, field)
			switch o.Operator {
			case policyv1alpha1.OverriderOpAdd:
				cur = append(cur, o.Value...)
			case policyv1alpha1.OverriderOpRemove:
				cur = slices.DeleteFunc(cur, func(s string) bool { return slices.Contains(o.Value, s) })
			default:
				return fmt.Errorf("operator %q: must be add or remove", o.Operator)
			}
			vals := make([]any, len(cur))
			for j, s := range cur {
				vals[j] = s
			}
			cm[field] = vals
			cs[i] = cm
		}
		if len(cs) > 0 {
			if err := unstructured.SetNestedSlice(obj.Object, cs, path...); err != nil {
				return err
			}
		}
	}
	// A container that is not there is not an error (the same policy may
	// serve templates with different containers).
	return nil
}

func overrideMap(m map[string]string, o policyv1alpha1.LabelAnnotationOverrider) (map[string]string, error) {
	if m == nil {
		m = map[string]string{}
	}
	for k, v := range o.Value {
		switch o.Operator {
		case policyv1alpha1.OverriderOpAdd:
			m[k] = v
		case policyv1alpha1.OverriderOpReplace:
			if _, ok := m[k]; ok {
				m[k] = v
			}
		case policyv1alpha1.OverriderOpRemove:
			delete(m, k)
		default:
			return nil, fmt.Errorf("operator %q: must be add, remove or replace", o.Operator)
		}
	}
	if len(m) == 0 {
		return nil, nil
	}
	return m, nil
}

func overrideField(obj *unstructured.Unstructured, f policyv1alpha1.FieldOverrider) error {
	if len(f.JSON) > 0 && len(f.YAML) > 0 {
		return fmt.Errorf("set json or yaml, not both")
	}
	v, err := getPointer(obj.Object, f.FieldPath)
	if err != nil {
		return err
	}
	s, ok := v.(string)
	if !ok {
		return fmt.Errorf("holds %T, not a string", v)
	}
	isYAML := len(f.YAML) > 0
	ops := f.JSON
	if isYAML {
		ops = f.YAML
	}
	var doc any
	if isYAML {
		err = yaml.Unmarshal([]byte(s), &doc)
	} else {
		err = json.Unmarshal([]byte(s), &doc)
	}
	if err != nil {
		return fmt.Errorf("the field does not hold valid %s: %w", map[bool]string{true: "YAML", false: "JSON"}[isYAML], err)
	}
	pops := make([]patchOp, 0, len(ops))
	for _, op := range ops {
		pops = append(pops, patchOp{Op: string(op.Operator), Path: op.SubPath, Value: op.Value.Raw})
	}
	out, err := applyPatch(doc, pops)
	if err != nil {
		return err
	}
	var b []byte
	if isYAML {
		b, err = yaml.Marshal(out)
	} else {
		b, err = json.Marshal(out)
	}
	if err != nil {
		return err
	}
	return setPointer(obj.Object, f.FieldPath, string(b))
}

// splitPointer splits a JSON pointer into unescaped tokens.
func splitPointer(p string) ([]string, error) {
	if p == "" || p[0] != '/' {
		return nil, fmt.Errorf("%q is not a JSON pointer (it must start with /)", p)
	}
	parts := strings.Split(p[1:], "/")
	for i, s := range parts {
		parts[i] = strings.ReplaceAll(strings.ReplaceAll(s, "~1", "/"), "~0", "~")
	}
	return parts, nil
}

func getPointer(doc any, p string) (any, error) {
	parts, err := splitPointer(p)
	if err != nil {
		return nil, err
	}
	cur := doc
	for _, k := range parts {
		switch c := cur.(type) {
		case map[string]any:
			v, ok := c[k]
			if !ok {
				return nil, fmt.Errorf("no field %q", k)
			}
			cur = v
		case []any:
			i, err := strconv.Atoi(k)
			if err != nil || i < 0 || i >= len(c) {
				return nil, fmt.Errorf("no index %q in a list of %d", k, len(c))
			}
			cur = c[i]
		default:
			return nil, fmt.Errorf("%q is below a %T", k, cur)
		}
	}
	return cur, nil
}

func setPointer(doc any, p string, v any) error {
	parts, err := splitPointer(p)
	if err != nil {
		return err
	}
	parent, err := getPointer(doc, "/"+strings.Join(escapeAll(parts[:len(parts)-1]), "/"))
	if len(parts) == 1 {
		parent, err = doc, nil
	}
	if err != nil {
		return err
	}
	last := parts[len(parts)-1]
	switch c := parent.(type) {
	case map[string]any:
		c[last] = v
	case []any:
		i, err := strconv.Atoi(last)
		if err != nil || i < 0 || i >= len(c) {
			return fmt.Errorf("no index %q in a list of %d", last, len(c))
		}
		c[i] = v
	default:
		return fmt.Errorf("cannot set %q below a %T", last, parent)
	}
	return nil
}

func escapeAll(parts []string) []string {
	out := make([]string, len(parts))
	for i, s := range parts {
		out[i] = strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
	}
	return out
}
