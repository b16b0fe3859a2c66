package graph

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"
)

// Retrieval for rag nodes, as python-svc's svc/rag.py: the passages of a
// document list that best match a query, [{"id", "text", "score"}], best
// first (ties by id), only documents scoring above 0. BM25 scores in
// process; Embedding asks an OpenAI-compatible /embeddings API and scores
// by cosine similarity. Neither ever fails on an empty result.

// A Document is one document a rag node searches: the whole text of a file
// of its documents folder, or one entry of its inline list.
type Document struct {
	ID   string `json:"id"`
	Text string `json:"text"`
}

// A Passage is one document found, with its score.
type Passage struct {
	ID, Text string
	Score    float64
}

// A Retriever answers a rag node's query with its best topK passages ([]
// when none scores above 0). node is the rag node's registered name; the
// retrievers here ignore it (an Embedding names the node it was made for in
// its errors).
type Retriever interface {
	Search(ctx context.Context, node, query string, topK int) ([]Passage, error)
}

const (
	ragK1 = 1.5
	ragB  = 0.75
	// ragEmbedBatch is the documents per /embeddings request: providers cap
	// the inputs (and tokens) of one.
	ragEmbedBatch = 128
	// ragEmbedTimeout bounds one /embeddings call, reply included; it is not
	// bounded by the run's deadline (python-svc searches without one), but
	// the run is still cut at its deadline (runCut).
	ragEmbedTimeout = 30 * time.Second

	defaultEmbeddingModel = "text-embedding-3-small"
)

// LoadDocuments reads the [{"id", "text"}] list the compiler copies into the
// project (svc.rag.load_documents): a JSON list of objects whose id and text
// are strings (other keys are ignored), ids unique. The messages are the
// SDK's (_documents), after the JSON and UTF-8 checks of reading the file.
func LoadDocuments(data []byte) ([]Document, error) {
	if !utf8.Valid(data) {
		return nil, errors.New("the documents are not UTF-8")
	}
	var raw any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&raw); err != nil {
		return nil, fmt.Errorf("the documents are not JSON: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("the documents are not JSON: extra data after the list")
	}
	list, ok := raw.([]any)
	if !ok {
		return nil, fmt.Errorf("documents must be a list of {id, text} objects, not %s", ragPyType(raw))
	}
	docs := make([]Document, 0, len(list))
	seen := make(map[string]bool, len(list))
	for i, item := range list {
		obj, _ := item.(map[string]any)
		id, idOK := obj["id"].(string)
		text, textOK := obj["text"].(string)
		if !idOK || !textOK {
			return nil, fmt.Errorf("document %d must be an object with text fields id and text", i)
		}
		if seen[id] {
			quoted, _ := pyJSONASCII(id)
			return nil, fmt.Errorf("two documents have the id %s", quoted)
		}
		seen[id] = true
		docs = append(docs, Document{ID: id, Text: text})
	}
	return docs, nil
}

// ragPyType is the Python type name of a decoded JSON value.
func ragPyType(v any) string {
	switch x := v.(type) {
	case nil:
		return "NoneType"
	case bool:
		return "bool"
	case string:
		return "str"
	case map[string]any:
		return "dict"
	case json.Number:
		if ragIntLiteral(string(x)) {
			return "int"
		}
		return "float"
	}
	return "list"
}

// PassagesValue is the passages as an array output: {"id", "text", "score"}
// objects, best first ([] when there are none).
func PassagesValue(ps []Passage) []any {
	out := make([]any, 0, len(ps))
	for _, p := range ps {
		out = append(out, map[string]any{"id": p.ID, "text": p.Text, "score": p.Score})
	}
	return out
}

// PassagesText is the passages as a string output: their texts, separated
// by a blank line ("" when there are none).
func PassagesText(ps []Passage) string {
	texts := make([]string, len(ps))
	for i, p := range ps {
		texts[i] = p.Text
	}
	return strings.Join(texts, "\n\n")
}

// ragTokens is Python's re.findall(r"\w+", s.lower()): the runs of letters
// (L), numbers (N) and underscores of the lower-cased text. Python's \w on
// str is exactly [\p{L}\p{N}_] (Go's \w is ASCII); combining marks split
// words, as in Python ("i̇" of a lower-cased İ is the word "i").
func ragTokens(s string) []string {
	s = pyLower(s)
	var out []string
	start := -1
	for i, r := range s {
		word := r == '_' || unicode.IsLetter(r) || unicode.IsNumber(r)
		switch {
		case word && start < 0:
			start = i
		case !word && start >= 0:
			out = append(out, s[start:i])
			start = -1
		}
	}
	if start >= 0 {
		out = append(out, s[start:])
	}
	return out
}

