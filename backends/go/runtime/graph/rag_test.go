package graph

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// The vectors below were computed with python-svc's SDK (svc/rag.py): BM25
// with its Bm25Retriever, the embedding cases with its EmbeddingRetriever
// and build_indexes on CPython 3.12 (the python:3.12-slim image), replaying
// the same /embeddings replies.

var (
	ragE2EDocs = []Document{
		{"more/returns.txt", "Returns of a refund request need the receipt."},
		{"refunds.md", "# Refunds\n\nRefunds are paid within 14 days of the request."},
		{"shipping.md", "# Shipping\n\nParcels leave the warehouse every weekday."},
	}
	ragFixtureDocs = []Document{
		{"refunds.md", "Refunds are paid within 14 days of the request."},
		{"shipping.md", "Parcels ship every weekday from the central warehouse."},
	}
	ragMixDocs = []Document{
		{"fruit", "apple apple banana"}, {"b2", "banana cherry"}, {"cherries", "cherry cherry cherry apple"},
		{"city", "İstanbul naïve café_au_lait x²"}, {"greek", "ΟΔΟΣ οδός Σίσυφος"}, {"b1", "banana cherry"},
		{"empty", ""}, {"punct", "... !!! ---"}, {"long", strings.Repeat("word ", 40) + "apple"},
	}
)

