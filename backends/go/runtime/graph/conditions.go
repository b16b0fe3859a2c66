package graph

import "strings"

// The router operators of IR v2. A missing field never satisfies eq, the
// ordering operators or in; ne holds for it.

func CondEq(v, want any) bool {
	if v == nil {
		return false
	}
	if a, ok := toFloat(v); ok {
		b, ok := toFloat(want)
		return ok && a == b
	}
	return v == want
}

func CondNe(v, want any) bool { return !CondEq(v, want) }

// compare orders numbers numerically and strings lexically.
func compare(v, want any) (int, bool) {
	if a, ok := toFloat(v); ok {
		b, ok := toFloat(want)
		if !ok {
			return 0, false
		}
		switch {
		case a < b:
			return -1, true
		case a > b:
			return 1, true
		}
		return 0, true
	}
	a, ok1 := v.(string)
	b, ok2 := want.(string)
	if !ok1 || !ok2 {
		return 0, false
	}
	return strings.Compare(a, b), true
}

func CondGt(v, want any) bool { c, ok := compare(v, want); return ok && c > 0 }
func CondGe(v, want any) bool { c, ok := compare(v, want); return ok && c >= 0 }
func CondLt(v, want any) bool { c, ok := compare(v, want); return ok && c < 0 }
func CondLe(v, want any) bool { c, ok := compare(v, want); return ok && c <= 0 }

func CondIn(v any, options []any) bool {
	for _, o := range options {
		if CondEq(v, o) {
			return true
		}
	}
	return false
}

func CondExists(v any) bool { return v != nil }

// CondTruthy follows JSON intuition: false, 0, "", empty lists and objects
// and absent values are falsy.
func CondTruthy(v any) bool {
	switch x := v.(type) {
	case nil:
		return false
	case bool:
		return x
	case string:
		return x != ""
	case []any:
		return len(x) > 0
	case map[string]any:
		return len(x) > 0
	}
	f, ok := toFloat(v)
	return !ok || f != 0
}
