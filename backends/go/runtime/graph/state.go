package graph

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"sort"
)

// State is the graph state: field name to value. Node bodies read it with
// the typed accessors and return a State patch.
type State map[string]any

// Type is the declared type of a state field.
type Type int

// The state field types of IR v2.
const (
	TypeString Type = iota
	TypeInteger
	TypeNumber
	TypeBoolean
	TypeObject
	TypeArray
	TypeMessages
)

func (t Type) String() string {
	return [...]string{"string", "integer", "number", "boolean", "object", "array", "messages"}[t]
}

// Item is the element type of an array field.
type Item struct {
	Type  Type
	Items *Item
}

// Field declares one state field.
type Field struct {
	Name     string
	Type     Type
	Items    *Item
	Append   bool
	Required bool
	// Default returns a fresh copy of the default value, or nil for none.
	Default func() any
	// Schema is the JSON Schema of a field with properties (nil for
	// others): a request's value must match it too (CheckSchema).
	Schema map[string]any
}

// String returns the field as a string ("" when absent or not a string).
func (s State) String(key string) string {
	v, _ := s[key].(string)
	return v
}

// Int returns the field as an int (0 when absent or not a number).
func (s State) Int(key string) int {
	switch v := s[key].(type) {
	case int:
		return v
	case int64:
		return int(v)
	case float64:
		return int(v)
	case json.Number:
		if i, err := v.Int64(); err == nil {
			return int(i)
		}
		f, _ := v.Float64()
		return int(f)
	}
	return 0
}

// Float returns the field as a float64 (0 when absent or not a number).
func (s State) Float(key string) float64 {
	f, _ := toFloat(s[key])
	return f
}

// Bool returns the field as a bool (false when absent or not a boolean).
func (s State) Bool(key string) bool {
	v, _ := s[key].(bool)
	return v
}

// List returns the field as a list (nil when absent or not a list).
func (s State) List(key string) []any {
	v, _ := s[key].([]any)
	return v
}

// Map returns the field as an object (nil when absent or not an object).
func (s State) Map(key string) map[string]any {
	v, _ := s[key].(map[string]any)
	return v
}

func toFloat(v any) (float64, bool) {
	switch n := v.(type) {
	case int:
		return float64(n), true
	case int64:
		return float64(n), true
	case float64:
		return n, true
	case json.Number:
		f, err := n.Float64()
		return f, err == nil
	}
	return 0, false
}

func isInteger(v any) bool {
	switch n := v.(type) {
	case int, int64:
		return true
	case float64:
		return n == math.Trunc(n) && !math.IsInf(n, 0)
	case json.Number:
		_, err := n.Int64()
		return err == nil
	}
	return false
}

// matches reports whether v has type t (with element type items).
func matches(t Type, items *Item, v any) bool {
	switch t {
	case TypeString:
		_, ok := v.(string)
		return ok
	case TypeInteger:
		return isInteger(v)
	case TypeNumber:
		_, ok := toFloat(v)
		return ok
	case TypeBoolean:
		_, ok := v.(bool)
		return ok
	case TypeObject:
		_, ok := v.(map[string]any)
		return ok
	case TypeArray:
		list, ok := v.([]any)
		if !ok {
			return false
		}
		if items != nil {
			for _, x := range list {
				if !matches(items.Type, items.Items, x) {
					return false
				}
			}
		}
		return true
	case TypeMessages:
		list, ok := v.([]any)
		if !ok {
			return false
		}
		for _, x := range list {
			if !isMessage(x) {
				return false
			}
		}
		return true
	}
	return false
}

func isMessage(v any) bool {
	m, ok := v.(map[string]any)
	if !ok || len(m) != 2 {
		return false
	}
	_, role := m["role"].(string)
	_, content := m["content"].(string)
	return role && content
}

func describe(f Field) string {
	if f.Type == TypeArray && f.Items != nil {
		return "array of " + describe(Field{Type: f.Items.Type, Items: f.Items.Items})
	}
	if f.Type == TypeMessages {
		return "messages (a list of {role, content})"
	}
	return f.Type.String()
}

// A Schema is the state schema of one graph: the document's own (schema) or
// the child graph of a subgraph node, which validates and merges its own
// state.
type Schema struct {
	fields []Field
	// index maps a field name to its position in fields.
	index map[string]int
}

func NewSchema(fields []Field) *Schema {
	index := make(map[string]int, len(fields))
	for i, f := range fields {
		index[f.Name] = i
	}
	return &Schema{fields: fields, index: index}
}

// schema is the document's own graph's (Register sets it).
var schema = NewSchema(nil)

// Fields are the state fields of the document's own graph, in declaration
// order (the state schema published at /mcp).
func Fields() []Field { return schema.fields }

func (sc *Schema) field(name string) (Field, bool) {
	i, ok := sc.index[name]
	if !ok {
		return Field{}, false
	}
	return sc.fields[i], true
}

