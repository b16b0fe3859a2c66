package graph

import (
	"context"
	"fmt"
)

// Structured output (docs/ir-reference.md, "Structured output"): an llm
// node whose output field has properties asks the model for one JSON
// object of the field's schema, checks the reply (schema.go) and asks once
// more when it does not match.

// ChatJSON sends the non-empty prompt parts asking for a JSON object that
// matches schema (a JSON Schema object of the compiler's subset), and
// returns the object. A reply that does not match is asked for once more,
// the same request with the reply and what is wrong with it as two more
// messages; a second one that does not match fails the run (502
// upstream_error, reason invalid_output, with the path, the problem and
// the model that answered). Each ask is a model call of its own (retries,
// fallbacks, usage, budget), each attempt in its model's provider's form;
// it is never streamed.
func ChatJSON(ctx context.Context, node string, m Model, system, user string, schema map[string]any) (map[string]any, error) {
	messages := prompt(system, user)
	text, _, err := askStructured(ctx, node, m, messages, schema)
	if err != nil {
		return nil, err
	}
	out, miss := parseStructured(schema, text)
	if miss == nil {
		return out, nil
	}
	messages = append(messages,
		map[string]any{"role": "assistant", "content": text},
		map[string]any{"role": "user", "content": fmt.Sprintf("The reply did not match the JSON schema at \"%s\": %s. "+
			"Answer again with only JSON that matches the schema.", miss.Path, miss.Problem)})
	text, model, err := askStructured(ctx, node, m, messages, schema)
	if err != nil {
		return nil, err
	}
	if out, miss = parseStructured(schema, text); miss == nil {
		return out, nil
	}
	e := UpstreamError(node, ReasonInvalidOutput, fmt.Sprintf("node %q: the model's reply did not match the output schema at \"%s\": %s",
		node, miss.Path, miss.Problem))
	e.Details["path"], e.Details["problem"], e.Details["model"] = miss.Path, miss.Problem, model
	return nil, e
}

// askStructured is one model call of ChatJSON: it returns the reply's
// JSON text and the name of the model that gave it.
func askStructured(ctx context.Context, node string, m Model, messages []any, schema map[string]any) (text, model string, err error) {
	err = callModel(ctx, node, m, messages, nil, schema, func(ctx context.Context, req request) (tokens, error) {
		reply, err := modelCall(ctx, node, req)
		if err != nil {
			return tokens{}, err
		}
		if text, err = structuredText(node, reply); err != nil {
			return tokens{}, err
		}
		model, _ = req.body["model"].(string)
		return replyTokens(reply), nil
	})
	return text, model, err
}

// structuredText is the JSON text of a structured reply: the arguments of
// its call of the structured_output tool (a Messages API reply, whose
// tool_use input anthropicReply wrote as JSON), else its content. A reply
// with neither fails the call as invalid_json, as Chat's does.
func structuredText(node string, reply any) (string, error) {
	msg, ok := firstMessage(reply)
	if !ok {
		return "", UpstreamError(node, ReasonInvalidJSON, fmt.Sprintf("node %q: the model reply has no choices[0].message", node))
	}
	calls, _ := msg["tool_calls"].([]any)
	for _, c := range calls {
		call, _ := c.(map[string]any)
		fn, _ := call["function"].(map[string]any)
		if arguments, ok := fn["arguments"].(string); ok && fn["name"] == structuredOutput {
			return arguments, nil
		}
	}
	content, ok := msg["content"].(string)
	if !ok {
		return "", UpstreamError(node, ReasonInvalidJSON, fmt.Sprintf("node %q: the model reply has no choices[0].message.content", node))
	}
	return content, nil
}

// parseStructured is a reply's text parsed as JSON and checked against
// schema: the object, or the first mismatch ("not JSON" at "" for text
// that is not JSON).
func parseStructured(schema map[string]any, text string) (map[string]any, *SchemaMismatch) {
	v, err := decodeJSON(text)
	if err != nil {
		return nil, &SchemaMismatch{Path: "", Problem: "not JSON"}
	}
	if miss := CheckSchema(schema, v); miss != nil {
		return nil, miss
	}
	// The top level of an output schema is an object.
	out, _ := v.(map[string]any)
	return out, nil
}