// ragScored is one document with its score, before ranking.
type ragScored struct {
	doc   *Document
	score float64
}

// ragRanked keeps the documents scoring above 0 (NaN is not), best first,
// ties by id (byte order of UTF-8 is code point order, as Python compares),
// and returns the first topK (none when topK <= 0).
func ragRanked(scored []ragScored, topK int) []Passage {
	hits := scored[:0:0]
	for _, s := range scored {
		if s.score > 0 {
			hits = append(hits, s)
		}
	}
	sort.Slice(hits, func(i, j int) bool {
		if hits[i].score != hits[j].score {
			return hits[i].score > hits[j].score
		}
		return hits[i].doc.ID < hits[j].doc.ID
	})
	if topK < 0 {
		topK = 0
	}
	if len(hits) > topK {
		hits = hits[:topK]
	}
	out := make([]Passage, len(hits))
	for i, h := range hits {
		out[i] = Passage{ID: h.doc.ID, Text: h.doc.Text, Score: h.score}
	}
	return out
}

// BM25 is Okapi BM25 in process (k1 1.5, b 0.75, idf
// ln((N - df + 0.5) / (df + 0.5) + 1), which stays positive); each query
// word counts as often as it occurs. Its index is built when it is made and
// only read afterwards, so searches may run concurrently.
type BM25 struct {
	docs []Document
	// postings maps a term to the documents holding it, in document order.
	postings map[string][]ragPosting
	idf      map[string]float64
	lengths  []int
	avgdl    float64
}

type ragPosting struct{ doc, tf int }

// NewBM25 indexes the documents: per document its term counts and its
// length (its number of words), and the idf of every term.
func NewBM25(docs []Document) *BM25 {
	x := &BM25{docs: docs, postings: map[string][]ragPosting{}, lengths: make([]int, len(docs))}
	total := 0
	for i, d := range docs {
		counts := map[string]int{}
		words := ragTokens(d.Text)
		for _, w := range words {
			counts[w]++
		}
		x.lengths[i] = len(words)
		total += len(words)
		for term, tf := range counts {
			x.postings[term] = append(x.postings[term], ragPosting{i, tf})
		}
	}
	n := len(docs)
	if n > 0 {
		x.avgdl = float64(total) / float64(n)
	}
	x.idf = make(map[string]float64, len(x.postings))
	for term, p := range x.postings {
		df := len(p)
		x.idf[term] = pyLog((float64(n-df)+0.5)/(float64(df)+0.5) + 1)
	}
	return x
}

// Search scores the documents holding a query word, in Python's order of
// float operations: per query word (a repeated word counts again), per
// document holding it (in document order),
// norm = tf + k1*((1-b) + (b*len)/avgdl) and score += ((idf*tf)*(k1+1))/norm.
// The explicit float64 conversions round each product, so no
// multiply-add is fused on any architecture. It never fails, never waits
// and ignores ctx and node.
func (x *BM25) Search(_ context.Context, _, query string, topK int) ([]Passage, error) {
	scores := map[int]float64{}
	for _, term := range ragTokens(query) {
		idf, ok := x.idf[term]
		if !ok {
			continue
		}
		for _, p := range x.postings[term] {
			tf := float64(p.tf)
			norm := tf + float64(ragK1*((1-ragB)+float64(ragB*float64(x.lengths[p.doc]))/x.avgdl))
			scores[p.doc] += float64(idf*tf*(ragK1+1)) / norm
		}
	}
	scored := make([]ragScored, 0, len(scores))
	for i, s := range scores {
		scored = append(scored, ragScored{&x.docs[i], s})
	}
	return ragRanked(scored, topK), nil
}

// EmbeddingModel is where a rag node's embeddings come from: an
// OpenAI-compatible /embeddings API whose base URL and key are read from
// the environment at call time (defaults text-embedding-3-small,
// OPENAI_BASE_URL and OPENAI_API_KEY).
type EmbeddingModel struct {
	Name, BaseURLEnv, APIKeyEnv string
}

