package graph

import (
	"bytes"
	"encoding/json"
	"math"
	"math/big"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Text renders a state value inside a template: strings as they are,
// absent values as nothing, everything else as JSON in the text form that
// every target writes ("Templates" in the IR reference): no spaces, object
// keys sorted by code point, only what JSON requires escaped, integers with
// all their digits and other numbers as JavaScript writes them. A value
// that JSON cannot hold (NaN, a channel) renders as nothing.
func Text(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	}
	b, ok := appendText(nil, v, 0)
	if !ok {
		return ""
	}
	return string(b)
}

// FillFields fills each {{field}} of a template written in a connector's
// config with the state value as text renders it; an unclosed {{ is text.
// Connectors call it (marketplace/README.md, "Runtime helpers").
func FillFields(template string, state State) string {
	var b strings.Builder
	rest := template
	for {
		start := strings.Index(rest, "{{")
		if start < 0 {
			break
		}
		end := strings.Index(rest[start+2:], "}}")
		if end < 0 {
			break
		}
		b.WriteString(rest[:start])
		b.WriteString(Text(state[strings.TrimSpace(rest[start+2:start+2+end])]))
		rest = rest[start+2+end+2:]
	}
	b.WriteString(rest)
	return b.String()
}

// maxTextDepth bounds the nesting text follows (a cycle in a value that
// node code built); a request nests at most 128 levels.
const maxTextDepth = 1000

func appendText(buf []byte, v any, depth int) ([]byte, bool) {
	if depth > maxTextDepth {
		return buf, false
	}
	switch x := v.(type) {
	case nil:
		return append(buf, "null"...), true
	case bool:
		return strconv.AppendBool(buf, x), true
	case string:
		return appendTextString(buf, x), true
	case json.Number:
		return appendTextNumber(buf, string(x))
	case float64:
		return appendTextFloat(buf, x, 64)
	case float32:
		return appendTextFloat(buf, float64(x), 32)
	case int:
		return strconv.AppendInt(buf, int64(x), 10), true
	case int64:
		return strconv.AppendInt(buf, x, 10), true
	case int32:
		return strconv.AppendInt(buf, int64(x), 10), true
	case uint64:
		return strconv.AppendUint(buf, x, 10), true
	case []any:
		buf = append(buf, '[')
		for i, item := range x {
			if i > 0 {
				buf = append(buf, ',')
			}
			var ok bool
			if buf, ok = appendText(buf, item, depth+1); !ok {
				return buf, false
			}
		}
		return append(buf, ']'), true
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		// Byte order of UTF-8 is code point order.
		sort.Strings(keys)
		buf = append(buf, '{')
		for i, k := range keys {
			if i > 0 {
				buf = append(buf, ',')
			}
			buf = appendTextString(buf, k)
			buf = append(buf, ':')
			var ok bool
			if buf, ok = appendText(buf, x[k], depth+1); !ok {
				return buf, false
			}
		}
		return append(buf, '}'), true
	}
	// Any other Go value (State, []string, a struct, *big.Int, ...) as
	// encoding/json sees it, then in the form above.
	b, err := json.Marshal(v)
	if err != nil {
		return buf, false
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var plain any
	if dec.Decode(&plain) != nil {
		return buf, false
	}
	return appendText(buf, plain, depth+1)
}

// appendTextNumber writes a number read from JSON: without a fraction or an
// exponent it is an integer, written with all its digits (-0 as 0); any
// other number is the float64 it reads as.
func appendTextNumber(buf []byte, n string) ([]byte, bool) {
	if strings.ContainsAny(n, ".eE") {
		f, err := strconv.ParseFloat(n, 64)
		if err != nil {
			return buf, false
		}
		return appendTextFloat(buf, f, 64)
	}
	if i, err := strconv.ParseInt(n, 10, 64); err == nil {
		return strconv.AppendInt(buf, i, 10), true
	}
	i, ok := new(big.Int).SetString(n, 10)
	if !ok {
		return buf, false
	}
	return i.Append(buf, 10), true
}

// appendTextFloat writes a float as JavaScript's Number::toString does (as
// encoding/json does): the shortest digits that read back as the same
// value, without an exponent from 1e-6 up to 1e21 (so 2.0 is 2), else with
// one (1e-7, 1e+21); -0 is 0.
func appendTextFloat(buf []byte, f float64, bits int) ([]byte, bool) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return buf, false
	}
	if f == 0 {
		return append(buf, '0'), true
	}
	format, abs := byte('f'), math.Abs(f)
	if bits == 32 && (float32(abs) < 1e-6 || float32(abs) >= 1e21) ||
		bits == 64 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	buf = strconv.AppendFloat(buf, f, format, -1, bits)
	if format == 'e' {
		// 1e-07 to 1e-7
		if n := len(buf); n >= 4 && buf[n-4] == 'e' && buf[n-3] == '-' && buf[n-2] == '0' {
			buf[n-2] = buf[n-1]
			buf = buf[:n-1]
		}
	}
	return buf, true
}

// appendTextString writes s between quotes, escaping only what JSON
// requires: the quote, the backslash and U+0000 to U+001F (\b, \f, \n, \r,
// \t, else \u00XX in lower case). Bytes that are not UTF-8 become U+FFFD.
func appendTextString(buf []byte, s string) []byte {
	const hex = "0123456789abcdef"
	buf = append(buf, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 {
				buf = append(buf, s[start:i]...)
				buf = append(buf, "\ufffd"...)
				start = i + 1
			}
			i += size
			continue
		}
		if c >= 0x20 && c != '"' && c != '\\' {
			i++
			continue
		}
		buf = append(buf, s[start:i]...)
		switch c {
		case '"', '\\':
			buf = append(buf, '\\', c)
		case '\b':
			buf = append(buf, '\\', 'b')
		case '\f':
			buf = append(buf, '\\', 'f')
		case '\n':
			buf = append(buf, '\\', 'n')
		case '\r':
			buf = append(buf, '\\', 'r')
		case '\t':
			buf = append(buf, '\\', 't')
		default:
			buf = append(buf, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
		}
		i++
		start = i
	}
	buf = append(buf, s[start:]...)
	return append(buf, '"')
}

// Concat joins rendered template parts.
func Concat(parts ...string) string {
	return strings.Join(parts, "")
}

// AssistantMessage is text written to a messages field: one assistant message.
func AssistantMessage(text string) []any {
	return []any{map[string]any{"role": "assistant", "content": text}}
}
