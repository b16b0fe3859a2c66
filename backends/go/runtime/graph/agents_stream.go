package graph

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
)

// The graph has settings.streaming and runs agents: every model call of a
// worker's tool-calling loop streams (docs/http-contract.md, "Agents and
// tool-calling llm nodes"). Routing and intent calls stay whole.
func init() { chatTurnStreamed = chatTurnStream }

// chatTurnStream is chatTurn for a streamed run. The reply's text goes to r
// as it arrives until its first tool-call piece, when the tokens of the
// node standing are discarded (tool_calls); the message returned is what
// choices[0].message of the whole reply would have been. An attempt that
// fails once its text reached r is not tried again.
func chatTurnStream(ctx context.Context, name string, m Model, messages, tools []any, r *replies) (map[string]any, error) {
	var msg map[string]any
	err := callModel(ctx, name, m, messages, tools, nil, func(ctx context.Context, req request) (tokens, error) {
		var t streamedTurn
		sent := false
		used, err := streamChunks(ctx, name, req, func(data []byte) error {
			content, startsCalling, err := t.add(data)
			if err != nil {
				return err
			}
			if t.size > MaxUpstreamBytes {
				return UpstreamError(name, ReasonTooLarge,
					fmt.Sprintf("node %q: the model's reply is larger than %d bytes", name, MaxUpstreamBytes))
			}
			if startsCalling {
				r.discard("tool_calls")
			}
			if !t.calling && content != "" {
				r.token(content)
				sent = true
			}
			return nil
		})
		if err != nil && sent {
			return tokens{}, final{err}
		}
		if err != nil {
			return tokens{}, err
		}
		msg = t.message()
		return used, nil
	})
	return msg, err
}

// A turnChunk is one chunk of a streamed turn. Pointers tell null and
// absent (the same) from a value; a value of another type fails to
// decode. Only choices[0] is read, so the others are not decoded.
type turnChunk struct {
	Choices []json.RawMessage `json:"choices"`
}

type turnChoice struct {
	Delta *struct {
		Content   *string          `json:"content"`
		ToolCalls []*toolCallPiece `json:"tool_calls"`
	} `json:"delta"`
}

type toolCallPiece struct {
	// Index is an int32, so a float, a bool or an index past 2^31-1 fails.
	Index    *int32  `json:"index"`
	ID       *string `json:"id"`
	Type     *string `json:"type"`
	Function *struct {
		Name      *string `json:"name"`
		Arguments *string `json:"arguments"`
	} `json:"function"`
}

// streamedTurn puts a streamed reply back together.
type streamedTurn struct {
	content    strings.Builder
	hasContent bool
	calls      map[int32]*assembledCall
	// size is the bytes of content and of every tool-call piece's text.
	size int
	// calling: a tool-call piece came; the text after it is not sent.
	calling bool
}

// assembledCall is one tool call; a field is nil until a piece carries it
// (id and type: a non-empty value).
type assembledCall struct {
	id, typ         *string
	name, arguments *strings.Builder
}

var errNotAChunk = errors.New("not a chat-completion chunk")

// add takes one chunk: the content to send (when not calling) and whether
// this chunk's pieces are the reply's first tool-call pieces. An error
// means the chunk is not a chat-completion chunk.
func (t *streamedTurn) add(data []byte) (content string, startsCalling bool, err error) {
	if string(data) == "null" {
		return "", false, errNotAChunk
	}
	var chunk turnChunk
	if err := json.Unmarshal(data, &chunk); err != nil {
		return "", false, err
	}
	if len(chunk.Choices) == 0 {
		return "", false, nil
	}
	var choice *turnChoice
	if err := json.Unmarshal(chunk.Choices[0], &choice); err != nil {
		return "", false, err
	}
	if choice == nil || choice.Delta == nil {
		return "", false, nil
	}
	// An empty piece is no content, as python-svc's: a reply whose pieces
	// are all empty has a null content, as whole tool-calling replies do.
	if c := choice.Delta.Content; c != nil && *c != "" {
		t.content.WriteString(*c)
		t.hasContent = true
		t.size += len(*c)
		content = *c
	}
	for i, p := range choice.Delta.ToolCalls {
		if p == nil {
			continue
		}
		// A piece without an index is a whole call at its position.
		index := int32(i)
		if p.Index != nil {
			if index = *p.Index; index < 0 {
				return "", false, errNotAChunk
			}
		}
		t.addPiece(index, p)
		if !t.calling {
			t.calling, startsCalling = true, true
		}
	}
	return content, startsCalling, nil
}

func (t *streamedTurn) addPiece(index int32, p *toolCallPiece) {
	if t.calls == nil {
		t.calls = map[int32]*assembledCall{}
	}
	c := t.calls[index]
	if c == nil {
		c = &assembledCall{}
		t.calls[index] = c
	}
	keepFirst(&c.id, p.ID)
	keepFirst(&c.typ, p.Type)
	t.size += pieceLen(p.ID) + pieceLen(p.Type)
	if fn := p.Function; fn != nil {
		c.name = appendPiece(c.name, fn.Name)
		c.arguments = appendPiece(c.arguments, fn.Arguments)
		t.size += pieceLen(fn.Name) + pieceLen(fn.Arguments)
	}
}

// keepFirst keeps the first non-empty value of a field (nil while none
// came).
func keepFirst(kept **string, piece *string) {
	if *kept == nil && piece != nil && *piece != "" {
		*kept = piece
	}
}

// appendPiece appends a piece's text to a field, which exists once a piece
// carried it.
func appendPiece(b *strings.Builder, piece *string) *strings.Builder {
	if piece == nil {
		return b
	}
	if b == nil {
		b = &strings.Builder{}
	}
	b.WriteString(*piece)
	return b
}

func pieceLen(s *string) int {
	if s == nil {
		return 0
	}
	return len(*s)
}

// message is the reply's choices[0].message: the content (nil when no
// piece had text), and tool_calls in index order when any came, each with
// the type "function" unless a piece named one.
func (t *streamedTurn) message() map[string]any {
	msg := map[string]any{"role": "assistant", "content": nil}
	if t.hasContent {
		msg["content"] = t.content.String()
	}
	if len(t.calls) == 0 {
		return msg
	}
	indexes := make([]int32, 0, len(t.calls))
	for i := range t.calls {
		indexes = append(indexes, i)
	}
	sort.Slice(indexes, func(a, b int) bool { return indexes[a] < indexes[b] })
	calls := make([]any, 0, len(indexes))
	for _, i := range indexes {
		c := t.calls[i]
		fn := map[string]any{}
		if c.name != nil {
			fn["name"] = c.name.String()
		}
		if c.arguments != nil {
			fn["arguments"] = c.arguments.String()
		}
		call := map[string]any{"type": "function", "function": fn}
		if c.typ != nil {
			call["type"] = *c.typ
		}
		if c.id != nil {
			call["id"] = *c.id
		}
		calls = append(calls, call)
	}
	msg["tool_calls"] = calls
	return msg
}
