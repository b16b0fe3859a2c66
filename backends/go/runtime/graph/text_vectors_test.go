package graph

// Not one of the runtime files of a generated project: it runs with the
// runtime's own tests in the repository (tests/tests/e2e/runtimes.rs), on
// the shared vectors of fixtures/json-text/vectors.json.

import (
	"encoding/json"
	"math"
	"math/big"
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestTextVectors renders every value of the shared vectors ("inserted as
// JSON" in docs/ir-reference.md) as the Go service holds it: read with
// UseNumber, as requests and upstream replies are, and again with Go's own
// number types, as node code may write them.
func TestTextVectors(t *testing.T) {
	data, err := os.ReadFile("../../../../fixtures/json-text/vectors.json")
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.UseNumber()
	var vectors []struct {
		Name  string
		Value any
		Text  string
	}
	if err := dec.Decode(&vectors); err != nil {
		t.Fatal(err)
	}
	if len(vectors) < 40 {
		t.Fatalf("only %d vectors", len(vectors))
	}
	for _, v := range vectors {
		if got := Text(v.Value); got != v.Text {
			t.Errorf("%s: got %q, want %q", v.Name, got, v.Text)
		}
		if got := Text(native(v.Value)); got != v.Text {
			t.Errorf("%s, with Go number types: got %q, want %q", v.Name, got, v.Text)
		}
	}
}

// TestTextGoValues covers values that only Go node code can write.
func TestTextGoValues(t *testing.T) {
	cycle := map[string]any{}
	cycle["self"] = cycle
	huge, _ := new(big.Int).SetString("123456789012345678901234567890", 10)
	cases := []struct {
		name string
		v    any
		want string
	}{
		{"State", State{"b": 1, "a": []string{"<x>"}}, `{"a":["<x>"],"b":1}`},
		{"struct", struct {
			Z int    `json:"z"`
			A string `json:"a"`
		}{1, "&"}, `{"a":"&","z":1}`},
		{"small unsigned", uint8(7), "7"},
		{"big.Int", huge, "123456789012345678901234567890"},
		{"float32", float32(0.1), "0.1"},
		{"float32 with an exponent", float32(1e-7), "1e-7"},
		{"float32 extremes", []float32{math.SmallestNonzeroFloat32, math.MaxFloat32}, "[1e-45,3.4028235e+38]"},
		{"negative zero", math.Copysign(0, -1), "0"},
		{"not UTF-8", []any{"a\xffb"}, "[\"a\ufffdb\"]"},
		{"NaN", math.NaN(), ""},
		{"infinity inside", map[string]any{"x": math.Inf(1)}, ""},
		{"invalid json.Number", []any{json.Number("1x")}, ""},
		{"cycle", cycle, ""},
	}
	for _, c := range cases {
		if got := Text(c.v); got != c.want {
			t.Errorf("%s: got %q, want %q", c.name, got, c.want)
		}
	}
}

// native writes every json.Number as a Go number: an integer as int64 (or
// *big.Int past 64 bits), any other number as float64.
func native(v any) any {
	switch x := v.(type) {
	case json.Number:
		s := string(x)
		if strings.ContainsAny(s, ".eE") {
			f, _ := strconv.ParseFloat(s, 64)
			return f
		}
		if i, err := strconv.ParseInt(s, 10, 64); err == nil {
			return i
		}
		n, _ := new(big.Int).SetString(s, 10)
		return n
	case []any:
		out := make([]any, len(x))
		for i, item := range x {
			out[i] = native(item)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, item := range x {
			out[k] = native(item)
		}
		return out
	}
	return v
}