func TestRagTokensMatchPython(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string
	}{
		{"İstanbul ΟΔΟΣ naïve café_x 42 ½ x²y é 日本語", []string{"i", "stanbul", "οδος", "naïve", "café_x", "42", "½", "x²y", "e", "日本語"}},
		{"ΟΔΟΣ. Σ ΑΣ-ΑΣ", []string{"οδος", "σ", "ας", "ας"}},
		{"İ", []string{"i"}},
		{"A b c\tD_E", []string{"a", "b", "c", "d_e"}},
		{"٣٤ ⅫⅣ ① ²", []string{"٣٤", "ⅻⅳ", "①", "²"}},
		{"don't stop-me", []string{"don", "t", "stop", "me"}},
		{"ǅungla ǈ", []string{"ǆungla", "ǉ"}},
		{"ﬁne ß ẞ", []string{"ﬁne", "ß", "ß"}},
	} {
		if got := ragTokens(c.in); !equalStrings(got, c.want) {
			t.Errorf("ragTokens(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// samePassages compares ids and order exactly and scores within tol (0:
// bit for bit).
func samePassages(t *testing.T, what string, got, want []Passage, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: %d passages %v, want %d %v", what, len(got), got, len(want), want)
		return
	}
	for i := range want {
		if got[i].ID != want[i].ID || math.Abs(got[i].Score-want[i].Score) > tol || math.IsNaN(got[i].Score) {
			t.Errorf("%s: passage %d is %q %v, want %q %v", what, i, got[i].ID, got[i].Score, want[i].ID, want[i].Score)
		}
	}
}

func TestRagBM25MatchesPython(t *testing.T) {
	for _, c := range []struct {
		docs  []Document
		query string
		topK  int
		want  []Passage
	}{
		{ragE2EDocs, "refunds paid within days of a request", 2, []Passage{{ID: "refunds.md", Score: 4.878471367329767}, {ID: "more/returns.txt", Score: 1.9560453273963314}}},
		{ragE2EDocs, "refunds paid within days of a request", 10, []Passage{{ID: "refunds.md", Score: 4.878471367329767}, {ID: "more/returns.txt", Score: 1.9560453273963314}}},
		{ragE2EDocs, "zebra", 2, []Passage{}},
		{ragFixtureDocs, "When are refunds paid?", 1, []Passage{{ID: "refunds.md", Score: 2.025816974702419}}},
		{ragFixtureDocs, "When are refunds paid?", 0, []Passage{}},
		{ragMixDocs, "apple", 10, []Passage{{ID: "fruit", Score: 1.8218171357894626}, {ID: "cherries", Score: 1.280270883534973}, {ID: "long", Score: 0.31644977377503475}}},
		{ragMixDocs, "apple apple", 10, []Passage{{ID: "fruit", Score: 3.643634271578925}, {ID: "cherries", Score: 2.560541767069946}, {ID: "long", Score: 0.6328995475500695}}},
		{ragMixDocs, "Banana? CHERRY!", 3, []Passage{{ID: "b1", Score: 3.0651740861275263}, {ID: "b2", Score: 3.0651740861275263}, {ID: "cherries", Score: 1.9441150453679215}}},
		{ragMixDocs, "istanbul", 4, []Passage{}},
		{ragMixDocs, "NAÏVE Café_au_lait", 4, []Passage{{ID: "city", Score: 4.275199965940014}}},
		{ragMixDocs, "x²", 4, []Passage{{ID: "city", Score: 2.137599982970007}}},
		{ragMixDocs, "ΟΔΟΣ", 4, []Passage{{ID: "greek", Score: 2.5210896809114702}}},
		{ragMixDocs, "σίσυφοσ", 4, []Passage{}},
		{ragMixDocs, "σίσυφος word", 4, []Passage{{ID: "long", Score: 4.011354533920193}, {ID: "greek", Score: 2.5210896809114702}}},
		{ragMixDocs, "", 4, []Passage{}},
		{ragMixDocs, "...", 4, []Passage{}},
		{nil, "apple", 4, []Passage{}},
	} {
		got, err := NewBM25(c.docs).Search(context.Background(), "docs", c.query, c.topK)
		if err != nil || got == nil {
			t.Fatalf("search %q: %v", c.query, err)
		}
		// Bit for bit: pyLog rounds as glibc's log does here.
		samePassages(t, c.query, got, c.want, 0)
		for _, p := range got {
			if p.Text != textOf(c.docs, p.ID) {
				t.Errorf("passage %q has the text %q", p.ID, p.Text)
			}
		}
	}
}

func textOf(docs []Document, id string) string {
	for _, d := range docs {
		if d.ID == id {
			return d.Text
		}
	}
	return "<none>"
}

// The e2e and fixture scores of the semantics digest, and passage texts.
func TestRagBM25DigestVectors(t *testing.T) {
	got, _ := NewBM25(ragE2EDocs).Search(context.Background(), "search", "refunds paid within days of a request", 2)
	samePassages(t, "e2e", got, []Passage{{ID: "refunds.md", Score: 4.878471367329767}, {ID: "more/returns.txt", Score: 1.9560453273963314}}, 1e-12)
	if len(got) == 2 && got[0].Text != ragE2EDocs[1].Text {
		t.Errorf("text %q", got[0].Text)
	}
	got, _ = NewBM25(ragE2EDocs).Search(context.Background(), "search", "zebra", 2)
	if got == nil || len(got) != 0 {
		t.Errorf("zebra: %#v, want an empty list", got)
	}
	got, _ = NewBM25(ragFixtureDocs).Search(context.Background(), "docs", "When are refunds paid?", 1)
	samePassages(t, "fixture", got, []Passage{{ID: "refunds.md", Score: 2.025816974702419}}, 1e-12)
}

type ragEmbedCase struct {
	name      string
	docs      []Document
	replies   []string
	query     string
	topK      int
	want      []Passage
	buildErr  string
	searchErr string // the code; reason and message with it
	reason    string
	message   string
	calls     [][]string
}

func ragManyDocs(n int) []Document {
	docs := make([]Document, n)
	for i := range docs {
		docs[i] = Document{ID: "doc" + pad3(i), Text: "text " + itoa(i)}
	}
	return docs
}

func pad3(i int) string { return strings.Repeat("0", 3-len(itoa(i))) + itoa(i) }

func itoa(i int) string {
	b, _ := json.Marshal(i)
	return string(b)
}

// ragBatches is the inputs of the calls of the 130-document cases: 128
// texts, 2 texts, then (with query) the query.
func ragBatches(_ int, query bool) [][]string {
	var first, second []string
	for i := 0; i < 130; i++ {
		if i < 128 {
			first = append(first, "text "+itoa(i))
		} else {
			second = append(second, "text "+itoa(i))
		}
	}
	calls := [][]string{first, second}
	if query {
		calls = append(calls, []string{"refunds"})
	}
	return calls
}

var ragEmbedCases = []ragEmbedCase{
	{
		name: "scores",
		docs: []Document{{"z", "zeta"}, {"blank", " \n　"}, {"c", "see"}, {"m", "em"}, {"neg", "neg"}, {"zero", "zero"}, {"two", "two"}},
		replies: []string{
			"{\"object\": \"list\", \"data\": [{\"index\": 5, \"embedding\": [0.27711732939847356, 0.8113382925639273, 2.4593318050113506, -2.456936939343845]}, {\"index\": 4, \"embedding\": [0, 0, 0, 0]}, {\"index\": 3, \"embedding\": [-6.737044274030386, 0.7553818418440179, 1.3122915856223234, -0.09944478474819585]}, {\"index\": 2, \"embedding\": [-0.8315566208737892, 1.3332135939479274e-09, 5.07751859288671e-09, 2.0976536465408575]}, {\"index\": 1, \"embedding\": [6.737044274030386, -0.7553818418440179, -1.3122915856223234, 0.09944478474819585]}, {\"index\": 0, \"embedding\": [-0.8315566208737892, 1.3332135939479274e-09, 5.07751859288671e-09, 2.0976536465408575]}]}",
			"{\"object\": \"list\", \"data\": [{\"index\": 0, \"embedding\": [1.8455684268402128, 0.8399997833932058, 0.4166370564820018, 0.8842361765500872]}]}",
		},
		query: "refunds", topK: 10,
		want:  []Passage{{ID: "c", Score: 0.7295035958840712}, {ID: "m", Score: 0.06302455097117325}, {ID: "z", Score: 0.06302455097117325}, {ID: "two", Score: 0.005595555325146093}},
		calls: [][]string{{"zeta", "see", "em", "neg", "zero", "two"}, {"refunds"}},
	},
	{
		name: "top two",
		docs: []Document{{"z", "zeta"}, {"c", "see"}, {"m", "em"}},
		replies: []string{
			"{\"object\": \"list\", \"data\": [{\"index\": 0, \"embedding\": [-0.8315566208737892, 1.3332135939479274e-09, 5.07751859288671e-09, 2.0976536465408575]}, {\"index\": 1, \"embedding\": [6.737044274030386, -0.7553818418440179, -1.3122915856223234, 0.09944478474819585]}, {\"index\": 2, \"embedding\": [-0.8315566208737892, 1.3332135939479274e-09, 5.07751859288671e-09, 2.0976536465408575]}]}",
			"{\"object\": \"list\", \"data\": [{\"index\": 0, \"embedding\": [1.8455684268402128, 0.8399997833932058, 0.4166370564820018, 0.8842361765500872]}]}",
		},
		query: "refunds", topK: 2,
		want:  []Passage{{ID: "c", Score: 0.7295035958840712}, {ID: "m", Score: 0.06302455097117325}},
		calls: [][]string{{"zeta", "see", "em"}, {"refunds"}},
	},
	{
		name: "ints",
		docs: []Document{{"a", "a"}, {"b", "b"}},
		replies: []string{
			"{\"object\": \"list\", \"data\": [{\"index\": 0, \"embedding\": [3, 4]}, {\"index\": 1, \"embedding\": [1, 0]}]}",
			"{\"object\": \"list\", \"data\": [{\"index\": 0, \"embedding\": [1, 1]}]}",
		},
		query: "refunds", topK: 4,
		want:  []Passage{{ID: "a", Score: 0.9899494936611665}, {ID: "b", Score: 0.7071067811865475}},
		calls: [][]string{{"a", "b"}, {"refunds"}},
	},
	{
		name:    "empty index",
		docs:    []Document{{"a", " "}, {"b", ""}},
		replies: []string{},
		query:   "x", topK: 4,
		want:  []Passage{},
		calls: [][]string{},
	},
	{
		name: "blank query",
		docs: []Document{{"a", "a"}},
		replies: []string{
			"{\"object\": \"list\", \"data\": [{\"index\": 0, \"embedding\": [1, 0]}]}",
		},
		query: " \t ", topK: 4,
		want:  []Passage{},
		calls: [][]string{{"a"}},
	},
	{
		name: "top zero",
		docs: []Document{{"a", "a"}},
		replies: []string{
			"{\"object\": \"list\", \"data\": [{\"index\": 0, \"embedding\": [1, 0]}]}",
		},
		query: "refunds", topK: 0,
		want:  []Passage{},
		calls: [][]string{{"a"}},
	},
	{
		name: "overflow float",
		docs: []Document{{"a", "a"}},
		replies: []string{
			"{\"object\": \"list\", \"data\": [{\"index\": 0, \"embedding\": [1e400, 1]}]}",
			"{\"object\": \"list\", \"data\": [{\"index\": 0, \"embedding\": [1, 0]}]}",
		},
		query: "refunds", topK: 4,
		want:  []Passage{},
		calls: [][]string{{"a"}, {"refunds"}},
	},
	{
		name: "no data list",
		docs: []Document{{"a", "a"}},
		replies: []string{
			"[]",
		},
		query: "refunds", topK: 4,
		buildErr: "the embedding index of rag node \"ctx\" cannot be built (invalid_json): node \"ctx\": the embeddings reply has no data list",
		calls:    [][]string{{"a"}},
	},
	{
		name: "data null",
		docs: []Document{{"a", "a"}},
		replies: []string{
			"{\"data\": null}",
		},
		query: "refunds", topK: 4,
		buildErr: "the embedding index of rag node \"ctx\" cannot be built (invalid_json): node \"ctx\": the embeddings reply has no data list",
		calls:    [][]string{{"a"}},
	},
	{
		name: "data object",
		docs: []Document{{"a", "a"}},
		replies: []string{
			"{\"data\": {}}",
		},
		query: "refunds", topK: 4,
		buildErr: "the embedding index of rag node \"ctx\" cannot be built (invalid_json): node \"ctx\": the embeddings reply has no data list",
		calls:    [][]string{{"a"}},
	},
	{
		name: "too few",
		docs: []Document{{"a", "a"}},
		replies: []string{
			"{\"data\": []}",
		},
		query: "refunds", topK: 4,
		buildErr: "the embedding index of rag node \"ctx\" cannot be built (invalid_json): node \"ctx\": the embeddings reply holds 0 embeddings for 1 inputs",
		calls:    [][]string{{"a"}},
	},
	{
		name: "not object",
		docs: []Document{{"a", "a"}},
		replies: []string{
			"{\"data\": [1]}",
		},
		query: "refunds", topK: 4,
		buildErr: "the embedding index of rag node \"ctx\" cannot be built (invalid_json): node \"ctx\": the embeddings reply has a missing, repeated or out-of-range index: None",
		calls:    [][]string{{"a"}},
	},
	{
		name: "no index",
		docs: []Document{{"a", "a"}},
		replies: []string{
			"{\"data\": [{\"embedding\": [1]}]}",
		},
		query: "refunds", topK: 4,
		buildErr: "the embedding index of rag node \"ctx\" cannot be built (invalid_json): node \"ctx\": the embeddings reply has a missing, repeated or out-of-range index: None",
		calls:    [][]string{{"a"}},
	},
	{
		name: "index true",
		docs: []Document{{"a", "a"}},
		replies: []string{
			"{\"data\": [{\"index\": true, \"embedding\": [1]}]}",
		},
		query: "refunds", topK: 4,
		buildErr: "the embedding index of rag node \"ctx\" cannot be built (invalid_json): node \"ctx\": the embeddings reply has a missing, repeated or out-of-range index: True",
		calls:    [][]string{{"a"}},
	},
	{
		name: "index 0.0",
		docs: []Document{{"a", "a"}},
		replies: []string{
			"{\"data\": [{\"index\": 0.0, \"embedding\": [1]}]}",
		},
		query: "refunds", topK: 4,
		buildErr: "the embedding index of rag node \"ctx\" cannot be built (invalid_json): node \"ctx\": the embeddings reply has a missing, repeated or out-of-range index: 0.0",
		calls:    [][]string{{"a"}},
	},
	{
		name: "index \"0\"",
		docs: []Document{{"a", "a"}},
		replies: []string{
			"{\"data\": [{\"index\": \"0\", \"embedding\": [1]}]}",
		},
		query: "refunds", topK: 4,
		buildErr: "the embedding index of rag node \"ctx\" cannot be built (invalid_json): node \"ctx\": the embeddings reply has a missing, repeated or out-of-range index: '0'",
		calls:    [][]string{{"a"}},
	},
	{
		name: "index -1",
		docs: []Document{{"a", "a"}},
		replies: []string{
			"{\"data\": [{\"index\": -1, \"embedding\": [1]}]}",
		},
		query: "refunds", topK: 4,
		buildErr: "the embedding index of rag node \"ctx\" cannot be built (invalid_json): node \"ctx\": the embeddings reply has a missing, repeated or out-of-range index: -1",
		calls:    [][]string{{"a"}},
	},
	{
		name: "index 1",
		docs: []Document{{"a", "a"}},
		replies: []string{
			"{\"data\": [{\"index\": 1, \"embedding\": [1]}]}",
		},
		query: "refunds", topK: 4,
		buildErr: "the embedding index of rag node \"ctx\" cannot be built (invalid_json): node \"ctx\": the embeddings reply has a missing, repeated or out-of-range index: 1",
		calls:    [][]string{{"a"}},
	},
	{
		name: "index 123456789012345678901234567890",
		docs: []Document{{"a", "a"}},
		replies: []string{
			"{\"data\": [{\"index\": 123456789012345678901234567890, \"embedding\": [1]}]}",
		},
		query: "refunds", topK: 4,
		buildErr: "the embedding index of rag node \"ctx\" cannot be built (invalid_json): node \"ctx\": the embeddings reply has a missing, repeated or out-of-range index: 123456789012345678901234567890",
		calls:    [][]string{{"a"}},
	},
	{
		name: "index 1e0",
		docs: []Document{{"a", "a"}},
		replies: []string{
			"{\"data\": [{\"index\": 1e0, \"embedding\": [1]}]}",
		},
		query: "refunds", topK: 4,
		buildErr: "the embedding index of rag node \"ctx\" cannot be built (invalid_json): node \"ctx\": the embeddings reply has a missing, repeated or out-of-range index: 1.0",
		calls:    [][]string{{"a"}},
	},
	{
		name: "index [0]",
		docs: []Document{{"a", "a"}},
		replies: []string{
			"{\"data\": [{\"index\": [0], \"embedding\": [1]}]}",
		},
		query: "refunds", topK: 4,
		buildErr: "the embedding index of rag node \"ctx\" cannot be built (invalid_json): node \"ctx\": the embeddings reply has a missing, repeated or out-of-range index: [0]",
		calls:    [][]string{{"a"}},
	},
	{
		name: "index {\"a\": 1}",
		docs: []Document{{"a", "a"}},
		replies: []string{
			"{\"data\": [{\"index\": {\"a\": 1}, \"embedding\": [1]}]}",
		},
		query: "refunds", topK: 4,
		buildErr: "the embedding index of rag node \"ctx\" cannot be built (invalid_json): node \"ctx\": the embeddings reply has a missing, repeated or out-of-range index: {'a': 1}",
		calls:    [][]string{{"a"}},
	},
	{
		name: "index null",
		docs: []Document{{"a", "a"}},
		replies: []string{
			"{\"data\": [{\"index\": null, \"embedding\": [1]}]}",
		},
		query: "refunds", topK: 4,
		buildErr: "the embedding index of rag node \"ctx\" cannot be built (invalid_json): node \"ctx\": the embeddings reply has a missing, repeated or out-of-range index: None",
		calls:    [][]string{{"a"}},
	},
	{
		name: "index -0",
		docs: []Document{{"a", "a"}},
		replies: []string{
			"{\"data\": [{\"index\": -0, \"embedding\": [1]}]}",
			"{\"object\": \"list\", \"data\": [{\"index\": 0, \"embedding\": [2]}]}",
		},
		query: "refunds", topK: 4,
		want:  []Passage{{ID: "a", Score: 1.0}},
		calls: [][]string{{"a"}, {"refunds"}},
	},
	{
		name: "repeated",
		docs: []Document{{"a", "a"}, {"b", "b"}},
		replies: []string{
			"{\"data\": [{\"index\": 0, \"embedding\": [1]}, {\"index\": 0, \"embedding\": [1]}]}",
		},
		query: "refunds", topK: 4,
		buildErr: "the embedding index of rag node \"ctx\" cannot be built (invalid_json): node \"ctx\": the embeddings reply has a missing, repeated or out-of-range index: 0",
		calls:    [][]string{{"a", "b"}},
	},
	{
		name: "embedding []",
		docs: []Document{{"a", "a"}},
		replies: []string{
			"{\"data\": [{\"index\": 0, \"embedding\": []}]}",
		},
		query: "refunds", topK: 4,
		buildErr: "the embedding index of rag node \"ctx\" cannot be built (invalid_json): node \"ctx\": the embeddings reply has an embedding that is not a list of numbers at index 0",
		calls:    [][]string{{"a"}},
	},
	{
		name: "embedding [true]",
		docs: []Document{{"a", "a"}},
		replies: []string{
			"{\"data\": [{\"index\": 0, \"embedding\": [true]}]}",
		},
		query: "refunds", topK: 4,
		buildErr: "the embedding index of rag node \"ctx\" cannot be built (invalid_json): node \"ctx\": the embeddings reply has an embedding that is not a list of numbers at index 0",
		calls:    [][]string{{"a"}},
	},
	{
		name: "embedding \"x\"",
		docs: []Document{{"a", "a"}},
		replies: []string{
			"{\"data\": [{\"index\": 0, \"embedding\": \"x\"}]}",
		},
		query: "refunds", topK: 4,
		buildErr: "the embedding index of rag node \"ctx\" cannot be built (invalid_json): node \"ctx\": the embeddings reply has an embedding that is not a list of numbers at index 0",
		calls:    [][]string{{"a"}},
	},
	{
		name: "embedding null",
		docs: []Document{{"a", "a"}},
		replies: []string{
			"{\"data\": [{\"index\": 0, \"embedding\": null}]}",
		},
		query: "refunds", topK: 4,
		buildErr: "the embedding index of rag node \"ctx\" cannot be built (invalid_json): node \"ctx\": the embeddings reply has an embedding that is not a list of numbers at index 0",
		calls:    [][]string{{"a"}},
	},
	{
		name: "embedding [1, \"a\"]",
		docs: []Document{{"a", "a"}},
		replies: []string{
			"{\"data\": [{\"index\": 0, \"embedding\": [1, \"a\"]}]}",
		},
		query: "refunds", topK: 4,
		buildErr: "the embedding index of rag node \"ctx\" cannot be built (invalid_json): node \"ctx\": the embeddings reply has an embedding that is not a list of numbers at index 0",
		calls:    [][]string{{"a"}},
	},
	{
		name: "embedding [[1]]",
		docs: []Document{{"a", "a"}},
		replies: []string{
			"{\"data\": [{\"index\": 0, \"embedding\": [[1]]}]}",
		},
		query: "refunds", topK: 4,
		buildErr: "the embedding index of rag node \"ctx\" cannot be built (invalid_json): node \"ctx\": the embeddings reply has an embedding that is not a list of numbers at index 0",
		calls:    [][]string{{"a"}},
	},
	{
		name: "embedding {\"0\": 1}",
		docs: []Document{{"a", "a"}},
		replies: []string{
			"{\"data\": [{\"index\": 0, \"embedding\": {\"0\": 1}}]}",
		},
		query: "refunds", topK: 4,
		buildErr: "the embedding index of rag node \"ctx\" cannot be built (invalid_json): node \"ctx\": the embeddings reply has an embedding that is not a list of numbers at index 0",
		calls:    [][]string{{"a"}},
	},
	{
		name: "missing embedding",
		docs: []Document{{"a", "a"}},
		replies: []string{
			"{\"data\": [{\"index\": 0}]}",
		},
		query: "refunds", topK: 4,
		buildErr: "the embedding index of rag node \"ctx\" cannot be built (invalid_json): node \"ctx\": the embeddings reply has an embedding that is not a list of numbers at index 0",
		calls:    [][]string{{"a"}},
	},
	{
		name: "lengths",
		docs: []Document{{"a", "a"}, {"b", "b"}},
		replies: []string{
			"{\"object\": \"list\", \"data\": [{\"index\": 0, \"embedding\": [1, 2]}, {\"index\": 1, \"embedding\": [1, 2, 3]}]}",
		},
		query: "refunds", topK: 4,
		buildErr: "the embedding index of rag node \"ctx\" cannot be built (invalid_json): node \"ctx\": the embeddings reply has embeddings of different lengths",
		calls:    [][]string{{"a", "b"}},
	},
	{
		name: "query length",
		docs: []Document{{"a", "a"}},
		replies: []string{
			"{\"object\": \"list\", \"data\": [{\"index\": 0, \"embedding\": [1, 2]}]}",
			"{\"object\": \"list\", \"data\": [{\"index\": 0, \"embedding\": [1, 2, 3]}]}",
		},
		query: "refunds", topK: 4,
		searchErr: "upstream_error", reason: "invalid_json", message: "node \"ctx\": the embeddings reply has a query embedding of length 3, the documents' have 2",
		calls: [][]string{{"a"}, {"refunds"}},
	},
	{
		name: "query count",
		docs: []Document{{"a", "a"}},
		replies: []string{
			"{\"object\": \"list\", \"data\": [{\"index\": 0, \"embedding\": [1, 2]}]}",
			"{\"object\": \"list\", \"data\": [{\"index\": 0, \"embedding\": [1, 2]}, {\"index\": 1, \"embedding\": [1, 2]}]}",
		},
		query: "refunds", topK: 4,
		searchErr: "upstream_error", reason: "invalid_json", message: "node \"ctx\": the embeddings reply holds 2 embeddings for 1 inputs",
		calls: [][]string{{"a"}, {"refunds"}},
	},
	{
		name: "query not a list",
		docs: []Document{{"a", "a"}},
		replies: []string{
			"{\"object\": \"list\", \"data\": [{\"index\": 0, \"embedding\": [1, 2]}]}",
			"{\"data\": \"x\"}",
		},
		query: "refunds", topK: 4,
		searchErr: "upstream_error", reason: "invalid_json", message: "node \"ctx\": the embeddings reply has no data list",
		calls: [][]string{{"a"}, {"refunds"}},
	},
	{
		name: "query bad index",
		docs: []Document{{"a", "a"}},
		replies: []string{
			"{\"object\": \"list\", \"data\": [{\"index\": 0, \"embedding\": [1, 2]}]}",
			"{\"data\": [{\"index\": 1, \"embedding\": [1, 2]}]}",
		},
		query: "refunds", topK: 4,
		searchErr: "upstream_error", reason: "invalid_json", message: "node \"ctx\": the embeddings reply has a missing, repeated or out-of-range index: 1",
		calls: [][]string{{"a"}, {"refunds"}},
	},
	{
		name: "int overflow in query",
		docs: []Document{{"a", "a"}},
		replies: []string{
			"{\"object\": \"list\", \"data\": [{\"index\": 0, \"embedding\": [1, 2]}]}",
			"{\"data\": [{\"index\": 0, \"embedding\": [10000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000, 1]}]}",
		},
		query: "refunds", topK: 4,
		searchErr: "execution_error", reason: "", message: "node \"ctx\" failed: OverflowError: int too large to convert to float",
		calls: [][]string{{"a"}, {"refunds"}},
	},
	{
		name: "bool before overflow",
		docs: []Document{{"a", "a"}},
		replies: []string{
			"{\"data\": [{\"index\": 0, \"embedding\": [10000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000, true]}]}",
		},
		query: "refunds", topK: 4,
		buildErr: "the embedding index of rag node \"ctx\" cannot be built (invalid_json): node \"ctx\": the embeddings reply has an embedding that is not a list of numbers at index 0",
		calls:    [][]string{{"a"}},
	},
	{
		name: "batches",
		docs: ragManyDocs(130),
		replies: []string{
			"{\"object\": \"list\", \"data\": [{\"index\": 0, \"embedding\": [1, 0.0]}, {\"index\": 1, \"embedding\": [1, 0.0078125]}, {\"index\": 2, \"embedding\": [1, 0.015625]}, {\"index\": 3, \"embedding\": [1, 0.0234375]}, {\"index\": 4, \"embedding\": [1, 0.03125]}, {\"index\": 5, \"embedding\": [1, 0.0390625]}, {\"index\": 6, \"embedding\": [1, 0.046875]}, {\"index\": 7, \"embedding\": [1, 0.0546875]}, {\"index\": 8, \"embedding\": [1, 0.0625]}, {\"index\": 9, \"embedding\": [1, 0.0703125]}, {\"index\": 10, \"embedding\": [1, 0.078125]}, {\"index\": 11, \"embedding\": [1, 0.0859375]}, {\"index\": 12, \"embedding\": [1, 0.09375]}, {\"index\": 13, \"embedding\": [1, 0.1015625]}, {\"index\": 14, \"embedding\": [1, 0.109375]}, {\"index\": 15, \"embedding\": [1, 0.1171875]}, {\"index\": 16, \"embedding\": [1, 0.125]}, {\"index\": 17, \"embedding\": [1, 0.1328125]}, {\"index\": 18, \"embedding\": [1, 0.140625]}, {\"index\": 19, \"embedding\": [1, 0.1484375]}, {\"index\": 20, \"embedding\": [1, 0.15625]}, {\"index\": 21, \"embedding\": [1, 0.1640625]}, {\"index\": 22, \"embedding\": [1, 0.171875]}, {\"index\": 23, \"embedding\": [1, 0.1796875]}, {\"index\": 24, \"embedding\": [1, 0.1875]}, {\"index\": 25, \"embedding\": [1, 0.1953125]}, {\"index\": 26, \"embedding\": [1, 0.203125]}, {\"index\": 27, \"embedding\": [1, 0.2109375]}, {\"index\": 28, \"embedding\": [1, 0.21875]}, {\"index\": 29, \"embedding\": [1, 0.2265625]}, {\"index\": 30, \"embedding\": [1, 0.234375]}, {\"index\": 31, \"embedding\": [1, 0.2421875]}, {\"index\": 32, \"embedding\": [1, 0.25]}, {\"index\": 33, \"embedding\": [1, 0.2578125]}, {\"index\": 34, \"embedding\": [1, 0.265625]}, {\"index\": 35, \"embedding\": [1, 0.2734375]}, {\"index\": 36, \"embedding\": [1, 0.28125]}, {\"index\": 37, \"embedding\": [1, 0.2890625]}, {\"index\": 38, \"embedding\": [1, 0.296875]}, {\"index\": 39, \"embedding\": [1, 0.3046875]}, {\"index\": 40, \"embedding\": [1, 0.3125]}, {\"index\": 41, \"embedding\": [1, 0.3203125]}, {\"index\": 42, \"embedding\": [1, 0.328125]}, {\"index\": 43, \"embedding\": [1, 0.3359375]}, {\"index\": 44, \"embedding\": [1, 0.34375]}, {\"index\": 45, \"embedding\": [1, 0.3515625]}, {\"index\": 46, \"embedding\": [1, 0.359375]}, {\"index\": 47, \"embedding\": [1, 0.3671875]}, {\"index\": 48, \"embedding\": [1, 0.375]}, {\"index\": 49, \"embedding\": [1, 0.3828125]}, {\"index\": 50, \"embedding\": [1, 0.390625]}, {\"index\": 51, \"embedding\": [1, 0.3984375]}, {\"index\": 52, \"embedding\": [1, 0.40625]}, {\"index\": 53, \"embedding\": [1, 0.4140625]}, {\"index\": 54, \"embedding\": [1, 0.421875]}, {\"index\": 55, \"embedding\": [1, 0.4296875]}, {\"index\": 56, \"embedding\": [1, 0.4375]}, {\"index\": 57, \"embedding\": [1, 0.4453125]}, {\"index\": 58, \"embedding\": [1, 0.453125]}, {\"index\": 59, \"embedding\": [1, 0.4609375]}, {\"index\": 60, \"embedding\": [1, 0.46875]}, {\"index\": 61, \"embedding\": [1, 0.4765625]}, {\"index\": 62, \"embedding\": [1, 0.484375]}, {\"index\": 63, \"embedding\": [1, 0.4921875]}, {\"index\": 64, \"embedding\": [1, 0.5]}, {\"index\": 65, \"embedding\": [1, 0.5078125]}, {\"index\": 66, \"embedding\": [1, 0.515625]}, {\"index\": 67, \"embedding\": [1, 0.5234375]}, {\"index\": 68, \"embedding\": [1, 0.53125]}, {\"index\": 69, \"embedding\": [1, 0.5390625]}, {\"index\": 70, \"embedding\": [1, 0.546875]}, {\"index\": 71, \"embedding\": [1, 0.5546875]}, {\"index\": 72, \"embedding\": [1, 0.5625]}, {\"index\": 73, \"embedding\": [1, 0.5703125]}, {\"index\": 74, \"embedding\": [1, 0.578125]}, {\"index\": 75, \"embedding\": [1, 0.5859375]}, {\"index\": 76, \"embedding\": [1, 0.59375]}, {\"index\": 77, \"embedding\": [1, 0.6015625]}, {\"index\": 78, \"embedding\": [1, 0.609375]}, {\"index\": 79, \"embedding\": [1, 0.6171875]}, {\"index\": 80, \"embedding\": [1, 0.625]}, {\"index\": 81, \"embedding\": [1, 0.6328125]}, {\"index\": 82, \"embedding\": [1, 0.640625]}, {\"index\": 83, \"embedding\": [1, 0.6484375]}, {\"index\": 84, \"embedding\": [1, 0.65625]}, {\"index\": 85, \"embedding\": [1, 0.6640625]}, {\"index\": 86, \"embedding\": [1, 0.671875]}, {\"index\": 87, \"embedding\": [1, 0.6796875]}, {\"index\": 88, \"embedding\": [1, 0.6875]}, {\"index\": 89, \"embedding\": [1, 0.6953125]}, {\"index\": 90, \"embedding\": [1, 0.703125]}, {\"index\": 91, \"embedding\": [1, 0.7109375]}, {\"index\": 92, \"embedding\": [1, 0.71875]}, {\"index\": 93, \"embedding\": [1, 0.7265625]}, {\"index\": 94, \"embedding\": [1, 0.734375]}, {\"index\": 95, \"embedding\": [1, 0.7421875]}, {\"index\": 96, \"embedding\": [1, 0.75]}, {\"index\": 97, \"embedding\": [1, 0.7578125]}, {\"index\": 98, \"embedding\": [1, 0.765625]}, {\"index\": 99, \"embedding\": [1, 0.7734375]}, {\"index\": 100, \"embedding\": [1, 0.78125]}, {\"index\": 101, \"embedding\": [1, 0.7890625]}, {\"index\": 102, \"embedding\": [1, 0.796875]}, {\"index\": 103, \"embedding\": [1, 0.8046875]}, {\"index\": 104, \"embedding\": [1, 0.8125]}, {\"index\": 105, \"embedding\": [1, 0.8203125]}, {\"index\": 106, \"embedding\": [1, 0.828125]}, {\"index\": 107, \"embedding\": [1, 0.8359375]}, {\"index\": 108, \"embedding\": [1, 0.84375]}, {\"index\": 109, \"embedding\": [1, 0.8515625]}, {\"index\": 110, \"embedding\": [1, 0.859375]}, {\"index\": 111, \"embedding\": [1, 0.8671875]}, {\"index\": 112, \"embedding\": [1, 0.875]}, {\"index\": 113, \"embedding\": [1, 0.8828125]}, {\"index\": 114, \"embedding\": [1, 0.890625]}, {\"index\": 115, \"embedding\": [1, 0.8984375]}, {\"index\": 116, \"embedding\": [1, 0.90625]}, {\"index\": 117, \"embedding\": [1, 0.9140625]}, {\"index\": 118, \"embedding\": [1, 0.921875]}, {\"index\": 119, \"embedding\": [1, 0.9296875]}, {\"index\": 120, \"embedding\": [1, 0.9375]}, {\"index\": 121, \"embedding\": [1, 0.9453125]}, {\"index\": 122, \"embedding\": [1, 0.953125]}, {\"index\": 123, \"embedding\": [1, 0.9609375]}, {\"index\": 124, \"embedding\": [1, 0.96875]}, {\"index\": 125, \"embedding\": [1, 0.9765625]}, {\"index\": 126, \"embedding\": [1, 0.984375]}, {\"index\": 127, \"embedding\": [1, 0.9921875]}]}",
			"{\"object\": \"list\", \"data\": [{\"index\": 0, \"embedding\": [0, 1]}, {\"index\": 1, \"embedding\": [1, 1]}]}",
			"{\"object\": \"list\", \"data\": [{\"index\": 0, \"embedding\": [1, 0.5]}]}",
		},
		query: "refunds", topK: 3,
		want:  []Passage{{ID: "doc064", Score: 0.9999999999999999}, {ID: "doc065", Score: 0.999980590815572}, {ID: "doc063", Score: 0.9999803466844838}},
		calls: ragBatches(3, true),
	},
	{
		name: "batch lengths",
		docs: ragManyDocs(130),
		replies: []string{
			"{\"object\": \"list\", \"data\": [{\"index\": 0, \"embedding\": [1, 0]}, {\"index\": 1, \"embedding\": [1, 1]}, {\"index\": 2, \"embedding\": [1, 2]}, {\"index\": 3, \"embedding\": [1, 3]}, {\"index\": 4, \"embedding\": [1, 4]}, {\"index\": 5, \"embedding\": [1, 5]}, {\"index\": 6, \"embedding\": [1, 6]}, {\"index\": 7, \"embedding\": [1, 7]}, {\"index\": 8, \"embedding\": [1, 8]}, {\"index\": 9, \"embedding\": [1, 9]}, {\"index\": 10, \"embedding\": [1, 10]}, {\"index\": 11, \"embedding\": [1, 11]}, {\"index\": 12, \"embedding\": [1, 12]}, {\"index\": 13, \"embedding\": [1, 13]}, {\"index\": 14, \"embedding\": [1, 14]}, {\"index\": 15, \"embedding\": [1, 15]}, {\"index\": 16, \"embedding\": [1, 16]}, {\"index\": 17, \"embedding\": [1, 17]}, {\"index\": 18, \"embedding\": [1, 18]}, {\"index\": 19, \"embedding\": [1, 19]}, {\"index\": 20, \"embedding\": [1, 20]}, {\"index\": 21, \"embedding\": [1, 21]}, {\"index\": 22, \"embedding\": [1, 22]}, {\"index\": 23, \"embedding\": [1, 23]}, {\"index\": 24, \"embedding\": [1, 24]}, {\"index\": 25, \"embedding\": [1, 25]}, {\"index\": 26, \"embedding\": [1, 26]}, {\"index\": 27, \"embedding\": [1, 27]}, {\"index\": 28, \"embedding\": [1, 28]}, {\"index\": 29, \"embedding\": [1, 29]}, {\"index\": 30, \"embedding\": [1, 30]}, {\"index\": 31, \"embedding\": [1, 31]}, {\"index\": 32, \"embedding\": [1, 32]}, {\"index\": 33, \"embedding\": [1, 33]}, {\"index\": 34, \"embedding\": [1, 34]}, {\"index\": 35, \"embedding\": [1, 35]}, {\"index\": 36, \"embedding\": [1, 36]}, {\"index\": 37, \"embedding\": [1, 37]}, {\"index\": 38, \"embedding\": [1, 38]}, {\"index\": 39, \"embedding\": [1, 39]}, {\"index\": 40, \"embedding\": [1, 40]}, {\"index\": 41, \"embedding\": [1, 41]}, {\"index\": 42, \"embedding\": [1, 42]}, {\"index\": 43, \"embedding\": [1, 43]}, {\"index\": 44, \"embedding\": [1, 44]}, {\"index\": 45, \"embedding\": [1, 45]}, {\"index\": 46, \"embedding\": [1, 46]}, {\"index\": 47, \"embedding\": [1, 47]}, {\"index\": 48, \"embedding\": [1, 48]}, {\"index\": 49, \"embedding\": [1, 49]}, {\"index\": 50, \"embedding\": [1, 50]}, {\"index\": 51, \"embedding\": [1, 51]}, {\"index\": 52, \"embedding\": [1, 52]}, {\"index\": 53, \"embedding\": [1, 53]}, {\"index\": 54, \"embedding\": [1, 54]}, {\"index\": 55, \"embedding\": [1, 55]}, {\"index\": 56, \"embedding\": [1, 56]}, {\"index\": 57, \"embedding\": [1, 57]}, {\"index\": 58, \"embedding\": [1, 58]}, {\"index\": 59, \"embedding\": [1, 59]}, {\"index\": 60, \"embedding\": [1, 60]}, {\"index\": 61, \"embedding\": [1, 61]}, {\"index\": 62, \"embedding\": [1, 62]}, {\"index\": 63, \"embedding\": [1, 63]}, {\"index\": 64, \"embedding\": [1, 64]}, {\"index\": 65, \"embedding\": [1, 65]}, {\"index\": 66, \"embedding\": [1, 66]}, {\"index\": 67, \"embedding\": [1, 67]}, {\"index\": 68, \"embedding\": [1, 68]}, {\"index\": 69, \"embedding\": [1, 69]}, {\"index\": 70, \"embedding\": [1, 70]}, {\"index\": 71, \"embedding\": [1, 71]}, {\"index\": 72, \"embedding\": [1, 72]}, {\"index\": 73, \"embedding\": [1, 73]}, {\"index\": 74, \"embedding\": [1, 74]}, {\"index\": 75, \"embedding\": [1, 75]}, {\"index\": 76, \"embedding\": [1, 76]}, {\"index\": 77, \"embedding\": [1, 77]}, {\"index\": 78, \"embedding\": [1, 78]}, {\"index\": 79, \"embedding\": [1, 79]}, {\"index\": 80, \"embedding\": [1, 80]}, {\"index\": 81, \"embedding\": [1, 81]}, {\"index\": 82, \"embedding\": [1, 82]}, {\"index\": 83, \"embedding\": [1, 83]}, {\"index\": 84, \"embedding\": [1, 84]}, {\"index\": 85, \"embedding\": [1, 85]}, {\"index\": 86, \"embedding\": [1, 86]}, {\"index\": 87, \"embedding\": [1, 87]}, {\"index\": 88, \"embedding\": [1, 88]}, {\"index\": 89, \"embedding\": [1, 89]}, {\"index\": 90, \"embedding\": [1, 90]}, {\"index\": 91, \"embedding\": [1, 91]}, {\"index\": 92, \"embedding\": [1, 92]}, {\"index\": 93, \"embedding\": [1, 93]}, {\"index\": 94, \"embedding\": [1, 94]}, {\"index\": 95, \"embedding\": [1, 95]}, {\"index\": 96, \"embedding\": [1, 96]}, {\"index\": 97, \"embedding\": [1, 97]}, {\"index\": 98, \"embedding\": [1, 98]}, {\"index\": 99, \"embedding\": [1, 99]}, {\"index\": 100, \"embedding\": [1, 100]}, {\"index\": 101, \"embedding\": [1, 101]}, {\"index\": 102, \"embedding\": [1, 102]}, {\"index\": 103, \"embedding\": [1, 103]}, {\"index\": 104, \"embedding\": [1, 104]}, {\"index\": 105, \"embedding\": [1, 105]}, {\"index\": 106, \"embedding\": [1, 106]}, {\"index\": 107, \"embedding\": [1, 107]}, {\"index\": 108, \"embedding\": [1, 108]}, {\"index\": 109, \"embedding\": [1, 109]}, {\"index\": 110, \"embedding\": [1, 110]}, {\"index\": 111, \"embedding\": [1, 111]}, {\"index\": 112, \"embedding\": [1, 112]}, {\"index\": 113, \"embedding\": [1, 113]}, {\"index\": 114, \"embedding\": [1, 114]}, {\"index\": 115, \"embedding\": [1, 115]}, {\"index\": 116, \"embedding\": [1, 116]}, {\"index\": 117, \"embedding\": [1, 117]}, {\"index\": 118, \"embedding\": [1, 118]}, {\"index\": 119, \"embedding\": [1, 119]}, {\"index\": 120, \"embedding\": [1, 120]}, {\"index\": 121, \"embedding\": [1, 121]}, {\"index\": 122, \"embedding\": [1, 122]}, {\"index\": 123, \"embedding\": [1, 123]}, {\"index\": 124, \"embedding\": [1, 124]}, {\"index\": 125, \"embedding\": [1, 125]}, {\"index\": 126, \"embedding\": [1, 126]}, {\"index\": 127, \"embedding\": [1, 127]}]}",
			"{\"object\": \"list\", \"data\": [{\"index\": 0, \"embedding\": [0, 1, 0]}, {\"index\": 1, \"embedding\": [1, 1, 0]}]}",
		},
		query: "refunds", topK: 4,
		buildErr: "the embedding index of rag node \"ctx\" cannot be built (invalid_json): node \"ctx\": the embeddings reply has embeddings of different lengths",
		calls:    ragBatches(2, false),
	},
}

// embeddingStub answers /embeddings with the replies in turn and records
// the inputs of each request.
type embeddingStub struct {
	t       *testing.T
	mu      sync.Mutex
	replies []string
	calls   [][]string
	keys    []string
	auth    []string
}

func (s *embeddingStub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	raw, _ := io.ReadAll(r.Body)
	var body struct {
		Model string   `json:"model"`
		Input []string `json:"input"`
	}
	if r.Method != http.MethodPost || r.URL.Path != "/v1/embeddings" || json.Unmarshal(raw, &body) != nil ||
		body.Model != "emb-model" || r.Header.Get("Content-Type") != "application/json" ||
		r.Header.Get("Accept") != "application/json" {
		s.t.Errorf("unexpected request %s %s %s", r.Method, r.URL.Path, raw)
	}
	if !strings.HasPrefix(string(raw), `{"model":`) {
		s.t.Errorf("the body's keys are not model, input: %s", raw)
	}
	s.calls = append(s.calls, body.Input)
	s.auth = append(s.auth, r.Header.Get("Authorization"))
	if len(s.replies) == 0 {
		s.t.Errorf("an unexpected call: %q", body.Input)
		w.WriteHeader(http.StatusInternalServerError)
		return
	}
	reply := s.replies[0]
	s.replies = s.replies[1:]
	_, _ = io.WriteString(w, reply)
}

func embeddingServer(t *testing.T, replies ...string) (*embeddingStub, EmbeddingModel) {
	stub := &embeddingStub{t: t, replies: replies}
	srv := httptest.NewServer(stub)
	t.Cleanup(srv.Close)
	t.Setenv("RAG_TEST_URL", srv.URL+"/v1//")
	t.Setenv("RAG_TEST_KEY", "k-123")
	return stub, EmbeddingModel{Name: "emb-model", BaseURLEnv: "RAG_TEST_URL", APIKeyEnv: "RAG_TEST_KEY"}
}

func TestRagEmbeddingMatchesPython(t *testing.T) {
	for _, c := range ragEmbedCases {
		t.Run(c.name, func(t *testing.T) {
			stub, m := embeddingServer(t, c.replies...)
			e := NewEmbeddingRetriever("ctx", c.docs, m)
			ctx := context.Background()
			err := e.Build(ctx)
			switch {
			case c.buildErr != "":
				if err == nil || err.Error() != c.buildErr {
					t.Fatalf("Build: %v, want %s", err, c.buildErr)
				}
			case err != nil:
				t.Fatalf("Build: %v", err)
			default:
				got, err := e.Search(ctx, "ctx", c.query, c.topK)
				if c.searchErr != "" {
					var se *Error
					if !errors.As(err, &se) || se.Code != c.searchErr || se.Message != c.message ||
						se.Details["node"] != "ctx" || (c.reason != "" && se.Details["reason"] != c.reason) {
						t.Fatalf("Search: %#v, want %s %s %s", err, c.searchErr, c.reason, c.message)
					}
					wantStatus := http.StatusBadGateway
					if c.searchErr == "execution_error" {
						wantStatus = http.StatusInternalServerError
					}
					if se.Status != wantStatus {
						t.Errorf("status %d", se.Status)
					}
					break
				}
				if err != nil {
					t.Fatalf("Search: %v", err)
				}
				if got == nil {
					t.Errorf("Search gave nil, not an empty list")
				}
				samePassages(t, c.name, got, c.want, 0)
			}
			if len(stub.calls) != len(c.calls) {
				t.Fatalf("%d calls %q, want %d", len(stub.calls), stub.calls, len(c.calls))
			}
			for i := range c.calls {
				if !equalStrings(stub.calls[i], c.calls[i]) {
					t.Errorf("call %d sent %q, want %q", i, stub.calls[i], c.calls[i])
				}
				if stub.auth[i] != "Bearer k-123" {
					t.Errorf("call %d: Authorization %q", i, stub.auth[i])
				}
			}
			if len(stub.replies) != 0 {
				t.Errorf("%d replies left", len(stub.replies))
			}
		})
	}
}

// A 400-digit integer in a document's embedding: Python's float() raises
// OverflowError, which build_indexes does not catch (the service stops
// with a traceback); Go stops with the execution error in the usual text.
func TestRagEmbeddingBuildIntOverflow(t *testing.T) {
	_, m := embeddingServer(t, `{"data": [{"index": 0, "embedding": [1`+strings.Repeat("0", 400)+`]}]}`)
	err := NewEmbeddingRetriever("ctx", []Document{{"a", "a"}}, m).Build(context.Background())
	want := `the embedding index of rag node "ctx" cannot be built (execution_error): node "ctx" failed: OverflowError: int too large to convert to float`
	if err == nil || err.Error() != want {
		t.Fatalf("Build: %v", err)
	}
}

// Without Build, the first search builds the index (python-svc's search
// does too); a failed build is the search's error and is tried again.
func TestRagEmbeddingSearchBuildsOnce(t *testing.T) {
	stub, m := embeddingServer(t,
		`{"data": 5}`,
		`{"data": [{"index": 0, "embedding": [1, 0]}, {"index": 1, "embedding": [0, 2]}]}`,
		`{"data": [{"index": 0, "embedding": [0, 1]}]}`,
		`{"data": [{"index": 0, "embedding": [1, 0]}]}`)
	e := NewEmbeddingRetriever("outer__ctx", []Document{{"a", "x"}, {"b", "y"}}, m)
	_, err := e.Search(context.Background(), "outer__ctx", "q", 4)
	var se *Error
	if !errors.As(err, &se) || se.Message != `node "outer__ctx": the embeddings reply has no data list` ||
		se.Details["node"] != "outer__ctx" || se.Details["reason"] != "invalid_json" || se.Status != 502 {
		t.Fatalf("first search: %#v", err)
	}
	for i, want := range []string{"b", "a"} {
		got, err := e.Search(context.Background(), "outer__ctx", "q", 1)
		if err != nil || len(got) != 1 || got[0].ID != want || got[0].Score != 1 {
			t.Fatalf("search %d: %v %v", i, got, err)
		}
	}
	if err := e.Build(context.Background()); err != nil || len(stub.calls) != 4 {
		t.Fatalf("Build after the index: %v, %d calls", err, len(stub.calls))
	}
}

func TestRagEmbeddingUpstreamFailures(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "" {
			t.Errorf("Authorization sent without a key: %q", r.Header.Get("Authorization"))
		}
		switch r.URL.Path {
		case "/down/embeddings":
			w.WriteHeader(http.StatusServiceUnavailable)
		default:
			_, _ = io.WriteString(w, "not json")
		}
	}))
	defer srv.Close()
	t.Setenv("RAG_TEST_KEY", "")
	docs := []Document{{"a", "a"}}
	for _, c := range []struct {
		base, reason, message string
		status                int
	}{
		{srv.URL + "/down", "status", `node "ctx": the upstream answered 503`, 503},
		{srv.URL + "/text/", "invalid_json", `node "ctx": the upstream reply is not valid JSON`, 0},
		{"ftp://example.com", "connect", `node "ctx": the upstream URL ("ftp://example.com/embeddings") is not an http(s) URL`, 0},
	} {
		t.Setenv("RAG_TEST_URL", c.base)
		m := EmbeddingModel{Name: "emb-model", BaseURLEnv: "RAG_TEST_URL", APIKeyEnv: "RAG_TEST_KEY"}
		err := NewEmbeddingRetriever("ctx", docs, m).Build(context.Background())
		want := `the embedding index of rag node "ctx" cannot be built (` + c.reason + `): ` + c.message
		if err == nil || err.Error() != want {
			t.Errorf("Build: %v, want %s", err, want)
		}
		_, err = NewEmbeddingRetriever("ctx", docs, m).Search(context.Background(), "ctx", "q", 1)
		var se *Error
		if !errors.As(err, &se) || se.Code != "upstream_error" || se.Message != c.message || se.Details["reason"] != c.reason {
			t.Errorf("Search: %#v", err)
		} else if c.status != 0 && se.Details["status"] != c.status {
			t.Errorf("status detail %v", se.Details["status"])
		}
	}
}

