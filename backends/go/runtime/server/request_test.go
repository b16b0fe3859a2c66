package server

import (
	"bytes"
	"encoding/json"
	"math/rand"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// reference decodes what decodeStrict accepts with encoding/json, numbers
// as json.Number and whole ones normalised as decodeStrict does.
func reference(t testing.TB, body []byte) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(bytes.TrimPrefix(body, utf8BOM)))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("encoding/json refuses %q: %v", body, err)
	}
	return normalise(v)
}

func normalise(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, item := range x {
			x[k] = normalise(item)
		}
	case []any:
		for i, item := range x {
			x[i] = normalise(item)
		}
	case json.Number:
		return wholeNumber(x)
	}
	return v
}

func TestDecodeStrictAgreesWithEncodingJSON(t *testing.T) {
	for _, body := range []string{
		`{}`, `[]`, `{"a":[]}`, ` { "a" : 1 , "b" : [ 1 , 2 ] } `, "\t\r\n{\"a\":\n1}\n",
		`{"state":{"q":"x","n":null,"t":true,"f":false}}`,
		`{"n":[0,-0,1,-1,12.5,-0.25,1e3,1E+3,2.0,1e-7,-0.0,123456789012345678,1e21,9007199254740993]}`,
		`{"s":"\"\\\/\b\f\n\r\t\u0041\u00e9\u20ac\ud83d\ude00"}`, `{"s":"caf\u00e9 and café and 😀"}`,
		`{"\u0061b":1}`, `{"k":"a\"b"}`, `{"":""}`, `"text"`, `12`, `null`, `true`,
		"\xEF\xBB\xBF{\"bom\":1}", `{"deep":[[[[{"x":[{}]}]]]]}`,
	} {
		got, err := decodeStrict([]byte(body), false)
		if err != nil {
			t.Fatalf("%q: %v", body, err)
		}
		if want := reference(t, []byte(body)); !reflect.DeepEqual(got, want) {
			t.Fatalf("%q: got %#v, encoding/json %#v", body, got, want)
		}
	}
}

// Random documents, written compactly and with whitespace, read alike.
func TestDecodeStrictAgreesOnRandomDocuments(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	for i := 0; i < 3000; i++ {
		v := randomValue(rng, 0)
		body, err := json.Marshal(map[string]any{"state": v})
		if err != nil {
			t.Fatal(err)
		}
		if i%2 == 1 {
			var spaced bytes.Buffer
			_ = json.Indent(&spaced, body, " ", "\t")
			body = spaced.Bytes()
		}
		got, err := decodeStrict(body, false)
		if err != nil {
			t.Fatalf("%s: %v", body, err)
		}
		if want := reference(t, body); !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: got %#v, encoding/json %#v", body, got, want)
		}
	}
}

func randomValue(rng *rand.Rand, depth int) any {
	kinds := 7
	if depth > 4 {
		kinds = 5
	}
	switch rng.Intn(kinds) {
	case 0:
		return nil
	case 1:
		return rng.Intn(2) == 0
	case 2:
		return json.Number(strconv.FormatFloat(rng.NormFloat64()*1e6, 'g', -1, 64))
	case 3:
		return json.Number(strconv.Itoa(rng.Intn(1 << 30)))
	case 4:
		return randomString(rng)
	case 5:
		list := []any{}
		for n := rng.Intn(4); n > 0; n-- {
			list = append(list, randomValue(rng, depth+1))
		}
		return list
	default:
		obj := map[string]any{}
		for n := rng.Intn(4); n > 0; n-- {
			obj[randomString(rng)+strconv.Itoa(n)] = randomValue(rng, depth+1)
		}
		return obj
	}
}

func randomString(rng *rand.Rand) string {
	runes := []rune("aZ09 \"\\/\b\f\n\r\t\x01\x1f<>&é€😀\u2028")
	var sb strings.Builder
	for n := rng.Intn(12); n > 0; n-- {
		sb.WriteRune(runes[rng.Intn(len(runes))])
	}
	return sb.String()
}

