package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"
	"math/big"
	"strconv"
	"strings"
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
// ignored. Numbers stay json.Number, as with Decoder.UseNumber. rawState
// says whether the body itself may be the state (the legacy form; not for
// a graph with a checkpointer, whose top-level keys are the request's).
func decodeStrict(body []byte, rawState bool) (any, error) {
	body = bytes.TrimPrefix(body, utf8BOM)
	if !utf8.Valid(body) {
		return nil, &jsonError{msg: "the body is not valid UTF-8"}
	}
	// encoding/json replaces a lone surrogate with U+FFFD, so the escapes
	// are checked on the raw text. Backslashes occur only inside strings.
	if bytes.IndexByte(body, '\\') >= 0 {
		if err := checkSurrogates(body); err != nil {
			return nil, err
		}
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	d := &decoder{dec: dec, rawState: rawState}
	v, err := d.value(0, false)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, &jsonError{msg: "the body has data after the JSON value"}
	}
	return v, nil
}

type decoder struct {
	dec      *json.Decoder
	rawState bool
}

// value reads the next value at depth (0 for the body itself); inState is
// true for the value of the body's "state" key, whose keys are state fields.
func (d *decoder) value(depth int, inState bool) (any, error) {
	tok, err := d.dec.Token()
	if err != nil {
		return nil, notJSON(err)
	}
	switch t := tok.(type) {
	case json.Delim:
		if depth+1 > MaxDepth {
			return nil, &jsonError{msg: "the body nests deeper than " + strconv.Itoa(MaxDepth) + " levels"}
		}
		if t == '[' {
			list := []any{}
			for d.dec.More() {
				item, err := d.value(depth+1, false)
				if err != nil {
					return nil, err
				}
				list = append(list, item)
			}
			_, err := d.dec.Token()
			return list, notJSON(err)
		}
		obj := map[string]any{}
		for d.dec.More() {
			keyTok, err := d.dec.Token()
			if err != nil {
				return nil, notJSON(err)
			}
			key, _ := keyTok.(string)
			if _, dup := obj[key]; dup {
				return nil, d.duplicateKey(key, depth, inState)
			}
			item, err := d.value(depth+1, depth == 0 && key == "state")
			if err != nil {
				return nil, err
			}
			obj[key] = item
		}
		_, err := d.dec.Token()
		return obj, notJSON(err)
	case json.Number:
		if f, err := strconv.ParseFloat(string(t), 64); err != nil && math.IsInf(f, 0) {
			return nil, &jsonError{msg: "the number " + abbreviate(string(t)) + " is outside the range of a 64-bit float"}
		}
		return wholeNumber(t), nil
	default:
		return t, nil
	}
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

func notJSON(err error) error {
	if err == nil {
		return nil
	}
	var je *jsonError
	if errors.As(err, &je) {
		return err
	}
	return &jsonError{msg: "the body is not JSON"}
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
	v, err := strconv.ParseUint(string(b[at:at+4]), 16, 16)
	return uint16(v), err == nil
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