func TestRagEmbeddingDefaults(t *testing.T) {
	e := NewEmbeddingRetriever("ctx", nil, EmbeddingModel{})
	if e.model != (EmbeddingModel{"text-embedding-3-small", "OPENAI_BASE_URL", "OPENAI_API_KEY"}) || e.timeout != 30*time.Second {
		t.Fatalf("defaults %+v %v", e.model, e.timeout)
	}
	// No document to embed: no call, and every search is empty.
	if err := e.Build(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got, err := e.Search(context.Background(), "ctx", "q", 3); err != nil || got == nil || len(got) != 0 {
		t.Fatalf("%v %v", got, err)
	}
}

// A call is bounded by its own timeout (30 s; shortened here), not by the
// run's deadline; but a run whose deadline passes or whose request goes
// away during the call is cut (runCut), as python-svc cuts the run.
func TestRagEmbeddingTimeoutAndCut(t *testing.T) {
	arrived := make(chan struct{}, 4)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body) // so the server notices the client leaving
		arrived <- struct{}{}
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	}))
	defer srv.Close()
	t.Setenv("RAG_TEST_URL", srv.URL)
	m := EmbeddingModel{Name: "emb-model", BaseURLEnv: "RAG_TEST_URL", APIKeyEnv: "RAG_TEST_KEY"}
	docs := []Document{{"a", "a"}}

	e := NewEmbeddingRetriever("ctx", docs, m)
	e.timeout = 50 * time.Millisecond
	_, err := e.Search(context.Background(), "ctx", "q", 1)
	var se *Error
	if !errors.As(err, &se) || se.Details["reason"] != "timeout" || se.Message != `node "ctx": the upstream call timed out` {
		t.Fatalf("timeout: %#v", err)
	}
	<-arrived

	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := NewEmbeddingRetriever("ctx", docs, m).Search(ctx, "ctx", "q", 1); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("run deadline: %v", err)
	}
	<-arrived

	ctx, cancel = context.WithCancel(context.Background())
	go func() {
		<-arrived
		cancel()
	}()
	if err := NewEmbeddingRetriever("ctx", docs, m).Build(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v", err)
	}
}

