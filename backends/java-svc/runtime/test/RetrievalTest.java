package dev.svc.runtime;

import static dev.svc.runtime.ModelStub.*;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.svc.runtime.Retrieval.Document;
import dev.svc.runtime.Retrieval.Embedding;
import dev.svc.runtime.Retrieval.Passage;
import dev.svc.runtime.Retrieval.Retriever;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The rag node's retrievers against python-svc's svc.rag: every expected score below was
 * computed with the SDK under CPython 3.12 (python-svc's image).
 */
class RetrievalTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final AtomicInteger VARS = new AtomicInteger();

    private Stub stub;
    /** The names of this test's base-URL and key variables, set as system properties (EnvFile.get). */
    private String baseVar;
    private String keyVar;

    @BeforeEach
    void start() throws IOException {
        stub = new Stub();
        int n = VARS.incrementAndGet();
        baseVar = "SVC_RAG_TEST_BASE_URL_" + n;
        keyVar = "SVC_RAG_TEST_KEY_" + n;
        System.setProperty(baseVar, stub.url("/v1/"));
        System.setProperty(keyVar, "test-key");
    }

    @AfterEach
    void stop() {
        stub.close();
        System.clearProperty(baseVar);
        System.clearProperty(keyVar);
    }

    // --- BM25 --------------------------------------------------------------------------

    @Test
    void bm25MatchesPythonVectors() throws Exception {
        // The e2e documents folder, as the host reads it (sorted by id).
        Retriever docs = Retrieval.bm25(List.of(
                new Document("more/returns.txt", "Returns of a refund request need the receipt."),
                new Document("refunds.md", "# Refunds\n\nRefunds are paid within 14 days of the request."),
                new Document("shipping.md", "# Shipping\n\nParcels leave the warehouse every weekday.")));
        List<Passage> hits = docs.search("rag", "refunds paid within days of a request", 2);
        assertEquals(List.of("refunds.md", "more/returns.txt"), hits.stream().map(Passage::id).toList());
        assertEquals(4.878471367329767, hits.get(0).score(), 1e-12);
        assertEquals(1.9560453273963314, hits.get(1).score(), 1e-12);
        assertEquals("# Refunds\n\nRefunds are paid within 14 days of the request.", hits.get(0).text());
        assertEquals(List.of(), docs.search("rag", "zebra", 2));

        // Fixture rag_node, node "docs".
        Retriever fixture = Retrieval.bm25(List.of(
                new Document("refunds.md", "Refunds are paid within 14 days of the request."),
                new Document("shipping.md", "Parcels ship every weekday from the central warehouse.")));
        List<Passage> one = fixture.search("docs", "When are refunds paid?", 1);
        assertEquals(1, one.size());
        assertEquals("refunds.md", one.get(0).id());
        assertEquals(2.025816974702419, one.get(0).score(), 1e-12);
    }

    @Test
    void bm25RanksByScoreThenIdInCodePointOrder() throws Exception {
        Retriever r = Retrieval.bm25(List.of(
                new Document("b", "apple apple banana"),
                new Document("a", "Apple  APPLE banana"),
                new Document("\uD83D\uDE00", "apple"),
                new Document("\uFFFD", "apple"),
                new Document("z", "cherry pie, \u039f\u0394\u039f\u03a3")));
        // Each query word counts as often as it occurs; U+FFFD sorts before U+1F600 (a surrogate pair).
        assertPassages(List.of(
                new Passage("z", "cherry pie, \u039f\u0394\u039f\u03a3", 1.1913467165874059),
                new Passage("\uFFFD", "apple", 0.7625307944505034),
                new Passage("\uD83D\uDE00", "apple", 0.7625307944505034),
                new Passage("a", "Apple  APPLE banana", 0.7359308830161835),
                new Passage("b", "apple apple banana", 0.7359308830161835)),
                r.search("n", "Apple apple cherry", 10));
        assertPassages(List.of(
                new Passage("\uFFFD", "apple", 0.3812653972252517),
                new Passage("\uD83D\uDE00", "apple", 0.3812653972252517),
                new Passage("a", "Apple  APPLE banana", 0.36796544150809174),
                new Passage("b", "apple apple banana", 0.36796544150809174)),
                r.search("n", "apple", 10));
        // The final sigma of the document matches a query written with one (and the capital).
        assertPassages(List.of(new Passage("z", "cherry pie, \u039f\u0394\u039f\u03a3", 2.3826934331748117)),
                r.search("n", "\u03bf\u03b4\u03bf\u03c2 cherry", 1));
        assertPassages(List.of(new Passage("z", "cherry pie, \u039f\u0394\u039f\u03a3", 1.1913467165874059)),
                r.search("n", "\u039f\u0394\u039f\u03a3", 10));
        assertEquals(List.of(), r.search("n", "apple", 0));
        assertEquals(List.of(), r.search("n", "apple", -3));
        assertEquals(List.of(), r.search("n", "", 3));
        assertEquals(List.of(), Retrieval.bm25(List.of()).search("n", "apple", 3));
        assertEquals(List.of(), Retrieval.bm25(List.of(new Document("x", ""), new Document("y", "...")))
                .search("n", "apple", 3));
    }

    @Test
    void tokensAsPython() {
        // re.findall(r"\w+", s.lower()) under CPython 3.12.
        assertEquals(List.of("\u00fcn\u00efcode_42", "na\u00efve", "i", "stanbul", "\u03bf\u03b4\u03bf\u03c2",
                "\u03c3\u03b1\u03c2", "x\u00b2\u00b3", "\u00bd", "\u217b", "\uD835\uDFD8\uD835\uDFD9", "a", "b",
                "\u4f60\u597d", "join_"),
                Retrieval.tokens("\u00dcn\u00efcode_42 na\u00efve \u0130stanbul \u039f\u0394\u039f\u03a3 "
                        + "\u03a3\u0391\u03a3. x\u00b2\u00b3 \u00bd \u216b \uD835\uDFD8\uD835\uDFD9 a\u0301b "
                        + "\u4f60\u597d \u203fjoin_"));
        // Python's Final_Sigma rule, not Java's (which looks at word boundaries).
        assertEquals(List.of("\u00df1\u03c3"), Retrieval.tokens("\u0345\u00df1\u03a3"));
        assertEquals(List.of("a\u00df\u01c6", "\u03c2"), Retrieval.tokens("a\u1e9e\u01c5\u0345.\u0301\u03a3"));
        assertEquals(List.of("\u03c3\u03c3", "i"), Retrieval.tokens(" \u03a3\u03a3'.\u2019\u0130"));
        assertEquals(List.of("\u00df\u03c2", "1\u03c3\u00df"), Retrieval.tokens("\u1e9e\u03a3\u03011\u03a3\u1e9e"));
        assertEquals(List.of("a", "\u03c2"), Retrieval.tokens("a\u2019.\u03a3.\u2019\u00ad"));
        assertEquals(List.of("\u03c3"), Retrieval.tokens("\u03a3"));
    }

    @Test
    void documentsAreChecked() {
        IllegalArgumentException twice = assertThrows(IllegalArgumentException.class, () -> Retrieval.bm25(
                List.of(new Document("a", "x"), new Document("a", "y"))));
        assertEquals("two documents have the id \"a\"", twice.getMessage());
        IllegalArgumentException noText = assertThrows(IllegalArgumentException.class, () -> Retrieval.embedding(
                "n", List.of(new Document("a", "x"), new Document("b", null)), null, null, null));
        assertEquals("document 1 must be an object with text fields id and text", noText.getMessage());
    }

    @Test
    void loadReadsTheCompiledDocuments() throws Exception {
        Path dir = Path.of(RetrievalTest.class.getProtectionDomain().getCodeSource().getLocation().toURI())
                .resolve("documents");
        Files.createDirectories(dir);
        String name = "rag-test-" + System.nanoTime();
        Path ok = dir.resolve(name + ".json");
        Path notList = dir.resolve(name + "-dict.json");
        Path badDoc = dir.resolve(name + "-bad.json");
        Path twice = dir.resolve(name + "-twice.json");
        try {
            // What python-svc writes: pretty-printed [{"id", "text"}].
            Files.writeString(ok, "[\n  {\n    \"id\": \"more/returns.txt\",\n    \"text\": \"Returns \u00e9\\n\"\n  },\n"
                    + "  {\n    \"id\": \"refunds.md\",\n    \"text\": \"\",\n    \"extra\": 1\n  }\n]\n",
                    StandardCharsets.UTF_8);
            Files.writeString(notList, "{\"id\": \"a\", \"text\": \"b\"}");
            Files.writeString(badDoc, "[{\"id\": \"a\", \"text\": \"b\"}, {\"id\": 1, \"text\": \"b\"}]");
            Files.writeString(twice, "[{\"id\": \"a\", \"text\": \"b\"}, {\"id\": \"a\", \"text\": \"c\"}]");
            assertEquals(List.of(new Document("more/returns.txt", "Returns \u00e9\n"), new Document("refunds.md", "")),
                    Retrieval.load("/documents/" + name + ".json"));
            assertEquals("the documents file /documents/" + name + "-dict.json is not a list of {id, text}: "
                    + "documents must be a list of {id, text} objects, not dict",
                    assertThrows(IllegalStateException.class,
                            () -> Retrieval.load("/documents/" + name + "-dict.json")).getMessage());
            assertEquals("the documents file /documents/" + name + "-bad.json is not a list of {id, text}: "
                    + "document 1 must be an object with text fields id and text",
                    assertThrows(IllegalStateException.class,
                            () -> Retrieval.load("/documents/" + name + "-bad.json")).getMessage());
            assertEquals("the documents file /documents/" + name + "-twice.json is not a list of {id, text}: "
                    + "two documents have the id \"a\"",
                    assertThrows(IllegalStateException.class,
                            () -> Retrieval.load("/documents/" + name + "-twice.json")).getMessage());
            assertEquals("cannot read the documents file /documents/none.json: No such file or directory",
                    assertThrows(IllegalStateException.class, () -> Retrieval.load("/documents/none.json"))
                            .getMessage());
        } finally {
            for (Path p : List.of(ok, notList, badDoc, twice)) {
                Files.deleteIfExists(p);
            }
        }
    }

    @Test
    void outputsForArrayAndStringFields() throws Exception {
        List<Passage> ps = List.of(new Passage("a", "first", 1.5), new Passage("b", "second\n", 0.25));
        List<Object> value = Retrieval.value(ps);
        assertEquals("[{\"id\":\"a\",\"text\":\"first\",\"score\":1.5},{\"id\":\"b\",\"text\":\"second\\n\",\"score\":0.25}]",
                JSON.writeValueAsString(value));
        assertTrue(value.get(0) instanceof LinkedHashMap<?, ?>);
        assertEquals("first\n\nsecond\n", Retrieval.text(ps));
        assertEquals(List.of(), Retrieval.value(List.of()));
        assertEquals("", Retrieval.text(List.of()));
    }

    @Test
    void floatSumIsCPython312s() {
        // CPython 3.12+ sums floats with Neumaier's compensation (3.11: 0.9999999999999999).
        double[] tenths = new double[10];
        java.util.Arrays.fill(tenths, 0.1);
        assertEquals(1.0, Retrieval.pySum(tenths));
        assertEquals(1.0, Retrieval.pySum(new double[] {1e100, 1.0, -1e100}));
        assertEquals(Double.POSITIVE_INFINITY, Retrieval.pySum(new double[] {1e308, 1e308, -1e308}));
        assertEquals(Double.POSITIVE_INFINITY, Retrieval.pySum(new double[] {Double.POSITIVE_INFINITY, 1.0}));
        assertEquals(0.0, Retrieval.pySum(new double[] {-0.0}));
        assertEquals(Double.doubleToLongBits(0.0), Double.doubleToLongBits(Retrieval.pySum(new double[] {-0.0})));
        double[] sevenths = new double[7];
        java.util.Arrays.fill(sevenths, 0.1);
        assertEquals(0.3779644730092272, Retrieval.unit(sevenths)[6]);
        assertEquals(List.of(0.6, 0.8), boxed(Retrieval.unit(new double[] {3, 4})));
        assertEquals(List.of(0.0, 0.0), boxed(Retrieval.unit(new double[] {0, 0})));
    }

    // --- embeddings --------------------------------------------------------------------

    private static final Map<String, List<Double>> VECTORS = Map.of(
            "Refunds and returns.", List.of(1.0, 2.0, 3.0, 0.1, 0.7),
            "Shipping", List.of(-1.0, 0.5, 0.0, 0.0, 0.0),
            "Refund policy", List.of(0.9, 2.1, 2.5, 0.3, 0.1),
            "refund?", List.of(1.0, 2.0, 2.9, 0.2, 0.5));

    /** An /embeddings provider that knows VECTORS (others: [1, 0, 0, 0, 0]) and answers in reverse order. */
    private void embeddingsFromTable() {
        stub.routes.put("/v1/embeddings", r -> {
            List<?> input = (List<?>) r.json().get("input");
            List<Object> data = new ArrayList<>();
            for (int i = input.size() - 1; i >= 0; i--) {
                Map<String, Object> item = new LinkedHashMap<>();
                item.put("object", "embedding");
                item.put("index", i);
                item.put("embedding", VECTORS.getOrDefault((String) input.get(i), List.of(1.0, 0.0, 0.0, 0.0, 0.0)));
                data.add(item);
            }
            return new Reply(200, JSON.writeValueAsString(Map.of("object", "list", "data", data)));
        });
    }

    private Embedding context(List<Document> docs) {
        return Retrieval.embedding("context", docs, null, baseVar, keyVar);
    }

    private static final List<Document> DOCS = List.of(
            new Document("a", "Refunds and returns."),
            new Document("b", "\u00a0\u2007\u001c \n"),
            new Document("c", "Shipping"),
            new Document("d", "Refund policy"));

    @Test
    void embeddingIndexAndSearchAsPython() throws Exception {
        embeddingsFromTable();
        Embedding e = context(DOCS);
        e.buildAtStartup();
        List<Request> calls = stub.to("/v1/embeddings");
        assertEquals(1, calls.size());
        // The blank document is left out; the base URL's trailing slash is dropped.
        assertEquals("{\"model\":\"text-embedding-3-small\",\"input\":[\"Refunds and returns.\",\"Shipping\","
                + "\"Refund policy\"]}", calls.get(0).body());
        assertEquals("Bearer test-key", calls.get(0).header("Authorization"));
        assertEquals("application/json", calls.get(0).header("Content-Type"));
        assertEquals("application/json", calls.get(0).header("Accept"));
        e.build(); // built once
        assertEquals(1, stub.to("/v1/embeddings").size());

        // Python 3.12: unit vectors, compensated dot products; "c" scores below 0.
        assertPassagesExactly(List.of(new Passage("a", "Refunds and returns.", 0.9982741210409067),
                new Passage("d", "Refund policy", 0.9896715350726012)), e.search("context", "refund?", 3));
        assertPassagesExactly(List.of(new Passage("a", "Refunds and returns.", 0.9982741210409067)),
                e.search("context", "refund?", 1));
        calls = stub.to("/v1/embeddings");
        assertEquals(3, calls.size());
        assertEquals("{\"model\":\"text-embedding-3-small\",\"input\":[\"refund?\"]}", calls.get(2).body());
        assertEquals("/v1/embeddings", calls.get(2).path());
    }

    @Test
    void embeddingSearchBuildsTheIndexWhenNotBuilt() throws Exception {
        embeddingsFromTable();
        Embedding e = Retrieval.embedding("context", DOCS, "my-embedder", baseVar, keyVar);
        assertEquals("context", e.node());
        assertEquals(List.of("a", "d"), e.search("context", "refund?", 5).stream().map(Passage::id).toList());
        List<Request> calls = stub.to("/v1/embeddings");
        assertEquals(2, calls.size());
        assertEquals("my-embedder", calls.get(0).json().get("model"));
        assertEquals(List.of("refund?"), calls.get(1).json().get("input"));
    }

    @Test
    void embeddingMakesNoCallForNothingToFind() throws Exception {
        embeddingsFromTable();
        Embedding e = context(DOCS);
        e.build();
        assertEquals(1, stub.to("/v1/embeddings").size());
        assertEquals(List.of(), e.search("context", " \u3000\n\u0085", 3));
        assertEquals(List.of(), e.search("context", "refund?", 0));
        assertEquals(List.of(), e.search("context", "refund?", -1));
        assertEquals(1, stub.to("/v1/embeddings").size());

        // No document, or only blank ones: an empty index, built without a call.
        Embedding none = context(List.of(new Document("x", "  "), new Document("y", "")));
        none.buildAtStartup();
        assertEquals(List.of(), none.search("context", "refund?", 3));
        Embedding empty = context(List.of());
        empty.build();
        assertEquals(List.of(), empty.search("context", "refund?", 3));
        assertEquals(1, stub.to("/v1/embeddings").size());
    }

    @Test
    void embeddingBatchesOf128() throws Exception {
        embeddingsFromTable();
        List<Document> docs = new ArrayList<>();
        for (int i = 0; i < 300; i++) {
            docs.add(new Document(String.format("doc%03d", i), i % 100 == 7 ? "" : "text " + i));
        }
        Embedding e = context(docs);
        e.build();
        List<Request> calls = stub.to("/v1/embeddings");
        assertEquals(List.of(128, 128, 41), calls.stream().map(r -> ((List<?>) r.json().get("input")).size()).toList());
        assertEquals("text 0", ((List<?>) calls.get(0).json().get("input")).get(0));
        assertEquals("text 130", ((List<?>) calls.get(1).json().get("input")).get(0));
        // Every document has the same vector: all tie, ranked by id.
        assertEquals(List.of("doc000", "doc001", "doc002"),
                e.search("context", "text", 3).stream().map(Passage::id).toList());
    }

    @Test
    void embeddingReplyIsValidated() throws Exception {
        List<Document> one = List.of(new Document("a", "x"));
        List<Document> two = List.of(new Document("a", "x"), new Document("b", "y"));
        assertBadReply(one, "{}", "has no data list");
        assertBadReply(one, "[1]", "has no data list");
        assertBadReply(one, "{\"data\":{\"index\":0}}", "has no data list");
        assertBadReply(one, "{\"data\":[]}", "holds 0 embeddings for 1 inputs");
        assertBadReply(two, "{\"data\":[{\"index\":0,\"embedding\":[1]}]}", "holds 1 embeddings for 2 inputs");
        assertBadReply(one, "{\"data\":[{\"embedding\":[1]}]}", "has a missing, repeated or out-of-range index: None");
        assertBadReply(one, "{\"data\":[5]}", "has a missing, repeated or out-of-range index: None");
        assertBadReply(one, "{\"data\":[{\"index\":true,\"embedding\":[1]}]}",
                "has a missing, repeated or out-of-range index: True");
        assertBadReply(one, "{\"data\":[{\"index\":0.0,\"embedding\":[1]}]}",
                "has a missing, repeated or out-of-range index: 0.0");
        assertBadReply(one, "{\"data\":[{\"index\":\"0\",\"embedding\":[1]}]}",
                "has a missing, repeated or out-of-range index: '0'");
        assertBadReply(one, "{\"data\":[{\"index\":1,\"embedding\":[1]}]}",
                "has a missing, repeated or out-of-range index: 1");
        assertBadReply(one, "{\"data\":[{\"index\":-1,\"embedding\":[1]}]}",
                "has a missing, repeated or out-of-range index: -1");
        assertBadReply(one, "{\"data\":[{\"index\":100000000000000000000000,\"embedding\":[1]}]}",
                "has a missing, repeated or out-of-range index: 100000000000000000000000");
        assertBadReply(two, "{\"data\":[{\"index\":0,\"embedding\":[1]},{\"index\":0,\"embedding\":[1]}]}",
                "has a missing, repeated or out-of-range index: 0");
        assertBadReply(one, "{\"data\":[{\"index\":0,\"embedding\":[]}]}",
                "has an embedding that is not a list of numbers at index 0");
        assertBadReply(two, "{\"data\":[{\"index\":0,\"embedding\":[1]},{\"index\":1,\"embedding\":[1,true]}]}",
                "has an embedding that is not a list of numbers at index 1");
        assertBadReply(one, "{\"data\":[{\"index\":0,\"embedding\":\"1\"}]}",
                "has an embedding that is not a list of numbers at index 0");
        assertBadReply(one, "{\"data\":[{\"index\":0,\"embedding\":[null]}]}",
                "has an embedding that is not a list of numbers at index 0");
        assertBadReply(two, "{\"data\":[{\"index\":1,\"embedding\":[1,2]},{\"index\":0,\"embedding\":[1]}]}",
                "has embeddings of different lengths");
        // The index check comes first, item by item.
        assertBadReply(two, "{\"data\":[{\"index\":0,\"embedding\":[]},{\"index\":7,\"embedding\":[1]}]}",
                "has an embedding that is not a list of numbers at index 0");

        // Integers, floats and numbers beyond the doubles' range as Python's json reads them.
        stub.routes.put("/v1/embeddings", r -> new Reply(200, "{\"data\":[{\"index\":0,\"embedding\":[3,4e0]}]}"));
        Embedding ok = context(one);
        ok.build();
        assertPassagesExactly(List.of(new Passage("a", "x", 1.0)), ok.search("context", "q", 1));
        stub.routes.put("/v1/embeddings", r -> new Reply(200,
                "{\"data\":[{\"index\":0,\"embedding\":[1" + "0".repeat(400) + "]}]}"));
        Retrieval.OverflowError overflow = assertThrows(Retrieval.OverflowError.class, () -> context(one).build());
        assertEquals("int too large to convert to float", overflow.getMessage());
    }

    @Test
    void embeddingQueryOfAnotherLength() throws Exception {
        stub.routes.put("/v1/embeddings", r -> ((List<?>) r.json().get("input")).get(0).equals("q")
                ? new Reply(200, "{\"data\":[{\"index\":0,\"embedding\":[1,2,3]}]}")
                : new Reply(200, "{\"data\":[{\"index\":0,\"embedding\":[1,2]}]}"));
        Embedding e = context(List.of(new Document("a", "x")));
        e.build();
        SvcError err = assertThrows(SvcError.class, () -> e.search("context", "q", 1));
        assertError(err, 502, "upstream_error",
                "node \"context\": the embeddings reply has a query embedding of length 3, the documents' have 2",
                details("context", "invalid_json"));
    }

    @Test
    void embeddingBatchesOfDifferentLengths() throws Exception {
        stub.routes.put("/v1/embeddings", r -> {
            List<?> input = (List<?>) r.json().get("input");
            List<Object> data = new ArrayList<>();
            for (int i = 0; i < input.size(); i++) {
                data.add(Map.of("index", i, "embedding", input.size() == 128 ? List.of(1, 2) : List.of(1, 2, 3)));
            }
            return new Reply(200, JSON.writeValueAsString(Map.of("data", data)));
        });
        List<Document> docs = new ArrayList<>();
        for (int i = 0; i < 129; i++) {
            docs.add(new Document("d" + i, "t" + i));
        }
        Embedding e = context(docs);
        SvcError err = assertThrows(SvcError.class, e::build);
        assertError(err, 502, "upstream_error", "node \"context\": the embeddings reply has embeddings of different lengths",
                details("context", "invalid_json"));
        assertEquals(2, stub.to("/v1/embeddings").size());
    }

    @Test
    void embeddingBuildFailureStopsTheService() throws Exception {
        stub.routes.put("/v1/embeddings", r -> new Reply(503, "{}"));
        Embedding e = context(List.of(new Document("a", "x")));
        SvcError err = assertThrows(SvcError.class, e::build);
        Map<String, Object> status = details("context", "status");
        status.put("status", 503);
        assertError(err, 502, "upstream_error", "node \"context\": the upstream answered 503", status);
        IllegalStateException stop = assertThrows(IllegalStateException.class, e::buildAtStartup);
        assertEquals("the embedding index of rag node \"context\" cannot be built (status): "
                + "node \"context\": the upstream answered 503", stop.getMessage());

        stub.routes.put("/v1/embeddings", r -> new Reply(200, "{\"data\":[]"));
        assertEquals("the embedding index of rag node \"context\" cannot be built (invalid_json): "
                + "node \"context\": the upstream reply is not valid JSON",
                assertThrows(IllegalStateException.class, e::buildAtStartup).getMessage());
        stub.routes.put("/v1/embeddings", r -> new Reply(200, "{\"data\":[]}"));
        assertEquals("the embedding index of rag node \"context\" cannot be built (invalid_json): "
                + "node \"context\": the embeddings reply holds 0 embeddings for 1 inputs",
                assertThrows(IllegalStateException.class, e::buildAtStartup).getMessage());

        // Several retrievers: built in the order of their nodes' names, the first failure stops.
        embeddingsFromTable();
        Embedding zeta = Retrieval.embedding("zeta", List.of(new Document("a", "x")), null, baseVar, keyVar);
        Embedding alpha = Retrieval.embedding("alpha", List.of(new Document("a", "x")), null, "SVC_RAG_TEST_NOT_HTTP",
                keyVar);
        System.setProperty("SVC_RAG_TEST_NOT_HTTP", "ftp://example.test/v1");
        int before = stub.to("/v1/embeddings").size();
        try {
            assertEquals("the embedding index of rag node \"alpha\" cannot be built (connect): node \"alpha\": "
                    + "the upstream URL (\"ftp://example.test/v1/embeddings\") is not an http(s) URL",
                    assertThrows(IllegalStateException.class, () -> Retrieval.buildIndexes(List.of(zeta, alpha)))
                            .getMessage());
            assertEquals(before, stub.to("/v1/embeddings").size());
        } finally {
            System.clearProperty("SVC_RAG_TEST_NOT_HTTP");
        }
        // A failed build is tried again by the next search.
        assertEquals(List.of("a"), e.search("context", "refund?", 1).stream().map(Passage::id).toList());
    }

    @Test
    void embeddingBaseUrlAndKey() throws Exception {
        embeddingsFromTable();
        // Unset or empty: OpenAI's URL; trailing slashes go.
        assertEquals("https://api.openai.com/v1", Retrieval.embedding("n", List.of(), null,
                "SVC_RAG_TEST_UNSET", null).baseUrl());
        System.setProperty("SVC_RAG_TEST_SLASHES", "http://h.test/v1///");
        try {
            assertEquals("http://h.test/v1", Retrieval.embedding("n", List.of(), null, "SVC_RAG_TEST_SLASHES", null)
                    .baseUrl());
        } finally {
            System.clearProperty("SVC_RAG_TEST_SLASHES");
        }
        // No key: no Authorization header.
        Embedding open = Retrieval.embedding("context", List.of(new Document("a", "x")), null, baseVar,
                "SVC_RAG_TEST_UNSET");
        open.build();
        assertNull(stub.to("/v1/embeddings").get(0).header("Authorization"));
        // The key's ${NAME} references are expanded from the environment (unset: empty).
        System.setProperty(keyVar, "k${SVC_RAG_TEST_UNSET_VARIABLE}ey");
        context(List.of(new Document("a", "x"))).build();
        assertEquals("Bearer key", stub.to("/v1/embeddings").get(1).header("Authorization"));
    }

    @Test
    void embeddingCallsTimeOut() throws Exception {
        assertEquals(Duration.ofSeconds(30), Retrieval.EMBED_TIMEOUT);
        stub.routes.put("/v1/embeddings", r -> {
            Thread.sleep(3000);
            return new Reply(200, "{}");
        });
        Embedding slow = new Embedding("context", List.of(new Document("a", "x")), null, baseVar, keyVar,
                Duration.ofMillis(300));
        SvcError err = assertThrows(SvcError.class, slow::build);
        assertError(err, 502, "upstream_error", "node \"context\": the upstream call timed out",
                details("context", "timeout"));
    }

    // --- helpers -----------------------------------------------------------------------

    private void assertBadReply(List<Document> docs, String reply, String what) throws Exception {
        stub.routes.put("/v1/embeddings", r -> new Reply(200, reply));
        SvcError err = assertThrows(SvcError.class, () -> context(docs).build(), reply);
        assertError(err, 502, "upstream_error", "node \"context\": the embeddings reply " + what,
                details("context", "invalid_json"));
    }

    /** Ids and texts exactly, scores within 1e-12 (math.log is the C library's). */
    private static void assertPassages(List<Passage> expected, List<Passage> actual) {
        assertEquals(expected.stream().map(p -> p.id() + "\u0000" + p.text()).toList(),
                actual.stream().map(p -> p.id() + "\u0000" + p.text()).toList());
        for (int i = 0; i < expected.size(); i++) {
            assertEquals(expected.get(i).score(), actual.get(i).score(), 1e-12);
        }
    }

    private static void assertPassagesExactly(List<Passage> expected, List<Passage> actual) {
        assertEquals(expected, actual);
    }

    private static List<Double> boxed(double[] v) {
        List<Double> out = new ArrayList<>();
        for (double d : v) {
            out.add(d);
        }
        return out;
    }
}
