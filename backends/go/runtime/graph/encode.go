package graph

import (
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"
)

// fieldKeys holds each state field's JSON key, in the order the state
// declares them, so an answer lists its fields as python-svc and java-svc
// do, without sorting map keys per request (Register sets it).
var fieldKeys []string

// jsonKeys is each field's JSON key followed by a colon.
func jsonKeys(fields []Field) []string {
	out := make([]string, len(fields))
	for i, f := range fields {
		key, _ := json.Marshal(f.Name)
		out[i] = string(key) + ":"
	}
	return out
}

// AppendJSON appends the state as a JSON object, its fields in declared
// order (an object inside a field has its keys sorted, as encoding/json
// writes a map). It writes the common scalar types directly and leaves
// the rest to encoding/json, whose output it matches.
func AppendJSON(buf []byte, st State) ([]byte, error) {
	buf = append(buf, '{')
	for i, f := range schema.fields {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = append(buf, fieldKeys[i]...)
		var err error
		if buf, err = appendValue(buf, st[f.Name]); err != nil {
			return nil, err
		}
	}
	return append(buf, '}'), nil
}

func appendValue(buf []byte, v any) ([]byte, error) {
	switch x := v.(type) {
	case nil:
		return append(buf, "null"...), nil
	case bool:
		return strconv.AppendBool(buf, x), nil
	case string:
		if plain(x) {
			buf = append(buf, '"')
			buf = append(buf, x...)
			return append(buf, '"'), nil
		}
	case int:
		return strconv.AppendInt(buf, int64(x), 10), nil
	case int64:
		return strconv.AppendInt(buf, x, 10), nil
	case json.Number:
		if x != "" {
			return append(buf, x...), nil
		}
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return append(buf, b...), nil
}

// plain reports whether encoding/json would write s between quotes as is.
func plain(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' || c >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// decodeJSON parses one JSON text as Python's json.loads does (numbers as
// json.Number, the last of repeated keys).
func decodeJSON(s string) (any, error) {
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("extra data")
	}
	return v, nil
}