// pyLog is math.log as glibc computes it, where Go's math.Log is an ulp
// off (vectors from Python's math.log on glibc 2.36).
func TestRagPyLog(t *testing.T) {
	for _, c := range [][2]float64{
		{6.5/3.5 + 1, 1.0498221244986776},
		{14, 2.6390573296152584},
		{48, 3.871201010907891},
		{74, 4.30406509320417},
		{176, 5.170483995038151},
		{1.3448750330522072, 0.29630109650835174},
		{1.5403726708074534, 0.43202438118051917},
		{6.0060074948767195, 1.7927602174585815},
		{3.114354553865724, 1.136021924947727},
		{1, 0},
		{2, 0.6931471805599453},
		{1 + 0x1p-52, 2.2204460492503128e-16},
		{0.5, -0.6931471805599453},
		{1.7976931348623157e308, 709.782712893384},
		{0x1p-1022, -708.3964185322641},
	} {
		if got := pyLog(c[0]); got != c[1] {
			t.Errorf("pyLog(%v) = %v, want %v", c[0], got, c[1])
		}
	}
	if pyLog(0) != math.Inf(-1) || !math.IsNaN(pyLog(-1)) || pyLog(math.Inf(1)) != math.Inf(1) || pyLog(5e-324) != math.Log(5e-324) {
		t.Errorf("special values")
	}
}

