package graph

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The texts agents show a model or write into messages are the ones
// python-svc writes, byte for byte: Python's json.dumps (pyJSON), repr
// (pyRepr), str.strip (pyStrip) and str.lower (pyLower).

// pyJSON writes v as Python's json.dumps(v, ensure_ascii=False) does with
// its default separators: ", " between items, ": " after keys; strings
// escape only the quote, the backslash and U+0000 to U+001F (\b \f \n \r \t,
// else \u00xx in lower case), so <>&, non-ASCII, U+2028/2029 and DEL stay
// raw; integers keep all their digits; floats are written as Python's repr
// (1.0, 1e+16, 1e-05; NaN, Infinity, -Infinity). Go maps have no order, so
// object keys are written sorted by code point (Python keeps the insertion
// order: a model reply's document order, a native tool's literal order).
// The error is Python's TypeError/ValueError text for a value JSON cannot
// hold (a channel, a function, a reference cycle).
func pyJSON(v any) (string, error) {
	b, err := appendPyJSON(nil, v, false, 0)
	return string(b), err
}

// PyJSON is v as Python's json.dumps(v, ensure_ascii=False) writes it
// (pyJSON): package a2a writes a data part of a remote agent's reply so.
func PyJSON(v any) (string, error) { return pyJSON(v) }

// pyJSONASCII is json.dumps(v) with the default ensure_ascii=True: every
// character outside space..~ is escaped as \uxxxx (lower case; a surrogate
// pair above U+FFFF).
func pyJSONASCII(v any) (string, error) {
	b, err := appendPyJSON(nil, v, true, 0)
	return string(b), err
}

// maxPyDepth bounds the nesting pyJSON follows: deeper is taken for a
// reference cycle, which Python reports as one.
const maxPyDepth = 1000

type pyError struct{ msg string }

func (e *pyError) Error() string { return e.msg }

