package server

import (
	"bytes"
	"encoding/json"
	"math"
	"math/big"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// Limits on request JSON, the same on every target (the contract's
// "Request JSON").
const (
	// MaxDepth is how deeply objects and arrays may nest.
	MaxDepth = 128
	// DrainBytes is how much of a refused body is read and discarded before
	// the answer, so a client that sends its whole body before reading gets
	// the error instead of a connection reset.
	DrainBytes = 8 << 20
)

// jsonError is a request body that is not acceptable JSON; field names the
// state field of a duplicate key, when there is one.
type jsonError struct {
	msg   string
	field string
}

func (e *jsonError) Error() string { return e.msg }

var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// decodeStrict decodes one JSON value with the contract's rules: UTF-8
// only, no lone surrogate escapes, at most MaxDepth levels, no duplicate
// keys, numbers within the float64 range. A leading byte-order mark is
// ignored. Objects are map[string]any, arrays []any, numbers json.Number
// (as with Decoder.UseNumber). rawState says whether the body itself may be
// the state (the legacy form; not for a graph with a checkpointer, whose
// top-level keys are the request's).
//
// One pass over the bytes of our own: encoding/json's token API, which the
// duplicate-key and depth checks need, costs a few allocations per token
// and was a third of /invoke's time (bench/throughput.py); its Unmarshal
// cannot see duplicate keys. request_test.go holds it to encoding/json's
// results on what both accept.
func decodeStrict(body []byte, rawState bool) (any, error) {
	body = bytes.TrimPrefix(body, utf8BOM)
	if !utf8.Valid(body) {
		return nil, &jsonError{msg: "the body is not valid UTF-8"}
	}
	// Backslashes occur only inside strings: most bodies have none.
	if bytes.IndexByte(body, '\\') >= 0 {
		if err := checkSurrogates(body); err != nil {
			return nil, err
		}
	}
	d := &decoder{data: body, rawState: rawState}
	d.space()
	v, err := d.value(0, false)
	if err != nil {
		return nil, err
	}
	d.space()
	if d.pos < len(d.data) {
		return nil, &jsonError{msg: "the body has data after the JSON value"}
	}
	return v, nil
}

// errNotJSON is every syntax error: the contract names none more closely.
var errNotJSON = &jsonError{msg: "the body is not JSON"}

type decoder struct {
	data     []byte
	pos      int
	rawState bool
}

// space skips JSON whitespace.
func (d *decoder) space() {
	for d.pos < len(d.data) {
		switch d.data[d.pos] {
		case ' ', '\t', '\n', '\r':
			d.pos++
		default:
			return
		}
	}
}

// value reads the value at d.pos, which is not whitespace, at depth (0 for
// the body itself); inState is true for the value of the body's "state"
// key, whose keys are state fields.
func (d *decoder) value(depth int, inState bool) (any, error) {
	if d.pos >= len(d.data) {
		return nil, errNotJSON
	}
	switch c := d.data[d.pos]; {
	case c == '{' || c == '[':
		if depth+1 > MaxDepth {
			return nil, &jsonError{msg: "the body nests deeper than " + strconv.Itoa(MaxDepth) + " levels"}
		}
		d.pos++
		if c == '[' {
			return d.array(depth)
		}
		return d.object(depth, inState)
	case c == '"':
		return d.str(false)
	case c == '-' || (c >= '0' && c <= '9'):
		return d.number()
	case d.literal("true"):
		return true, nil
	case d.literal("false"):
		return false, nil
	case d.literal("null"):
		return nil, nil
	}
	return nil, errNotJSON
}

// literal consumes word when it is next.
func (d *decoder) literal(word string) bool {
	if bytes.HasPrefix(d.data[d.pos:], []byte(word)) {
		d.pos += len(word)
		return true
	}
	return false
}

// array reads the items after '['.
func (d *decoder) array(depth int) (any, error) {
	list := []any{}
	if d.closes(']') {
		return list, nil
	}
	for {
		d.space()
		item, err := d.value(depth+1, false)
		if err != nil {
			return nil, err
		}
		list = append(list, item)
		if more, err := d.separator(']'); !more {
			return list, err
		}
	}
}

// object reads the members after '{'.
func (d *decoder) object(depth int, inState bool) (any, error) {
	obj := map[string]any{}
	if d.closes('}') {
		return obj, nil
	}
	for {
		d.space()
		if d.pos >= len(d.data) || d.data[d.pos] != '"' {
			return nil, errNotJSON
		}
		key, err := d.str(true)
		if err != nil {
			return nil, err
		}
		d.space()
		if d.pos >= len(d.data) || d.data[d.pos] != ':' {
			return nil, errNotJSON
		}
		d.pos++
		d.space()
		if _, dup := obj[key]; dup {
			return nil, d.duplicateKey(key, depth, inState)
		}
		item, err := d.value(depth+1, depth == 0 && key == "state")
		if err != nil {
			return nil, err
		}
		obj[key] = item
		if more, err := d.separator('}'); !more {
			return obj, err
		}
	}
}

// closes consumes closer when it comes next (after whitespace): an empty
// array or object.
func (d *decoder) closes(closer byte) bool {
	d.space()
	if d.pos < len(d.data) && d.data[d.pos] == closer {
		d.pos++
		return true
	}
	return false
}

// separator reads what follows an item: a comma (more to come), closer (the
// end, err nil), or anything else (the end, errNotJSON).
func (d *decoder) separator(closer byte) (more bool, err error) {
	d.space()
	if d.pos >= len(d.data) {
		return false, errNotJSON
	}
	d.pos++
	switch d.data[d.pos-1] {
	case ',':
		return true, nil
	case closer:
		return false, nil
	}
	return false, errNotJSON
}

// str reads the string at d.pos (its opening quote). The body is valid
// UTF-8 and its surrogate escapes are paired (decodeStrict checked both).
// A key that is a state field's name or "state" is that name's own string
// (requestKeys, server.go): no copy.
func (d *decoder) str(key bool) (string, error) {
	start := d.pos + 1
	// Most strings have no escape: one copy of their bytes.
	for i := start; i < len(d.data); i++ {
		switch c := d.data[i]; {
		case c == '"':
			d.pos = i + 1
			if key {
				if known, ok := requestKeys[string(d.data[start:i])]; ok {
					return known, nil
				}
			}
			return string(d.data[start:i]), nil
		case c == '\\':
			return d.escapedStr(start, i)
		case c < 0x20:
			return "", errNotJSON
		}
	}
	return "", errNotJSON
}

// escapedStr reads the rest of a string from its first escape at i.
func (d *decoder) escapedStr(start, i int) (string, error) {
	buf := append(make([]byte, 0, i-start+16), d.data[start:i]...)
	for i < len(d.data) {
		c := d.data[i]
		switch {
		case c == '"':
			d.pos = i + 1
			return string(buf), nil
		case c < 0x20:
			return "", errNotJSON
		case c != '\\':
			buf = append(buf, c)
			i++
			continue
		}
		if i+1 >= len(d.data) {
			return "", errNotJSON
		}
		switch e := d.data[i+1]; e {
		case '"', '\\', '/':
			buf = append(buf, e)
		case 'b':
			buf = append(buf, '\b')
		case 'f':
			buf = append(buf, '\f')
		case 'n':
			buf = append(buf, '\n')
		case 'r':
			buf = append(buf, '\r')
		case 't':
			buf = append(buf, '\t')
		case 'u':
			u, ok := hex4(d.data, i+2)
			if !ok {
				return "", errNotJSON
			}
			r := rune(u)
			if utf16.IsSurrogate(r) {
				// Paired, as checkSurrogates made sure.
				low, ok := hex4(d.data, i+8)
				if !ok || i+7 >= len(d.data) || d.data[i+6] != '\\' || d.data[i+7] != 'u' {
					return "", errNotJSON
				}
				r = utf16.DecodeRune(r, rune(low))
				i += 6
			}
			buf = utf8.AppendRune(buf, r)
			i += 6
			continue
		default:
			return "", errNotJSON
		}
		i += 2
	}
	return "", errNotJSON
}

// number reads a number with JSON's grammar, refusing one outside the
// float64 range; a whole one written with a fraction or an exponent becomes
// the integer it equals (wholeNumber).
func (d *decoder) number() (any, error) {
	start := d.pos
	i := start
	if d.data[i] == '-' {
		i++
	}
	digits := func() bool {
		from := i
		for i < len(d.data) && d.data[i] >= '0' && d.data[i] <= '9' {
			i++
		}
		return i > from
	}
	switch {
	case i < len(d.data) && d.data[i] == '0':
		i++
	case !digits():
		return nil, errNotJSON
	}
	if i < len(d.data) && d.data[i] == '.' {
		i++
		if !digits() {
			return nil, errNotJSON
		}
	}
	if i < len(d.data) && (d.data[i] == 'e' || d.data[i] == 'E') {
		i++
		if i < len(d.data) && (d.data[i] == '+' || d.data[i] == '-') {
			i++
		}
		if !digits() {
			return nil, errNotJSON
		}
	}
	d.pos = i
	text := string(d.data[start:i])
	// Short integers are always in range; the rest are checked.
	if i-start > 15 || strings.ContainsAny(text, ".eE") {
		if f, err := strconv.ParseFloat(text, 64); err != nil && math.IsInf(f, 0) {
			return nil, &jsonError{msg: "the number " + abbreviate(text) + " is outside the range of a 64-bit float"}
		}
	}
	return wholeNumber(json.Number(text)), nil
}

// duplicateKey names the state field when the object is the state: the
// value of the top-level "state", or the body itself in the legacy form.
func (d *decoder) duplicateKey(key string, depth int, inState bool) error {
	e := &jsonError{msg: "the key " + strconv.Quote(key) + " appears twice in one object"}
	if inState || (d.rawState && depth == 0 && key != "state") {
		e.field = key
	}
	return e
}

// checkSurrogates refuses \u escapes that leave a UTF-16 surrogate unpaired.
func checkSurrogates(body []byte) error {
	for i := 0; i < len(body); i++ {
		if body[i] != '\\' || i+1 >= len(body) {
			continue
		}
		if body[i+1] != 'u' {
			i++ // an escaped character, possibly a backslash
			continue
		}
		u, ok := hex4(body, i+2)
		if !ok {
			return nil // malformed; the decoder says so
		}
		i += 5
		if u < 0xD800 || u > 0xDFFF {
			continue
		}
		// A high surrogate must be followed at once by an escaped low one.
		if u <= 0xDBFF && i+2 < len(body) && body[i+1] == '\\' && body[i+2] == 'u' {
			if low, ok := hex4(body, i+3); ok && low >= 0xDC00 && low <= 0xDFFF {
				i += 6
				continue
			}
		}
		return &jsonError{msg: "the body has a lone UTF-16 surrogate escape (\\u" + strconv.FormatUint(uint64(u), 16) + ")"}
	}
	return nil
}

func hex4(b []byte, at int) (uint16, bool) {
	if at+4 > len(b) {
		return 0, false
	}
	var v uint16
	for _, c := range b[at : at+4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		v = v<<4 | uint16(c)
	}
	return v, true
}

func abbreviate(s string) string {
	if len(s) > 40 {
		return s[:37] + "..."
	}
	return s
}

// wholeNumber writes a whole number given with a fraction or an exponent
// (2.0, 1e3) as the integer it equals, as JSON Schema counts it, when an
// int64 holds it; decided exactly, not on a rounded float.
func wholeNumber(n json.Number) json.Number {
	text := string(n)
	if !strings.ContainsAny(text, ".eE") {
		return n
	}
	f, _, err := big.ParseFloat(text, 10, 256, big.ToNearestEven)
	if err != nil || !f.IsInt() {
		return n
	}
	i, acc := f.Int64()
	if acc != big.Exact {
		return n
	}
	return json.Number(strconv.FormatInt(i, 10))
}