// pySum is CPython 3.12's sum() of floats (vectors from python3.12).
func TestRagPySumMatchesPython312(t *testing.T) {
	for _, c := range []struct {
		in   []float64
		want float64
	}{
		{[]float64{1e16, 1, -1e16}, 1},
		{[]float64{0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1}, 1},
		{[]float64{math.Copysign(0, -1)}, 0},
		{[]float64{math.Copysign(0, -1), math.Copysign(0, -1)}, 0},
		{[]float64{1e308, 1e308}, math.Inf(1)},
		{[]float64{1e308, 1e308, -1e308}, math.Inf(1)},
		{[]float64{math.Inf(1), math.Inf(-1)}, math.NaN()},
		{[]float64{math.Inf(1), 1}, math.Inf(1)},
		{[]float64{3}, 3},
		{[]float64{1e-300, 1e300, -1e300, 1e-300}, 2e-300},
		{[]float64{0.3, 0.6, -0.9, 1e-17}, -4.5511151231257825e-17},
	} {
		var s pySum
		for _, x := range c.in {
			s.add(x)
		}
		got := s.total()
		if math.Float64bits(got) != math.Float64bits(c.want) && !(math.IsNaN(got) && math.IsNaN(c.want)) {
			t.Errorf("sum(%v) = %v, want %v", c.in, got, c.want)
		}
	}
}