// Embedding scores documents by cosine similarity: the dot product of unit
// embedding vectors. Its index (one vector per non-blank document) is built
// once, by Build at start-up (or by the first search); failures are
// upstream errors naming the rag node.
type Embedding struct {
	node    string
	docs    []Document
	model   EmbeddingModel
	timeout time.Duration

	mu    sync.Mutex
	built bool
	index []ragVector
}

type ragVector struct {
	doc *Document
	vec []float64
}

// NewEmbeddingRetriever is the retriever of the rag node node; its index is
// not built yet (Build).
func NewEmbeddingRetriever(node string, docs []Document, m EmbeddingModel) *Embedding {
	if m.Name == "" {
		m.Name = defaultEmbeddingModel
	}
	if m.BaseURLEnv == "" {
		m.BaseURLEnv = "OPENAI_BASE_URL"
	}
	if m.APIKeyEnv == "" {
		m.APIKeyEnv = "OPENAI_API_KEY"
	}
	return &Embedding{node: node, docs: docs, model: m, timeout: ragEmbedTimeout}
}

// Build embeds every document whose text is not blank, in batches of 128
// (a later call reuses the index). Its error is the start-up failure
// python-svc stops with: the embedding index of rag node "<n>" cannot be
// built (<reason>): <message>.
func (e *Embedding) Build(ctx context.Context) error {
	err := e.build(ctx)
	if err == nil {
		return nil
	}
	if cut := ctx.Err(); cut != nil {
		return cut
	}
	reason, message := "", err.Error()
	var se *Error
	if errors.As(err, &se) {
		reason, _ = se.Details["reason"].(string)
		if reason == "" {
			reason = se.Code
		}
		message = se.Message
	}
	return fmt.Errorf(`the embedding index of rag node "%s" cannot be built (%s): %s`, e.node, reason, message)
}

// BuildIndexes builds the indexes of a service's embedding retrievers at
// start-up, by node name as python-svc does, and stops at the first failure.
func BuildIndexes(ctx context.Context, rs []*Embedding) error {
	sorted := append([]*Embedding(nil), rs...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].node < sorted[j].node })
	for _, r := range sorted {
		if err := r.Build(ctx); err != nil {
			return err
		}
	}
	return nil
}

func (e *Embedding) build(ctx context.Context) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.built {
		return nil
	}
	var kept []*Document
	for i := range e.docs {
		if pyStrip(e.docs[i].Text) != "" {
			kept = append(kept, &e.docs[i])
		}
	}
	index := make([]ragVector, 0, len(kept))
	for start := 0; start < len(kept); start += ragEmbedBatch {
		batch := kept[start:min(start+ragEmbedBatch, len(kept))]
		texts := make([]string, len(batch))
		for i, d := range batch {
			texts[i] = d.Text
		}
		vectors, err := e.embed(ctx, texts)
		if err != nil {
			return err
		}
		for i, d := range batch {
			index = append(index, ragVector{d, ragUnit(vectors[i])})
		}
	}
	for _, v := range index {
		if len(v.vec) != len(index[0].vec) {
			return e.bad("has embeddings of different lengths")
		}
	}
	e.index, e.built = index, true
	return nil
}

// Search embeds the query (one call; none when the index is empty, the
// query is blank or topK <= 0) and ranks the documents by the dot product
// of the unit vectors. A deadline passed or a request gone during the call
// is the run's, not the node's (runCut).
func (e *Embedding) Search(ctx context.Context, _, query string, topK int) ([]Passage, error) {
	ps, err := e.search(ctx, query, topK)
	return ps, runCut(ctx, err)
}

func (e *Embedding) search(ctx context.Context, query string, topK int) ([]Passage, error) {
	if err := e.build(ctx); err != nil {
		return nil, err
	}
	if len(e.index) == 0 || pyStrip(query) == "" || topK <= 0 {
		return []Passage{}, nil
	}
	vectors, err := e.embed(ctx, []string{query})
	if err != nil {
		return nil, err
	}
	q := ragUnit(vectors[0])
	if d := len(e.index[0].vec); len(q) != d {
		return nil, e.bad(fmt.Sprintf("has a query embedding of length %d, the documents' have %d", len(q), d))
	}
	scored := make([]ragScored, len(e.index))
	for i, v := range e.index {
		var s pySum
		for j, x := range q {
			s.add(float64(x * v.vec[j]))
		}
		scored[i] = ragScored{v.doc, s.total()}
	}
	return ragRanked(scored, topK), nil
}

