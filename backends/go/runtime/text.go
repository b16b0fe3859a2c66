package graph

import (
	"encoding/json"
	"strings"
)

// text renders a state value inside a template: strings as they are,
// absent values as nothing, everything else as JSON.
func text(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case json.Number:
		return x.String()
	}
	b, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	return string(b)
}

// concat joins rendered template parts.
func concat(parts ...string) string {
	return strings.Join(parts, "")
}

// assistantMessage is text written to a messages field: one assistant message.
func assistantMessage(text string) []any {
	return []any{map[string]any{"role": "assistant", "content": text}}
}