func TestRagLoadDocuments(t *testing.T) {
	docs, err := LoadDocuments([]byte("[\n  {\n    \"id\": \"more/returns.txt\",\n    \"text\": \"Returns <&>\\n\"\n  },\n  {\"text\": \"b\", \"id\": \"é\", \"extra\": 1}\n]\n"))
	if err != nil || len(docs) != 2 || docs[0] != (Document{"more/returns.txt", "Returns <&>\n"}) || docs[1] != (Document{"é", "b"}) {
		t.Fatalf("%v %v", docs, err)
	}
	if docs, err := LoadDocuments([]byte("[]")); err != nil || docs == nil || len(docs) != 0 {
		t.Fatalf("empty: %v %v", docs, err)
	}
	for in, want := range map[string]string{
		`{"id": "a"}`: "documents must be a list of {id, text} objects, not dict",
		`"a"`:         "documents must be a list of {id, text} objects, not str",
		`null`:        "documents must be a list of {id, text} objects, not NoneType",
		`1.5`:         "documents must be a list of {id, text} objects, not float",
		`[{"id": "a", "text": "x"}, {"id": "b"}]`: "document 1 must be an object with text fields id and text",
		`[{"id": 1, "text": "x"}]`:                "document 0 must be an object with text fields id and text",
		`["a"]`:                                   "document 0 must be an object with text fields id and text",
		`[{"id": "é", "text": "x"}, {"id": "é", "text": "y"}]`:                           `two documents have the id "\u00e9"`,
		`[{"id": "a", "text": "x"}, {"id": "b", "text": "x"}, {"id": "a", "text": "z"}]`: `two documents have the id "a"`,
	} {
		if _, err := LoadDocuments([]byte(in)); err == nil || err.Error() != want {
			t.Errorf("%s: %v, want %s", in, err, want)
		}
	}
	for _, in := range []string{`[`, `[] []`, "[{\"id\": \"a\", \"text\": \"\xff\"}]", ``} {
		if _, err := LoadDocuments([]byte(in)); err == nil {
			t.Errorf("%q: no error", in)
		}
	}
}

func TestRagPassagesOutputs(t *testing.T) {
	ps := []Passage{{"refunds.md", "Refunds.", 4.5}, {"b", "Line\n", 1}}
	value := PassagesValue(ps)
	b, _ := json.Marshal(value)
	if string(b) != `[{"id":"refunds.md","score":4.5,"text":"Refunds."},{"id":"b","score":1,"text":"Line\n"}]` {
		t.Errorf("value %s", b)
	}
	if got := PassagesText(ps); got != "Refunds.\n\nLine\n" {
		t.Errorf("text %q", got)
	}
	if v := PassagesValue(nil); v == nil || len(v) != 0 {
		t.Errorf("empty value %#v", v)
	}
	if got := PassagesText(nil); got != "" {
		t.Errorf("empty text %q", got)
	}
	var _ Retriever = NewBM25(nil)
	var _ Retriever = NewEmbeddingRetriever("n", nil, EmbeddingModel{})
}
