package graph

import (
	"encoding/json"
	"sort"
	"strconv"
	"unicode/utf8"
)

// sortedFields lists the state fields by name with their JSON keys, so a
// state is encoded in a fixed order without sorting map keys per request.
var sortedFields = func() []struct{ name, key string } {
	out := make([]struct{ name, key string }, len(fields))
	for i, f := range fields {
		key, _ := json.Marshal(f.Name)
		out[i] = struct{ name, key string }{f.Name, string(key) + ":"}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}()

// AppendJSON appends the state as a JSON object (fields sorted by name).
// It writes the common scalar types directly and leaves the rest to
// encoding/json, whose output it matches.
func AppendJSON(buf []byte, st State) ([]byte, error) {
	buf = append(buf, '{')
	for i, f := range sortedFields {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = append(buf, f.key...)
		var err error
		if buf, err = appendValue(buf, st[f.name]); err != nil {
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