func appendPyJSON(buf []byte, v any, ascii bool, depth int) ([]byte, error) {
	if depth > maxPyDepth {
		return buf, &pyError{"ValueError: Circular reference detected"}
	}
	switch x := v.(type) {
	case nil:
		return append(buf, "null"...), nil
	case bool:
		if x {
			return append(buf, "true"...), nil
		}
		return append(buf, "false"...), nil
	case string:
		return appendPyJSONString(buf, x, ascii), nil
	case json.Number:
		return appendPyNumber(buf, string(x), false), nil
	case float64:
		return appendPyFloat(buf, x, 64, false), nil
	case float32:
		return appendPyFloat(buf, float64(x), 32, false), nil
	case int:
		return strconv.AppendInt(buf, int64(x), 10), nil
	case int8:
		return strconv.AppendInt(buf, int64(x), 10), nil
	case int16:
		return strconv.AppendInt(buf, int64(x), 10), nil
	case int32:
		return strconv.AppendInt(buf, int64(x), 10), nil
	case int64:
		return strconv.AppendInt(buf, x, 10), nil
	case uint:
		return strconv.AppendUint(buf, uint64(x), 10), nil
	case uint8:
		return strconv.AppendUint(buf, uint64(x), 10), nil
	case uint16:
		return strconv.AppendUint(buf, uint64(x), 10), nil
	case uint32:
		return strconv.AppendUint(buf, uint64(x), 10), nil
	case uint64:
		return strconv.AppendUint(buf, x, 10), nil
	case *big.Int:
		if x == nil {
			return append(buf, "null"...), nil
		}
		return x.Append(buf, 10), nil
	case []any:
		if x == nil {
			return append(buf, "null"...), nil
		}
		buf = append(buf, '[')
		for i, item := range x {
			if i > 0 {
				buf = append(buf, ", "...)
			}
			var err error
			if buf, err = appendPyJSON(buf, item, ascii, depth+1); err != nil {
				return buf, err
			}
		}
		return append(buf, ']'), nil
	case State:
		return appendPyObject(buf, x, ascii, depth)
	case map[string]any:
		return appendPyObject(buf, x, ascii, depth)
	}
	// Any other Go value ([]string, map[string]string, a struct, ...) as
	// encoding/json sees it, then in the form above.
	b, err := json.Marshal(v)
	if err != nil {
		return buf, &pyError{fmt.Sprintf("TypeError: Object of type %T is not JSON serializable", v)}
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var plain any
	if err := dec.Decode(&plain); err != nil {
		return buf, &pyError{fmt.Sprintf("TypeError: Object of type %T is not JSON serializable", v)}
	}
	return appendPyJSON(buf, plain, ascii, depth+1)
}

// appendPyObject writes an object with its keys sorted (see pyJSON); a nil
// map is null, as Python's None.
func appendPyObject(buf []byte, m map[string]any, ascii bool, depth int) ([]byte, error) {
	if m == nil {
		return append(buf, "null"...), nil
	}
	// Byte order of UTF-8 is code point order.
	keys := sortedKeys(m)
	buf = append(buf, '{')
	for i, k := range keys {
		if i > 0 {
			buf = append(buf, ", "...)
		}
		buf = appendPyJSONString(buf, k, ascii)
		buf = append(buf, ": "...)
		var err error
		if buf, err = appendPyJSON(buf, m[k], ascii, depth+1); err != nil {
			return buf, err
		}
	}
	return append(buf, '}'), nil
}

// appendPyJSONString writes s as json.dumps does; bytes that are not UTF-8
// become U+FFFD.
func appendPyJSONString(buf []byte, s string, ascii bool) []byte {
	const hex = "0123456789abcdef"
	buf = append(buf, '"')
	for _, r := range s {
		switch r {
		case '"':
			buf = append(buf, '\\', '"')
		case '\\':
			buf = append(buf, '\\', '\\')
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
			switch {
			case r < 0x20 || ascii && r > '~' && r <= 0xFFFF:
				buf = append(buf, '\\', 'u', hex[r>>12&0xF], hex[r>>8&0xF], hex[r>>4&0xF], hex[r&0xF])
			case ascii && r > 0xFFFF:
				r -= 0x10000
				hi, lo := 0xD800+(r>>10), 0xDC00+(r&0x3FF)
				buf = append(buf, '\\', 'u', hex[hi>>12&0xF], hex[hi>>8&0xF], hex[hi>>4&0xF], hex[hi&0xF])
				buf = append(buf, '\\', 'u', hex[lo>>12&0xF], hex[lo>>8&0xF], hex[lo>>4&0xF], hex[lo&0xF])
			default:
				buf = utf8.AppendRune(buf, r)
			}
		}
	}
	return append(buf, '"')
}

// appendPyNumber writes a number read from JSON as Python reads and then
// writes it: without a fraction or an exponent it is an int, with all its
// digits (-0 is 0); any other number is a float (1.50 is 1.5, 1E2 is
// 100.0, 1e400 is Infinity). repr is Python's repr instead of json.dumps
// (inf and nan instead of Infinity and NaN).
func appendPyNumber(buf []byte, n string, repr bool) []byte {
	if strings.ContainsAny(n, ".eE") {
		f, err := strconv.ParseFloat(n, 64)
		if err != nil && !math.IsInf(f, 0) {
			return append(buf, n...)
		}
		return appendPyFloat(buf, f, 64, repr)
	}
	if i, err := strconv.ParseInt(n, 10, 64); err == nil {
		return strconv.AppendInt(buf, i, 10)
	}
	i, ok := new(big.Int).SetString(n, 10)
	if !ok {
		return append(buf, n...)
	}
	return i.Append(buf, 10)
}

// appendPyFloat writes f as Python's float repr: the shortest digits that
// read back as f; with its decimal exponent e in -4 <= e < 16 in fixed
// notation with at least one fraction digit (1.0, 0.0001, -0.0), else as
// d[.ddd]e±XX (1e+16, 1.5e-05). json.dumps writes the non-finite values as
// NaN, Infinity and -Infinity; repr (repr true) as nan, inf and -inf.
func appendPyFloat(buf []byte, f float64, bits int, repr bool) []byte {
	switch {
	case math.IsNaN(f):
		if repr {
			return append(buf, "nan"...)
		}
		return append(buf, "NaN"...)
	case math.IsInf(f, 1):
		if repr {
			return append(buf, "inf"...)
		}
		return append(buf, "Infinity"...)
	case math.IsInf(f, -1):
		if repr {
			return append(buf, "-inf"...)
		}
		return append(buf, "-Infinity"...)
	}
	sci := strconv.FormatFloat(f, 'e', -1, bits)
	exp, _ := strconv.Atoi(sci[strings.LastIndexByte(sci, 'e')+1:])
	if exp < -4 || exp >= 16 {
		// Go writes at least two exponent digits, as Python does.
		return append(buf, sci...)
	}
	fixed := strconv.FormatFloat(f, 'f', -1, bits)
	buf = append(buf, fixed...)
	if !strings.ContainsRune(fixed, '.') {
		buf = append(buf, ".0"...)
	}
	return buf
}

// pyRepr writes v as Python's repr: a string in single quotes (double
// quotes when it holds ' and no "), with \\, \', \t, \n, \r and the
// non-printable characters escaped (\xNN, \uNNNN, \UNNNNNNNN, lower case);
// None, True, False; numbers as Python writes them; lists and objects as
// Python's list and dict repr (object keys sorted, see pyJSON).
func pyRepr(v any) string {
	return string(appendPyRepr(nil, v, 0))
}

// pyStr is Python's str(v): a string as it is, anything else as repr.
func pyStr(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	return pyRepr(v)
}

func appendPyRepr(buf []byte, v any, depth int) []byte {
	if depth > maxPyDepth {
		return append(buf, "..."...)
	}
	switch x := v.(type) {
	case nil:
		return append(buf, "None"...)
	case bool:
		if x {
			return append(buf, "True"...)
		}
		return append(buf, "False"...)
	case string:
		return appendPyReprString(buf, x)
	case json.Number:
		return appendPyNumber(buf, string(x), true)
	case float64:
		return appendPyFloat(buf, x, 64, true)
	case []any:
		buf = append(buf, '[')
		for i, item := range x {
			if i > 0 {
				buf = append(buf, ", "...)
			}
			buf = appendPyRepr(buf, item, depth+1)
		}
		return append(buf, ']')
	case map[string]any:
		keys := sortedKeys(x)
		buf = append(buf, '{')
		for i, k := range keys {
			if i > 0 {
				buf = append(buf, ", "...)
			}
			buf = appendPyReprString(buf, k)
			buf = append(buf, ": "...)
			buf = appendPyRepr(buf, x[k], depth+1)
		}
		return append(buf, '}')
	}
	// Other numbers as pyJSON writes them (the same text as repr).
	if b, err := appendPyJSON(buf, v, false, depth); err == nil {
		return b
	}
	return fmt.Appendf(buf, "%v", v)
}

func appendPyReprString(buf []byte, s string) []byte {
	const hex = "0123456789abcdef"
	quote := byte('\'')
	if strings.IndexByte(s, '\'') >= 0 && strings.IndexByte(s, '"') < 0 {
		quote = '"'
	}
	buf = append(buf, quote)
	for _, r := range s {
		switch {
		case r == rune(quote) || r == '\\':
			buf = append(buf, '\\', byte(r))
		case r == '\t':
			buf = append(buf, '\\', 't')
		case r == '\n':
			buf = append(buf, '\\', 'n')
		case r == '\r':
			buf = append(buf, '\\', 'r')
		case r < ' ' || r == 0x7F:
			buf = append(buf, '\\', 'x', hex[r>>4], hex[r&0xF])
		case r < 0x7F:
			buf = append(buf, byte(r))
		case unicode.IsPrint(r):
			// Python's printable: not Cc, Cf, Cs, Co, Cn, Zl, Zp or Zs
			// (the space aside), which is Go's letters, marks, numbers,
			// punctuation and symbols.
			buf = utf8.AppendRune(buf, r)
		case r <= 0xFF:
			buf = append(buf, '\\', 'x', hex[r>>4], hex[r&0xF])
		case r <= 0xFFFF:
			buf = append(buf, '\\', 'u', hex[r>>12], hex[r>>8&0xF], hex[r>>4&0xF], hex[r&0xF])
		default:
			buf = append(buf, '\\', 'U')
			for shift := 28; shift >= 0; shift -= 4 {
				buf = append(buf, hex[r>>uint(shift)&0xF])
			}
		}
	}
	return append(buf, quote)
}

// pyIsSpace is Python's str.isspace for one character: \t \n \v \f \r,
// U+001C to U+001F, the space, U+0085, U+00A0, U+1680, U+2000 to U+200A,
// U+2028, U+2029, U+202F, U+205F and U+3000.
func pyIsSpace(r rune) bool {
	switch {
	case r >= '\t' && r <= '\r', r >= 0x1C && r <= ' ':
		return true
	case r < 0x85:
		return false
	}
	switch r {
	case 0x85, 0xA0, 0x1680, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000:
		return true
	}
	return r >= 0x2000 && r <= 0x200A
}

// pyStrip is Python's s.strip(): pyIsSpace characters removed at both ends.
func pyStrip(s string) string {
	return strings.TrimFunc(s, pyIsSpace)
}

// pyLower is Python's s.lower(): full Unicode lower-casing, so U+0130 (İ)
// becomes "i̇" (i and U+0307) and a capital sigma ending a word becomes ς.
func pyLower(s string) string {
	ascii := true
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		return strings.ToLower(s)
	}
	runes := []rune(s)
	var b strings.Builder
	b.Grow(len(s))
	for i, r := range runes {
		switch r {
		case 0x130:
			b.WriteString("i\u0307")
		case 0x3A3:
			if pyFinalSigma(runes, i) {
				b.WriteRune(0x3C2)
			} else {
				b.WriteRune(0x3C3)
			}
		default:
			b.WriteRune(unicode.ToLower(r))
		}
	}
	return b.String()
}

