package graph

import (
	"context"
	"strings"
)

// An Intent is one intent of an intent_classifier node.
type Intent struct {
	Name, Description string
	Examples          []string
}

// ClassifyIntent is an intent_classifier node: one model call whose system
// prompt lists the intents, with content as the user message (sent even
// when empty). The reply, trimmed and lower-cased as Python does, is
// matched against the intents' names (trimmed and lower-cased; the first
// intent of a key wins) and gives that intent's name as declared; any
// other reply gives fallback, never an error. The system prompt is, one
// line each:
//
//	Classify the user's message into exactly one of these intents:
//	- <name>: <description>        ("- <name>" without a description)
//	  Examples: "<ex1>"; "<ex2>"   (only with examples; each as pyJSON)
//	Answer with the intent's name only. If none of them fits, answer "<fallback>".
//
// where the fallback is written as Python's json.dumps with its default
// ensure_ascii (non-ASCII as \uxxxx), unlike the examples.
func ClassifyIntent(ctx context.Context, node string, m Model, intents []Intent, content, fallback string) (string, error) {
	out, err := classifyOnce(ctx, node, m, intents, content, fallback)
	return out, runCut(ctx, err)
}

func classifyOnce(ctx context.Context, node string, m Model, intents []Intent, content, fallback string) (string, error) {
	names := map[string]string{}
	lines := []string{"Classify the user's message into exactly one of these intents:"}
	for _, in := range intents {
		key := pyLower(pyStrip(in.Name))
		if _, seen := names[key]; !seen {
			names[key] = in.Name
		}
		if in.Description != "" {
			lines = append(lines, "- "+in.Name+": "+in.Description)
		} else {
			lines = append(lines, "- "+in.Name)
		}
		if len(in.Examples) > 0 {
			quoted := make([]string, len(in.Examples))
			for i, e := range in.Examples {
				quoted[i], _ = pyJSON(e)
			}
			lines = append(lines, "  Examples: "+strings.Join(quoted, "; "))
		}
	}
	quotedFallback, _ := pyJSONASCII(fallback)
	lines = append(lines, "Answer with the intent's name only. If none of them fits, answer "+quotedFallback+".")
	messages := []any{
		map[string]any{"role": "system", "content": strings.Join(lines, "\n")},
		map[string]any{"role": "user", "content": content},
	}
	msg, err := chatMessage(ctx, node, m, messages, nil, true)
	if err != nil {
		return "", err
	}
	reply := msg["content"].(string) // wantText: a string
	if name, ok := names[pyLower(pyStrip(reply))]; ok {
		return name, nil
	}
	return fallback, nil
}
