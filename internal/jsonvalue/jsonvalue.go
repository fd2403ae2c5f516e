// Package jsonvalue compares values decoded from JSON (maps, lists,
// strings, numbers of any Go type, booleans, nulls), as the controllers see
// objects read from API servers and manifests made in memory.
package jsonvalue

import (
	"encoding/json"
	"reflect"
)

// Contains reports whether live holds every field of desired with the same
// value: maps may have more keys in live, lists must have the same length
// and hold, element by element, what desired holds. Numbers compare by
// value whatever their Go type. A null in desired matches anything. It is
// conservative: a value the member writes differently (a quantity
// normalised, say) reads as a difference, which only costs an apply.
func Contains(live, desired any) bool {
	switch d := desired.(type) {
	case nil:
		return true
	case map[string]any:
		l, ok := live.(map[string]any)
		if !ok {
			return false
		}
		for k, dv := range d {
			// A key live lacks reads as null: it matches only a null.
			if !Contains(l[k], dv) {
				return false
			}
		}
		return true
	case []any:
		l, ok := live.([]any)
		if !ok || len(l) != len(d) {
			return false
		}
		for i := range d {
			if !Contains(l[i], d[i]) {
				return false
			}
		}
		return true
	}
	if df, ok := Number(desired); ok {
		lf, ok := Number(live)
		return ok && lf == df
	}
	return live == desired
}

// Equal reports whether two statuses of an unstructured object say the
// same once stored: numbers are compared by value whatever their Go type, and
// a field that is absent equals one holding its zero value (0, "", false,
// null, an empty list, or a map of such), as built-in kinds omit empty fields
// when they are stored. An update that changes nothing else is not worth
// sending.
func Equal(a, b any) bool {
	if IsZero(a) || IsZero(b) {
		return IsZero(a) && IsZero(b)
	}
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok {
			return false
		}
		for k, v := range x {
			if !Equal(v, y[k]) {
				return false
			}
		}
		for k, v := range y {
			if _, seen := x[k]; !seen && !IsZero(v) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !Equal(x[i], y[i]) {
				return false
			}
		}
		return true
	}
	if n, ok := Number(a); ok {
		m, ok := Number(b)
		return ok && n == m
	}
	return reflect.DeepEqual(a, b)
}

// IsZero reports whether v is null or its type's zero value (an empty
// string, false, 0, an empty list, or a map of zero values): what the API
// server omits when it stores an object.
func IsZero(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case string:
		return x == ""
	case bool:
		return !x
	case map[string]any:
		for _, e := range x {
			if !IsZero(e) {
				return false
			}
		}
		return true
	case []any:
		return len(x) == 0
	}
	n, ok := Number(v)
	return ok && n == 0
}

// Number reads v as a number whatever its Go type (int, int32, int64,
// float64 or json.Number).
func Number(v any) (float64, bool) {
	switch n := v.(type) {
	case int64:
		return float64(n), true
	case int32:
		return float64(n), true
	case int:
		return float64(n), true
	case float64:
		return n, true
	case json.Number:
		f, err := n.Float64()
		return f, err == nil
	}
	return 0, false
}
