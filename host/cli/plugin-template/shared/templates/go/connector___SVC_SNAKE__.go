package graph

import "strings"

// connector__SVC_CAMEL__Render fills the {{field}} references of a text from the
// state (the __SVC_ID__ connector).
func connector__SVC_CAMEL__Render(template string, state State) string {
	var b strings.Builder
	rest := template
	for {
		start := strings.Index(rest, "{{")
		if start < 0 {
			break
		}
		end := strings.Index(rest[start:], "}}")
		if end < 0 {
			break
		}
		b.WriteString(rest[:start])
		b.WriteString(text(state[strings.TrimSpace(rest[start+2:start+end])]))
		rest = rest[start+end+2:]
	}
	b.WriteString(rest)
	return b.String()
}