// pyFinalSigma is Unicode's Final_Sigma context of runes[i], as Python tests
// it: a cased letter before it (case-ignorable characters skipped) and none
// after it.
func pyFinalSigma(runes []rune, i int) bool {
	j := i - 1
	for j >= 0 && pyCaseIgnorable(runes[j]) {
		j--
	}
	if j < 0 || !pyCased(runes[j]) {
		return false
	}
	j = i + 1
	for j < len(runes) && pyCaseIgnorable(runes[j]) {
		j++
	}
	return j == len(runes) || !pyCased(runes[j])
}

// pyCased is Unicode's Cased property: Lowercase, Uppercase or Lt.
func pyCased(r rune) bool {
	return unicode.IsLower(r) || unicode.IsUpper(r) || unicode.IsTitle(r) ||
		unicode.Is(unicode.Other_Lowercase, r) || unicode.Is(unicode.Other_Uppercase, r)
}

// pyCaseIgnorable is Unicode's Case_Ignorable property: Mn, Me, Cf, Lm, Sk
// and the Word_Break classes MidLetter, MidNumLet and Single_Quote.
func pyCaseIgnorable(r rune) bool {
	switch r {
	case '\'', '.', ':', 0xB7, 0x387, 0x55F, 0x5F4, 0x2018, 0x2019, 0x2024, 0x2027,
		0xFE13, 0xFE52, 0xFE55, 0xFF07, 0xFF0E, 0xFF1A:
		return true
	}
	return unicode.In(r, unicode.Mn, unicode.Me, unicode.Cf, unicode.Lm, unicode.Sk)
}

// pyTruthy is Python's bool(v) for a JSON value: null, false, 0, 0.0, "",
// [] and {} are false.
func pyTruthy(v any) bool {
	switch x := v.(type) {
	case nil:
		return false
	case bool:
		return x
	case string:
		return x != ""
	case json.Number:
		f, err := strconv.ParseFloat(string(x), 64)
		return err != nil || f != 0
	case float64:
		return x != 0
	case int:
		return x != 0
	case []any:
		return len(x) > 0
	case map[string]any:
		return len(x) > 0
	}
	return true
}
