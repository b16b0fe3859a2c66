package graph

// The svc/json-path connector (marketplace/json-path): a node copies one
// value out of a JSON state field into another field. The path was parsed
// when the graph compiled; steps are keys (string) and indexes (int,
// negative from the end).

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// jsonPathExtract runs one json-path node. fallback is the default as JSON
// text ("" when the node has none): it is written when the path does not
// resolve; without it the node fails, naming the step where it stopped.
func jsonPathExtract(node string, state State, from string, steps []any, outputKey, fallback string) (State, error) {
	value, ok := state[from]
	stop := -1
	if !ok {
		stop = 0
	}
	for i := 0; stop < 0 && i < len(steps); i++ {
		var found bool
		value, found = jsonPathStep(value, steps[i])
		if !found {
			stop = i + 1
		}
	}
	if stop < 0 {
		return State{outputKey: value}, nil
	}
	if fallback != "" {
		dec := json.NewDecoder(bytes.NewReader([]byte(fallback)))
		dec.UseNumber() // as request bodies are decoded
		var v any
		if err := dec.Decode(&v); err != nil {
			return nil, fmt.Errorf("node %q: the default is not JSON: %v", node, err)
		}
		return State{outputKey: v}, nil
	}
	if stop == 0 {
		return nil, fmt.Errorf("node %q: the state field %q is not set", node, from)
	}
	return nil, fmt.Errorf("node %q: %s of %q has no value at %s", node,
		jsonPathDescribe(steps[:stop-1]), from, jsonPathDescribe(steps[:stop]))
}

// jsonPathStep is value[step]: a key of an object or an index of a list.
func jsonPathStep(value, step any) (any, bool) {
	switch s := step.(type) {
	case string:
		switch m := value.(type) {
		case map[string]any:
			v, ok := m[s]
			return v, ok
		case State:
			v, ok := m[s]
			return v, ok
		}
	case int:
		list, ok := value.([]any)
		if !ok {
			return nil, false
		}
		if s < 0 {
			s += len(list)
		}
		if s < 0 || s >= len(list) {
			return nil, false
		}
		return list[s], true
	}
	return nil, false
}

// jsonPathDescribe writes steps as a path: $.items[0]["a b"].
func jsonPathDescribe(steps []any) string {
	var b strings.Builder
	b.WriteString("$")
	for _, step := range steps {
		switch s := step.(type) {
		case int:
			fmt.Fprintf(&b, "[%d]", s)
		case string:
			if jsonPathPlain(s) {
				b.WriteString("." + s)
			} else {
				fmt.Fprintf(&b, "[%q]", s)
			}
		}
	}
	return b.String()
}

func jsonPathPlain(s string) bool {
	for i, r := range s {
		letter := r == '_' || r == '$' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z')
		if !letter && (i == 0 || !(r == '-' || (r >= '0' && r <= '9'))) {
			return false
		}
	}
	return s != ""
}