func (e *Embedding) bad(what string) *Error {
	return UpstreamError(e.node, ReasonInvalidJSON, fmt.Sprintf("node %q: the embeddings reply %s", e.node, what))
}

// embeddingsRequest keeps the body's keys in python-svc's order.
type embeddingsRequest struct {
	Model string   `json:"model"`
	Input []string `json:"input"`
}

// embed is one /embeddings call: POST {"model", "input"} to the base URL
// variable (else the default) + /embeddings, with Authorization when the
// key variable is set; the vectors come back in the order of texts, checked
// as python-svc checks them, one error each.
func (e *Embedding) embed(ctx context.Context, texts []string) ([][]float64, error) {
	base := os.Getenv(e.model.BaseURLEnv)
	if base == "" {
		base = defaultBaseURL
	}
	endpoint, err := resolveEndpoint(e.node, strings.TrimRight(base, "/")+"/embeddings")
	if err != nil {
		return nil, err
	}
	headers := map[string]string{}
	if key := os.Getenv(e.model.APIKeyEnv); key != "" {
		headers["Authorization"] = "Bearer " + key
	}
	reply, err := postJSON(ctx, e.node, endpoint, headers, e.timeout, embeddingsRequest{e.model.Name, texts})
	if err != nil {
		return nil, err
	}
	obj, _ := reply.(map[string]any)
	data, ok := obj["data"].([]any)
	if !ok {
		return nil, e.bad("has no data list")
	}
	if len(data) != len(texts) {
		return nil, e.bad(fmt.Sprintf("holds %d embeddings for %d inputs", len(data), len(texts)))
	}
	vectors := make([][]float64, len(texts))
	for _, item := range data {
		obj, _ := item.(map[string]any)
		index, raw := obj["index"], obj["embedding"]
		i, ok := ragIndex(index, len(texts))
		if !ok || vectors[i] != nil {
			return nil, e.bad("has a missing, repeated or out-of-range index: " + pyRepr(index))
		}
		list, _ := raw.([]any)
		numbers := len(list) > 0
		for _, x := range list {
			if _, ok := x.(json.Number); !ok {
				numbers = false
				break
			}
		}
		if !numbers {
			return nil, e.bad(fmt.Sprintf("has an embedding that is not a list of numbers at index %d", i))
		}
		vec := make([]float64, len(list))
		for j, x := range list {
			n := string(x.(json.Number))
			f, err := strconv.ParseFloat(n, 64)
			if err != nil && ragIntLiteral(n) {
				// Python's float() of an int beyond the float range raises
				// OverflowError: as any exception in a node, an execution error.
				return nil, nodeError(e.node, `node "`+e.node+`" failed: OverflowError: int too large to convert to float`)
			}
			vec[j] = f // a float literal beyond the range is ±Inf, as in Python
		}
		vectors[i] = vec
	}
	for _, v := range vectors {
		if len(v) != len(vectors[0]) {
			return nil, e.bad("has embeddings of different lengths")
		}
	}
	return vectors, nil
}

// ragIndex is an embedding's index when it is a JSON integer (Python's int:
// no fraction, no exponent; not a bool) in 0..n-1.
func ragIndex(v any, n int) (int, bool) {
	num, ok := v.(json.Number)
	if !ok || !ragIntLiteral(string(num)) {
		return 0, false
	}
	i, err := strconv.ParseInt(string(num), 10, 64)
	if err != nil || i < 0 || i >= int64(n) {
		return 0, false
	}
	return int(i), true
}

// ragIntLiteral reports whether a JSON number is an integer literal, which
// Python reads as an int rather than a float.
func ragIntLiteral(n string) bool {
	return !strings.ContainsAny(n, ".eE")
}

// ragUnit is the vector scaled to unit length (a zero vector as it is);
// its norm is the square root of Python's sum of the squares.
func ragUnit(v []float64) []float64 {
	var s pySum
	for _, x := range v {
		s.add(float64(x * x))
	}
	norm := math.Sqrt(s.total())
	if norm == 0 {
		return v
	}
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = x / norm
	}
	return out
}

// pySum is Python's sum() of floats (start 0) as CPython 3.12 computes it,
// the version python-svc's image runs (python:3.12-slim): the first item
// is added to the int 0, the others with Neumaier's compensation, which is
// added at the end when it is finite and not zero. (Python 3.10 and 3.11
// add plainly: the last digits of a score may differ there.)
type pySum struct {
	hi, lo float64
	n      int
}