func TestDecodeStrictRefuses(t *testing.T) {
	deep := func(n int) string { return strings.Repeat("[", n-1) + "{}" + strings.Repeat("]", n-1) }
	for _, c := range []struct{ body, msg, field string }{
		{``, "the body is not JSON", ""},
		{`{`, "the body is not JSON", ""},
		{`{"a":1,}`, "the body is not JSON", ""},
		{`{"a" 1}`, "the body is not JSON", ""},
		{`{a:1}`, "the body is not JSON", ""},
		{`[1,]`, "the body is not JSON", ""},
		{`[1 2]`, "the body is not JSON", ""},
		{`{"a":01}`, "the body is not JSON", ""},
		{`{"a":1.}`, "the body is not JSON", ""},
		{`{"a":.5}`, "the body is not JSON", ""},
		{`{"a":1e}`, "the body is not JSON", ""},
		{`{"a":-}`, "the body is not JSON", ""},
		{`{"a":+1}`, "the body is not JSON", ""},
		{`{"a":tru}`, "the body is not JSON", ""},
		{`{"a":nul}`, "the body is not JSON", ""},
		{`{"a":"x` + "\n" + `"}`, "the body is not JSON", ""},
		{`{"a":"\x"}`, "the body is not JSON", ""},
		{`{"a":"\u12"}`, "the body is not JSON", ""},
		{`{"a":"open}`, "the body is not JSON", ""},
		{"\x00{}", "the body is not JSON", ""},
		{`{} {}`, "the body has data after the JSON value", ""},
		{`{}]`, "the body has data after the JSON value", ""},
		{"{\"a\":\"\xff\"}", "the body is not valid UTF-8", ""},
		{`{"a":"\ud800"}`, `the body has a lone UTF-16 surrogate escape (\ud800)`, ""},
		{`{"a":"x\udc00y"}`, `the body has a lone UTF-16 surrogate escape (\udc00)`, ""},
		{`{"a":"\ud800\u0041"}`, `the body has a lone UTF-16 surrogate escape (\ud800)`, ""},
		{`{"a":1e400}`, "the number 1e400 is outside the range of a 64-bit float", ""},
		{`{"a":-1.5e309}`, "the number -1.5e309 is outside the range of a 64-bit float", ""},
		{`{"a":` + strings.Repeat("9", 400) + `}`, "the number " + strings.Repeat("9", 37) +
			"... is outside the range of a 64-bit float", ""},
		{`{"a":` + deep(128) + `}`, "the body nests deeper than 128 levels", ""},
		{`{"state":{"q":1,"q":2}}`, `the key "q" appears twice in one object`, "q"},
		{`{"state":{"q":{"x":1,"x":2}}}`, `the key "x" appears twice in one object`, ""},
		{`{"q":1,"q":2}`, `the key "q" appears twice in one object`, "q"},
		{`{"a":1,"\u0061":2}`, `the key "a" appears twice in one object`, "a"},
	} {
		_, err := decodeStrict([]byte(c.body), true)
		je, ok := err.(*jsonError)
		if !ok || je.msg != c.msg || je.field != c.field {
			t.Errorf("%q: got %v (%#v), want %q field %q", c.body, err, err, c.msg, c.field)
		}
	}
	// Exactly 128 levels, the body object being the first, are read.
	if _, err := decodeStrict([]byte(`{"a":`+deep(127)+`}`), false); err != nil {
		t.Fatalf("128 levels: %v", err)
	}
}

func TestDecodeStrictWholeNumbers(t *testing.T) {
	got, err := decodeStrict([]byte(`[2.0, 1e3, -0.0, 2.5, 1e-7, 9223372036854775807, 9223372036854775808.0]`), false)
	if err != nil {
		t.Fatal(err)
	}
	want := []any{json.Number("2"), json.Number("1000"), json.Number("0"), json.Number("2.5"),
		json.Number("1e-7"), json.Number("9223372036854775807"), json.Number("9223372036854775808.0")}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %#v", got)
	}
}

// Whatever the bytes, decodeStrict answers without panicking; what it
// accepts encoding/json accepts and reads alike, and what it calls not JSON
// encoding/json refuses too.
func FuzzDecodeStrict(f *testing.F) {
	for _, seed := range []string{`{"state":{"q":"x"}}`, `[1,{"a":"\u00e9"}]`, `{"a":1e5}`, `"\ud83d\ude00"`} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		got, err := decodeStrict(body, false)
		if err == errNotJSON && json.Valid(bytes.TrimPrefix(body, utf8BOM)) {
			t.Fatalf("%q: called not JSON, which encoding/json reads", body)
		}
		if err != nil {
			return
		}
		if want := reference(t, body); !reflect.DeepEqual(got, want) {
			t.Fatalf("%q: got %#v, encoding/json %#v", body, got, want)
		}
	})
}