// sortedKeys lists a map's keys in order, so errors are deterministic.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// NewState validates a request's state and applies the declared defaults.
// The input map becomes the state: callers hand over a map of their own (a
// parsed request's, a copy), which saves a copy on every run.
func NewState(input map[string]any) (State, error) { return schema.newState(input) }

// newState validates a state and applies the declared defaults, in input
// itself. Unknown fields are reported first, then wrong types, then missing
// required fields.
func (sc *Schema) newState(input map[string]any) (State, error) {
	known := 0
	for _, f := range sc.fields {
		if _, ok := input[f.Name]; ok {
			known++
		}
	}
	if known != len(input) {
		for _, k := range sortedKeys(input) {
			if _, ok := sc.index[k]; !ok {
				return nil, invalidState(k, fmt.Sprintf("unknown state field %q", k))
			}
		}
	}
	for _, f := range sc.fields {
		v, ok := input[f.Name]
		switch {
		case ok && v != nil:
			if !matches(f.Type, f.Items, v) {
				return nil, invalidState(f.Name, fmt.Sprintf("state field %q must be %s", f.Name, describe(f)))
			}
			if err := f.checkSchema(v, "state field"); err != nil {
				return nil, err
			}
		case f.Default != nil:
			input[f.Name] = f.Default()
		default:
			input[f.Name] = nil
		}
	}
	for _, f := range sc.fields {
		if f.Required && input[f.Name] == nil {
			return nil, invalidState(f.Name, fmt.Sprintf("required state field %q is missing", f.Name))
		}
	}
	return State(input), nil
}

// checkSchema is the 422 of a value of the field (what: "state field", or
// what else the value is) that does not match the field's Schema, with
// details.path; nil when it matches or the field has none.
func (f Field) checkSchema(v any, what string) error {
	if f.Schema == nil {
		return nil
	}
	miss := CheckSchema(f.Schema, v)
	if miss == nil {
		return nil
	}
	e := invalidState(f.Name, fmt.Sprintf("%s %q does not match its schema at \"%s\": %s", what, f.Name, miss.Path, miss.Problem))
	e.Details["path"] = miss.Path
	return e
}

// Replace marks a patch value that replaces an append field's list instead
// of extending it (an LLM node with replaceMessages, for one).
type Replace struct{ Value any }

// apply merges a node's patch into the state, honouring each field's reducer.
func (sc *Schema) apply(st State, patch State, node string) error {
	if len(patch) == 1 {
		for k, v := range patch {
			return sc.applyOne(st, k, v, node)
		}
	}
	for _, k := range sortedKeys(patch) {
		if err := sc.applyOne(st, k, patch[k], node); err != nil {
			return err
		}
	}
	return nil
}

// writes are the fields a branch wrote: every key of a patch applied to its
// state, true once a Replace value was written to it. Only the branch's own
// goroutine records into it (its steps run one after another).
type writes map[string]bool

type writesKey struct{}

// writesOf is the writes of the parallel branch ctx belongs to (the
// innermost); nil outside branches.
func writesOf(ctx context.Context) writes {
	w, _ := ctx.Value(writesKey{}).(writes)
	return w
}

// applyTracked applies a step's patch and, in a branch, records what it
// wrote: a nested parallel's merged patch is one patch of its enclosing
// branch.
func (sc *Schema) applyTracked(ctx context.Context, st State, patch State, node string) error {
	if err := sc.apply(st, patch, node); err != nil {
		return err
	}
	if w := writesOf(ctx); w != nil {
		for k, v := range patch {
			_, replaced := v.(Replace)
			w[k] = w[k] || replaced
		}
	}
	return nil
}

func (sc *Schema) applyOne(st State, k string, v any, node string) error {
	f, ok := sc.field(k)
	if !ok {
		return nodeError(node, fmt.Sprintf("node %q returned unknown state field %q", node, k))
	}
	if r, ok := v.(Replace); ok {
		v = r.Value
	} else if f.Append {
		list, isList := v.([]any)
		if !isList {
			list = []any{v}
		}
		current, _ := st[k].([]any)
		merged := make([]any, 0, len(current)+len(list))
		merged = append(append(merged, current...), list...)
		v = merged
	}
	if v != nil && !matches(f.Type, f.Items, v) {
		return nodeError(node, fmt.Sprintf("node %q wrote a value that is not %s to %q", node, describe(f), k))
	}
	st[k] = v
	return nil
}

// deepCopy copies a state value: maps and lists are the only containers a
// state holds (matches refuses others), every other value is immutable. A
// nil container stays nil, which JSON writes as null.
func deepCopy(v any) any {
	switch x := v.(type) {
	case map[string]any:
		if x == nil {
			return x
		}
		c := make(map[string]any, len(x))
		for k, e := range x {
			c[k] = deepCopy(e)
		}
		return c
	case []any:
		if x == nil {
			return x
		}
		c := make([]any, len(x))
		for i, e := range x {
			c[i] = deepCopy(e)
		}
		return c
	}
	return v
}