func (s *pySum) add(x float64) {
	if s.n == 0 {
		s.hi = 0 + x
		s.n = 1
		return
	}
	s.n++
	t := s.hi + x
	if math.Abs(s.hi) >= math.Abs(x) {
		s.lo += (s.hi - t) + x
	} else {
		s.lo += (x - t) + s.hi
	}
	s.hi = t
}

func (s *pySum) total() float64 {
	if s.lo != 0 && !math.IsInf(s.lo, 0) && !math.IsNaN(s.lo) {
		return s.hi + s.lo
	}
	return s.hi
}

// pyLog is Python's math.log, which is C's log: glibc's is correctly
// rounded but in rare cases (its error is below 0.52 ulp), while Go's
// math.Log is often 1 ulp off (ln 2.857142857142857 is 1.0498221244986776,
// math.Log says ...778), which moves BM25 scores by an ulp. pyLog computes
// the logarithm in double-double precision (about 104 bits) and rounds it
// once, so it is correctly rounded but for values within 2^-100 of a
// rounding boundary. Zero, negative, subnormal and non-finite arguments are
// left to math.Log (BM25's arguments are all above 1).
func pyLog(x float64) float64 {
	if !(x >= 0x1p-1022) || math.IsInf(x, 0) {
		return math.Log(x)
	}
	if x == 1 {
		return 0
	}
	// x = m * 2^k with m in [sqrt(1/2), sqrt(2)).
	m, k := math.Frexp(x)
	if m < math.Sqrt2/2 {
		m, k = m*2, k-1
	}
	// ln m = 2 atanh(s) = 2s (1 + s²/3 + s⁴/5 + ...), s = (m-1)/(m+1),
	// |s| <= 0.1716: 23 terms reach 2^-110.
	s := ddDiv(dd{m - 1, 0}, ddTwoSum(m, 1)) // m-1 is exact (Sterbenz)
	s2 := ddMul(s, s)
	acc := ddDiv(dd{1, 0}, dd{47, 0})
	for i := 45; i >= 3; i -= 2 {
		acc = ddAdd(ddDiv(dd{1, 0}, dd{float64(i), 0}), ddMul(s2, acc))
	}
	lnM := ddMul(s, ddAdd(dd{1, 0}, ddMul(s2, acc)))
	lnM = dd{2 * lnM.hi, 2 * lnM.lo}
	// k ln 2, with ln 2 in double-double.
	kf := float64(k)
	kLn2 := ddTwoProd(kf, 0x1.62e42fefa39efp-1)
	kLn2 = ddAdd(kLn2, dd{float64(kf * 2.3190468138462996e-17), 0})
	r := ddAdd(kLn2, lnM)
	return r.hi + r.lo
}

// dd is a double-double: the unevaluated sum hi + lo, |lo| <= ulp(hi)/2.
type dd struct{ hi, lo float64 }

func ddTwoSum(a, b float64) dd {
	s := a + b
	bb := s - a
	return dd{s, (a - (s - bb)) + (b - bb)}
}

func ddQuickTwoSum(a, b float64) dd {
	s := a + b
	return dd{s, b - (s - a)}
}

func ddTwoProd(a, b float64) dd {
	p := float64(a * b)
	return dd{p, math.FMA(a, b, -p)}
}

func ddAdd(a, b dd) dd {
	s := ddTwoSum(a.hi, b.hi)
	t := ddTwoSum(a.lo, b.lo)
	s = ddQuickTwoSum(s.hi, s.lo+t.hi)
	return ddQuickTwoSum(s.hi, s.lo+t.lo)
}

func ddMul(a, b dd) dd {
	p := ddTwoProd(a.hi, b.hi)
	p.lo += float64(a.hi*b.lo) + float64(a.lo*b.hi)
	return ddQuickTwoSum(p.hi, p.lo)
}

func ddDiv(a, b dd) dd {
	q1 := a.hi / b.hi
	r := ddAdd(a, ddMul(dd{-q1, 0}, b))
	q2 := r.hi / b.hi
	r = ddAdd(r, ddMul(dd{-q2, 0}, b))
	q3 := r.hi / b.hi
	q := ddQuickTwoSum(q1, q2)
	return ddAdd(q, dd{q3, 0})
}
