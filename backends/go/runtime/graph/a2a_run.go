package graph

import (
	"context"
	"fmt"
	"net/http"
	"reflect"
)

// The graph published as an A2A agent (settings.a2a): a message's text in,
// the reply's text out, as python-svc's skills run the graph
// (sdk/python/svc/a2a/skills.py). The server's side is package a2a's
// (publish.go), which calls RunA2A for each message.

// A2AInput says where a message's text goes: the field Name, as the
// string itself or, when Messages, as a user message appended to it.
type A2AInput struct {
	Name     string
	Messages bool
}

// RunA2A runs the graph as /invoke runs {"state": ...} on the state a
// message's text makes, and returns the reply: the field the run wrote
// last (from the node patches in order, skipping writes that left the
// field as the input had it), as text: every node of a published graph
// reports its patch, so every change of the state is in them. Errors are
// *Error, as Invoke's.
func RunA2A(ctx context.Context, in A2AInput, text string) (string, error) {
	input := map[string]any{in.Name: text}
	if in.Messages {
		input[in.Name] = []any{map[string]any{"role": "user", "content": text}}
	}
	st, err := NewState(input)
	if err != nil {
		return "", err
	}
	before := deepCopy(map[string]any(st)).(map[string]any)
	var written []string
	observe := func(ev Event) {
		patch, _ := ev.Data["patch"].(State)
		if ev.Type != "node_finished" || len(patch) == 0 {
			return
		}
		// A patch's own keys in the order the schema declares them (a Go
		// map keeps none).
		for _, f := range schema.fields {
			if _, ok := patch[f.Name]; !ok {
				continue
			}
			for i, w := range written {
				if w == f.Name {
					written = append(written[:i], written[i+1:]...)
					break
				}
			}
			written = append(written, f.Name)
		}
	}
	out, _, err := runWhole(ctx, st, observe)
	if err != nil {
		return "", err
	}
	field := ""
	for i := len(written) - 1; i >= 0 && field == ""; i-- {
		if v, ok := out[written[i]]; ok && !reflect.DeepEqual(v, before[written[i]]) {
			field = written[i]
		}
	}
	if field == "" {
		return "", &Error{Status: http.StatusInternalServerError, Code: "execution_error",
			Message: "the run changed no state field to answer with"}
	}
	value := out[field]
	if value == nil {
		return "", &Error{Status: http.StatusInternalServerError, Code: "execution_error",
			Message: fmt.Sprintf("the run left the reply field %q empty", field)}
	}
	return a2aReplyText(value)
}

// a2aReplyText is a state value as reply text: text as it is, a messages
// list as its last message's content, anything else as JSON written as
// python-svc writes it.
func a2aReplyText(value any) (string, error) {
	if s, ok := value.(string); ok {
		return s, nil
	}
	if list, ok := value.([]any); ok && len(list) > 0 {
		if last, ok := list[len(list)-1].(map[string]any); ok {
			if content, ok := last["content"].(string); ok {
				if _, ok := last["role"]; ok {
					return content, nil
				}
			}
		}
	}
	text, err := pyJSON(value)
	if err != nil {
		return "", &Error{Status: http.StatusInternalServerError, Code: "execution_error",
			Message: "the reply cannot be encoded as JSON"}
	}
	return text, nil
}

// A2AErrorData is the metadata of a failed run's JSON-RPC error: the
// contract's code, and each detail as text (JSON when it is not text).
func A2AErrorData(e *Error) map[string]string {
	data := map[string]string{"code": e.Code}
	for k, v := range e.Details {
		if s, ok := v.(string); ok {
			data[k] = s
		} else if text, err := pyJSON(v); err == nil {
			data[k] = text
		}
	}
	return data
}
