package graph

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"
)

// A SchemaMismatch is the first place where a value does not match a JSON
// Schema: a JSON pointer into the value ("" for the value itself) and the
// problem there: "missing", "not allowed", "expected <type>" or, for a
// reply's text, "not JSON".
type SchemaMismatch struct {
	Path    string
	Problem string
}

// CheckSchema is the first place where v does not match schema, nil when
// it matches. The schema is of the subset the compiler writes for a state
// field with properties: "type" on every level, an object's "properties"
// and "required" (a list), an array's "items". Every target finds the same
// first mismatch: at every value its type first; in an object each
// required property in order (missing, else its own value), then the keys
// without a property, in sorted order; in an array the items by index.
// An integer is a number without a fraction (3.0 is one), a boolean is no
// number, and null matches no type.
func CheckSchema(schema map[string]any, v any) *SchemaMismatch {
	return checkSchema(schema, v, "")
}

func checkSchema(schema map[string]any, v any, at string) *SchemaMismatch {
	kind, _ := schema["type"].(string)
	if !subsetTypes[kind] {
		return nil // a value the schema does not describe (an array without items)
	}
	if !hasType(kind, v) {
		return &SchemaMismatch{Path: at, Problem: "expected " + kind}
	}
	switch x := v.(type) {
	case map[string]any:
		properties, _ := schema["properties"].(map[string]any)
		required, _ := schema["required"].([]any)
		for _, r := range required {
			name, _ := r.(string)
			value, ok := x[name]
			if !ok {
				return &SchemaMismatch{Path: at + "/" + pointerToken(name), Problem: "missing"}
			}
			property, _ := properties[name].(map[string]any)
			if miss := checkSchema(property, value, at+"/"+pointerToken(name)); miss != nil {
				return miss
			}
		}
		// Every object of a generated schema allows no other key; one
		// without properties (inside a request field's) allows any.
		if closed, _ := schema["additionalProperties"].(bool); schema["additionalProperties"] != nil && !closed {
			for _, k := range sortedKeys(x) {
				if _, ok := properties[k]; !ok {
					return &SchemaMismatch{Path: at + "/" + pointerToken(k), Problem: "not allowed"}
				}
			}
		}
	case []any:
		items, _ := schema["items"].(map[string]any)
		for i, item := range x {
			if miss := checkSchema(items, item, at+"/"+strconv.Itoa(i)); miss != nil {
				return miss
			}
		}
	}
	return nil
}

// subsetTypes are the types a generated schema names.
var subsetTypes = map[string]bool{"object": true, "array": true, "string": true, "boolean": true, "number": true, "integer": true}

// hasType reports whether v is a value of the JSON Schema type kind.
func hasType(kind string, v any) bool {
	switch kind {
	case "object":
		_, ok := v.(map[string]any)
		return ok
	case "array":
		_, ok := v.([]any)
		return ok
	case "string":
		_, ok := v.(string)
		return ok
	case "boolean":
		_, ok := v.(bool)
		return ok
	case "number":
		switch v.(type) {
		case int, int64, float64, json.Number:
			return true
		}
	case "integer":
		return wholeNumber(v)
	}
	return false
}

// wholeNumber reports whether v is a number without a fraction, as a
// float64 reads it (as Python's json reads a number with a point or an
// exponent): 3, 3.0 and 1e3 are whole, 3.5 and 1e400 (infinite) are not.
func wholeNumber(v any) bool {
	switch n := v.(type) {
	case int, int64:
		return true
	case json.Number:
		if _, err := n.Int64(); err == nil {
			return true
		}
		f, err := n.Float64()
		return err == nil && f == math.Trunc(f)
	case float64:
		return n == math.Trunc(n) && !math.IsInf(n, 0)
	}
	return false
}

// pointerToken is a key as a JSON pointer's token: "~" as "~0", "/" as
// "~1" (RFC 6901).
func pointerToken(key string) string { return pointerEscapes.Replace(key) }

var pointerEscapes = strings.NewReplacer("~", "~0", "/", "~1")
