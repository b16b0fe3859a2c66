package dev.svc.runtime;

import java.io.IOException;
import java.io.InputStream;
import java.math.BigInteger;
import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Retrieval for {@code rag} nodes, as python-svc's {@code svc.rag}: the passages of a
 * document list that best match a query, {@code [{"id", "text", "score"}]}, best first
 * (ties by id), only documents scoring above 0.
 *
 * <ul>
 * <li>{@link #bm25}: Okapi BM25 in process, no network.
 * <li>{@link #embedding}: an OpenAI-compatible {@code /embeddings} API and cosine
 * similarity. Its index (one embedding per non-blank document) is built once, at
 * start-up ({@link Embedding#buildAtStartup} or {@link #buildIndexes}), so a broken
 * endpoint stops the service rather than failing the first request.
 * </ul>
 *
 * <p>Words are {@code \w+} of Python's {@code str.lower()} ({@link #tokens}, {@link #lower}).
 * Floating point follows CPython's evaluation order. Two places can still differ from
 * python-svc in the last bit: {@code math.log} is the C library's, this is
 * {@link Math#log} (they differ for about 1 argument in 1000), and {@code sum()} of floats
 * is compensated (Neumaier) from Python 3.12 on, the version of python-svc's image, and
 * plain before: this is 3.12's (see {@link #pySum}).
 *
 * <p>Uses {@link PyJson} (strip, repr, json.dumps, json.loads) and {@link Upstream}.
 */
public final class Retrieval {
    public static final double K1 = 1.5;
    public static final double B = 0.75;
    public static final String DEFAULT_EMBEDDING_MODEL = "text-embedding-3-small";
    public static final String DEFAULT_BASE_URL = "https://api.openai.com/v1";
    public static final String DEFAULT_BASE_URL_ENV = "OPENAI_BASE_URL";
    public static final String DEFAULT_API_KEY_ENV = "OPENAI_API_KEY";
    /** Documents per /embeddings request: providers cap the inputs (and tokens) of one. */
    public static final int EMBED_BATCH = 128;
    /** The timeout of one /embeddings call; no run deadline bounds it. */
    public static final Duration EMBED_TIMEOUT = Duration.ofMillis(30000);

    /**
     * Python's {@code re.findall(r"\w+", ...)} on str: letters (L*), numbers (N*) and
     * {@code _}; not {@code \w} with UNICODE_CHARACTER_CLASS, which adds marks (Mn, Mc)
     * and every connector punctuation.
     */
    private static final Pattern WORD = Pattern.compile("[\\p{L}\\p{N}_]+");

    private Retrieval() {
    }

    /** One searchable document: the compiler's {"id", "text"}. */
    public record Document(String id, String text) {
    }

    /** One hit: its document and its score (above 0). */
    public record Passage(String id, String text, double score) {
    }

    /** A rag node's retriever. */
    public interface Retriever {
        /** The best {@code topK} passages for {@code query}, best first (ties by id); none is not an error. */
        List<Passage> search(String node, String query, int topK) throws SvcError, InterruptedException;
    }

    /** Python's ConfigError: the name is what a failure message shows. */
    public static final class ConfigError extends IllegalStateException {
        public ConfigError(String message) {
            super(message);
        }
    }

    /** Python's OverflowError, of {@code float(int)} for an int beyond the doubles. */
    public static final class OverflowError extends ArithmeticException {
        public OverflowError(String message) {
            super(message);
        }
    }

    // --- documents -----------------------------------------------------------------------

    /**
     * The documents of a classpath JSON file {@code [{"id", "text"}]} written at compile time
     * (e.g. {@code "/documents/search.json"}), as python-svc's {@code load_documents}: a file
     * that cannot be read or is not such a list (ids unique) is a {@link ConfigError}.
     */
    public static List<Document> load(String resource) {
        byte[] data;
        try (InputStream in = Retrieval.class.getResourceAsStream(resource)) {
            if (in == null) {
                throw new ConfigError("cannot read the documents file " + resource + ": No such file or directory");
            }
            data = in.readAllBytes();
        } catch (IOException e) {
            throw new ConfigError("cannot read the documents file " + resource + ": " + e.getMessage());
        }
        try {
            String raw = StandardCharsets.UTF_8.newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(data))
                    .toString();
            return documents(PyJson.loads(raw));
        } catch (IOException | IllegalArgumentException e) {
            if (e instanceof CharacterCodingException) {
                throw new ConfigError("cannot read the documents file " + resource + ": not UTF-8");
            }
            throw new ConfigError("the documents file " + resource + " is not a list of {id, text}: " + e.getMessage());
        }
    }

    /** Python's {@code _documents}: {id, text} objects with text fields, ids unique. */
    private static List<Document> documents(Object parsed) {
        if (!(parsed instanceof List<?> list)) {
            throw new IllegalArgumentException("documents must be a list of {id, text} objects, not "
                    + PyJson.typeName(parsed));
        }
        List<Document> out = new ArrayList<>();
        for (int i = 0; i < list.size(); i++) {
            if (!(list.get(i) instanceof Map<?, ?> d && d.get("id") instanceof String id
                    && d.get("text") instanceof String text)) {
                throw new IllegalArgumentException("document " + i + " must be an object with text fields id and text");
            }
            out.add(new Document(id, text));
        }
        return checked(out);
    }

    /** The documents, copied; a missing id or text or a repeated id is an IllegalArgumentException. */
    private static List<Document> checked(List<Document> docs) {
        Set<String> seen = new HashSet<>();
        for (int i = 0; i < docs.size(); i++) {
            Document d = docs.get(i);
            if (d == null || d.id() == null || d.text() == null) {
                throw new IllegalArgumentException("document " + i + " must be an object with text fields id and text");
            }
            if (!seen.add(d.id())) {
                throw new IllegalArgumentException("two documents have the id " + PyJson.dumpsAscii(d.id()));
            }
        }
        return List.copyOf(docs);
    }

    // --- outputs -------------------------------------------------------------------------

    /** The passages for an array outputKey: {"id", "text", "score"} objects, in that key order. */
    public static List<Object> value(List<Passage> ps) {
        List<Object> out = new ArrayList<>(ps.size());
        for (Passage p : ps) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("id", p.id());
            m.put("text", p.text());
            m.put("score", p.score());
            out.add(m);
        }
        return out;
    }

    /** The passages for a string outputKey: their texts, separated by a blank line. */
    public static String text(List<Passage> ps) {
        List<String> texts = new ArrayList<>(ps.size());
        for (Passage p : ps) {
            texts.add(p.text());
        }
        return String.join("\n\n", texts);
    }

    // --- ranking -------------------------------------------------------------------------

    /** Python's {@code tokens}: the words of the lower-cased text ({@code \w+}, any script). */
    public static List<String> tokens(String text) {
        List<String> out = new ArrayList<>();
        Matcher m = WORD.matcher(lower(text));
        while (m.find()) {
            out.add(m.group());
        }
        return out;
    }

    /**
     * Python's {@code str.lower()}: Java's root-locale lower-casing, except for the capital
     * sigma, which Python makes final (U+03C2) by its own rule (handle_capital_sigma) where
     * Java looks at word boundaries.
     */
    static String lower(String s) {
        int sigma = s.indexOf('\u03a3');
        if (sigma < 0) {
            return s.toLowerCase(Locale.ROOT);
        }
        StringBuilder out = new StringBuilder(s.length());
        int from = 0;
        while (sigma >= 0) {
            // No other root-locale mapping depends on its neighbours.
            out.append(s.substring(from, sigma).toLowerCase(Locale.ROOT));
            out.append(finalSigma(s, sigma) ? '\u03c2' : '\u03c3');
            from = sigma + 1;
            sigma = s.indexOf('\u03a3', from);
        }
        return out.append(s.substring(from).toLowerCase(Locale.ROOT)).toString();
    }

    /** Final_Sigma as CPython checks it: a cased letter before (past case-ignorables), none after. */
    private static boolean finalSigma(String s, int i) {
        int j = i;
        int c = -1;
        while (j > 0) {
            int cp = s.codePointBefore(j);
            if (!caseIgnorable(cp)) {
                c = cp;
                break;
            }
            j -= Character.charCount(cp);
        }
        if (c < 0 || !cased(c)) {
            return false;
        }
        for (j = i + 1; j < s.length(); ) {
            int cp = s.codePointAt(j);
            if (!caseIgnorable(cp)) {
                return !cased(cp);
            }
            j += Character.charCount(cp);
        }
        return true;
    }

    /** Word_Break MidLetter, MidNumLet and Single_Quote: the punctuation that is Case_Ignorable. */
    private static final int[] MID_WORD = {0x27, 0x2e, 0x3a, 0xb7, 0x387, 0x55f, 0x5f4, 0x2018, 0x2019, 0x2024,
        0x2027, 0xfe13, 0xfe52, 0xfe55, 0xff07, 0xff0e, 0xff1a};

    /** Unicode's Case_Ignorable: Mn, Me, Cf, Lm, Sk and the mid-word punctuation. */
    private static boolean caseIgnorable(int c) {
        return switch (Character.getType(c)) {
            case Character.NON_SPACING_MARK, Character.ENCLOSING_MARK, Character.FORMAT, Character.MODIFIER_LETTER,
                    Character.MODIFIER_SYMBOL -> true;
            default -> Arrays.binarySearch(MID_WORD, c) >= 0;
        };
    }

    /** Unicode's Cased: Lowercase, Uppercase or Lt. */
    private static boolean cased(int c) {
        return Character.isLowerCase(c) || Character.isUpperCase(c) || Character.isTitleCase(c);
    }

    /** Python's {@code _ranked}: scores above 0, by score descending then id (code points), the first topK. */
    static List<Passage> ranked(List<Passage> scored, int topK) {
        List<Passage> hits = new ArrayList<>();
        for (Passage p : scored) {
            if (p.score() > 0) {
                hits.add(p);
            }
        }
        hits.sort(Comparator.comparingDouble(Passage::score).reversed()
                .thenComparing(Passage::id, Retrieval::compareCodePoints));
        return List.copyOf(hits.subList(0, Math.min(hits.size(), Math.max(topK, 0))));
    }

    /** Python's str order: by code point (String.compareTo compares UTF-16 units). */
    static int compareCodePoints(String a, String b) {
        int i = 0;
        int j = 0;
        while (i < a.length() && j < b.length()) {
            int ca = a.codePointAt(i);
            int cb = b.codePointAt(j);
            if (ca != cb) {
                return Integer.compare(ca, cb);
            }
            i += Character.charCount(ca);
            j += Character.charCount(cb);
        }
        return Integer.compare(a.length() - i, b.length() - j);
    }

    /**
     * CPython 3.12+'s {@code sum()} of floats (start 0): the first item added to 0, then
     * Neumaier's compensated summation, the compensation added at the end unless it is 0
     * or not finite.
     */
    static double pySum(double[] xs) {
        if (xs.length == 0) {
            return 0.0;
        }
        double f = 0.0 + xs[0];
        double c = 0.0;
        for (int i = 1; i < xs.length; i++) {
            double x = xs[i];
            double t = f + x;
            if (Math.abs(f) >= Math.abs(x)) {
                c += (f - t) + x;
            } else {
                c += (x - t) + f;
            }
            f = t;
        }
        if (c != 0.0 && Double.isFinite(c)) {
            f += c;
        }
        return f;
    }

    /** Python's {@code _unit}: the vector over its length, or itself when the length is 0. */
    static double[] unit(double[] v) {
        double[] squares = new double[v.length];
        for (int i = 0; i < v.length; i++) {
            squares[i] = v[i] * v[i];
        }
        double norm = Math.sqrt(pySum(squares));
        if (norm == 0.0) {
            return v;
        }
        double[] out = new double[v.length];
        for (int i = 0; i < v.length; i++) {
            out[i] = v[i] / norm;
        }
        return out;
    }

    // --- BM25 ----------------------------------------------------------------------------

    /** Okapi BM25 over these documents (ids unique): an IllegalArgumentException otherwise. */
    public static Retriever bm25(List<Document> docs) {
        return new Bm25(checked(docs));
    }

    /**
     * Okapi BM25 (k1 1.5, b 0.75, idf ln((N - df + 0.5) / (df + 0.5) + 1), which stays
     * positive). Each query word counts as often as it occurs.
     */
    private static final class Bm25 implements Retriever {
        private final List<Document> docs;
        /** term -> document indexes and term frequencies, in document order. */
        private final Map<String, int[][]> postings = new HashMap<>();
        private final Map<String, Double> idf = new HashMap<>();
        private final int[] lengths;
        private final double avgdl;

        Bm25(List<Document> docs) {
            this.docs = docs;
            int n = docs.size();
            lengths = new int[n];
            Map<String, List<int[]>> building = new HashMap<>();
            long total = 0;
            for (int i = 0; i < n; i++) {
                Map<String, Integer> counts = new LinkedHashMap<>();
                List<String> words = tokens(docs.get(i).text());
                for (String w : words) {
                    counts.merge(w, 1, Integer::sum);
                }
                lengths[i] = words.size();
                total += words.size();
                for (Map.Entry<String, Integer> e : counts.entrySet()) {
                    building.computeIfAbsent(e.getKey(), k -> new ArrayList<>()).add(new int[] {i, e.getValue()});
                }
            }
            // Python's int / int: the quotient of the exact values, rounded once.
            avgdl = n > 0 ? (double) total / n : 0.0;
            for (Map.Entry<String, List<int[]>> e : building.entrySet()) {
                int df = e.getValue().size();
                postings.put(e.getKey(), e.getValue().toArray(new int[0][]));
                idf.put(e.getKey(), Math.log((n - df + 0.5) / (df + 0.5) + 1));
            }
        }

        @Override
        public List<Passage> search(String node, String query, int topK) {
            double[] scores = new double[docs.size()];
            List<Integer> touched = new ArrayList<>();
            boolean[] seen = new boolean[docs.size()];
            for (String term : tokens(query)) {
                Double termIdf = idf.get(term);
                if (termIdf == null) {
                    continue;
                }
                for (int[] posting : postings.get(term)) {
                    int i = posting[0];
                    int tf = posting[1];
                    // Python: tf + K1 * (1 - B + B * len / avgdl); idf * tf * (K1 + 1) / norm.
                    double norm = tf + K1 * ((1 - B) + ((B * lengths[i]) / avgdl));
                    scores[i] = scores[i] + ((termIdf * tf) * (K1 + 1)) / norm;
                    if (!seen[i]) {
                        seen[i] = true;
                        touched.add(i);
                    }
                }
            }
            List<Passage> scored = new ArrayList<>(touched.size());
            for (int i : touched) {
                scored.add(new Passage(docs.get(i).id(), docs.get(i).text(), scores[i]));
            }
            return ranked(scored, topK);
        }
    }

    // --- embeddings ----------------------------------------------------------------------

    /**
     * The embedding retriever of the rag node {@code node} (its registered name, which its
     * errors carry). A null or empty model is text-embedding-3-small; a null variable name is
     * OPENAI_BASE_URL / OPENAI_API_KEY. The documents must have unique ids (an
     * IllegalArgumentException otherwise). Build its index at start-up with
     * {@link Embedding#buildAtStartup} (or {@link #buildIndexes} for several).
     */
    public static Embedding embedding(String node, List<Document> docs, String model, String baseUrlEnv,
            String apiKeyEnv) {
        return new Embedding(node, checked(docs), model, baseUrlEnv, apiKeyEnv, EMBED_TIMEOUT);
    }

    /**
     * Builds the index of every one of these retrievers, in the order of their nodes' names,
     * as python-svc's {@code build_indexes} at start-up: the first failure is a
     * {@link ConfigError} (an IllegalStateException), see {@link Embedding#buildAtStartup}.
     */
    public static void buildIndexes(Collection<Embedding> retrievers) throws InterruptedException {
        List<Embedding> sorted = new ArrayList<>(retrievers);
        sorted.sort((a, b) -> compareCodePoints(a.node, b.node));
        for (Embedding e : sorted) {
            e.buildAtStartup();
        }
    }

    /**
     * Cosine similarity over embeddings from an OpenAI-compatible API whose base URL and key
     * are read (through {@link EnvFile#get}) at call time, as for models. Failures are
     * upstream_errors (502) naming the node.
     */
    public static final class Embedding implements Retriever {
        private final String node;
        private final List<Document> docs;
        private final String model;
        private final String baseUrlEnv;
        private final String apiKeyEnv;
        private final Duration timeout;
        /** The documents embedded (the non-blank ones) and their unit vectors; null until built. */
        private volatile List<Indexed> index;

        private record Indexed(Document doc, double[] vector) {
        }

        Embedding(String node, List<Document> docs, String model, String baseUrlEnv, String apiKeyEnv,
                Duration timeout) {
            this.node = node;
            this.docs = docs;
            this.model = model == null || model.isEmpty() ? DEFAULT_EMBEDDING_MODEL : model;
            this.baseUrlEnv = baseUrlEnv == null ? DEFAULT_BASE_URL_ENV : baseUrlEnv;
            this.apiKeyEnv = apiKeyEnv == null ? DEFAULT_API_KEY_ENV : apiKeyEnv;
            this.timeout = timeout;
        }

        public String node() {
            return node;
        }

        /**
         * Embeds every non-blank document, once (later calls reuse the index), in batches of
         * {@link #EMBED_BATCH}. A failure is the call's SvcError and leaves the index unbuilt,
         * so the next call tries again.
         */
        public void build() throws SvcError, InterruptedException {
            if (index != null) {
                return;
            }
            synchronized (this) {
                if (index != null) {
                    return;
                }
                List<Document> kept = new ArrayList<>();
                for (Document d : docs) {
                    if (!PyJson.strip(d.text()).isEmpty()) {
                        kept.add(d);
                    }
                }
                List<Indexed> built = new ArrayList<>(kept.size());
                for (int start = 0; start < kept.size(); start += EMBED_BATCH) {
                    List<Document> batch = kept.subList(start, Math.min(start + EMBED_BATCH, kept.size()));
                    List<String> texts = new ArrayList<>(batch.size());
                    for (Document d : batch) {
                        texts.add(d.text());
                    }
                    double[][] vectors = embed(texts);
                    for (int i = 0; i < batch.size(); i++) {
                        built.add(new Indexed(batch.get(i), unit(vectors[i])));
                    }
                }
                Set<Integer> lengths = new HashSet<>();
                for (Indexed e : built) {
                    lengths.add(e.vector().length);
                }
                if (lengths.size() > 1) {
                    throw bad("has embeddings of different lengths");
                }
                index = List.copyOf(built);
            }
        }

        /**
         * {@link #build} at start-up: a failure is a {@link ConfigError} (an
         * IllegalStateException) that stops the service, with python-svc's message
         * {@code the embedding index of rag node "<n>" cannot be built (<reason>): <message>}.
         */
        public void buildAtStartup() throws InterruptedException {
            try {
                build();
            } catch (SvcError e) {
                Object reason = e.details() != null && e.details().get("reason") != null
                        ? e.details().get("reason") : e.code();
                throw new ConfigError("the embedding index of rag node \"" + node + "\" cannot be built ("
                        + reason + "): " + e.getMessage());
            }
        }

        /**
         * The best {@code topK} documents for {@code query}: one /embeddings call (and the
         * index's, if it was not built). No call when the index is empty, the query is blank
         * or topK is below 1. Errors name this retriever's node; {@code node} is not used.
         */
        @Override
        public List<Passage> search(String node, String query, int topK) throws SvcError, InterruptedException {
            build();
            List<Indexed> idx = index;
            if (idx.isEmpty() || PyJson.strip(query).isEmpty() || topK <= 0) {
                return List.of();
            }
            double[] q = unit(embed(List.of(query))[0]);
            int d = idx.get(0).vector().length;
            if (q.length != d) {
                throw bad("has a query embedding of length " + q.length + ", the documents' have " + d);
            }
            List<Passage> scored = new ArrayList<>(idx.size());
            double[] products = new double[q.length];
            for (Indexed e : idx) {
                double[] v = e.vector();
                for (int i = 0; i < q.length; i++) {
                    products[i] = q[i] * v[i];
                }
                scored.add(new Passage(e.doc().id(), e.doc().text(), pySum(products)));
            }
            return ranked(scored, topK);
        }

        /** The base URL: the variable's value, or the default when it is unset or empty; no trailing /. */
        String baseUrl() {
            String base = env(baseUrlEnv);
            if (base.isEmpty()) {
                base = DEFAULT_BASE_URL;
            }
            int end = base.length();
            while (end > 0 && base.charAt(end - 1) == '/') {
                end--;
            }
            return base.substring(0, end);
        }

        private static String env(String name) {
            return name.isEmpty() ? "" : EnvFile.get(name);
        }

        private SvcError bad(String what) {
            return SvcError.upstream(node, "invalid_json",
                    "node " + PyJson.dumpsAscii(node) + ": the embeddings reply " + what, null);
        }

        /** One /embeddings call; the vectors in the order of {@code texts}. */
        private double[][] embed(List<String> texts) throws SvcError, InterruptedException {
            URI uri = Upstream.resolveUrl(node, "upstream", baseUrl() + "/embeddings", null);
            String key = env(apiKeyEnv);
            Map<String, String> headers = new LinkedHashMap<>();
            if (!key.isEmpty()) {
                headers.put("Authorization", Upstream.expandEnv("Bearer " + key));
            }
            Map<String, Object> body = new LinkedHashMap<>();
            body.put("model", model);
            body.put("input", texts);
            Object reply = Upstream.post(node, "upstream", uri, headers, timeout, body, true);
            Object data = reply instanceof Map<?, ?> m ? m.get("data") : null;
            if (!(data instanceof List<?> items)) {
                throw bad("has no data list");
            }
            if (items.size() != texts.size()) {
                throw bad("holds " + items.size() + " embeddings for " + texts.size() + " inputs");
            }
            double[][] vectors = new double[texts.size()][];
            for (Object item : items) {
                Object rawIndex = item instanceof Map<?, ?> m ? m.get("index") : null;
                Object rawVector = item instanceof Map<?, ?> m ? m.get("embedding") : null;
                int i = index(rawIndex, texts.size());
                if (i < 0 || vectors[i] != null) {
                    throw bad("has a missing, repeated or out-of-range index: " + PyJson.repr(rawIndex));
                }
                // isinstance(x, (int, float)) and not isinstance(x, bool): a JSON number.
                if (!(rawVector instanceof List<?> numbers) || numbers.isEmpty()
                        || !numbers.stream().allMatch(x -> x instanceof Number)) {
                    throw bad("has an embedding that is not a list of numbers at index " + i);
                }
                double[] v = new double[numbers.size()];
                for (int k = 0; k < v.length; k++) {
                    v[k] = toFloat((Number) numbers.get(k));
                }
                vectors[i] = v;
            }
            Set<Integer> lengths = new HashSet<>();
            for (double[] v : vectors) {
                lengths.add(v.length);
            }
            if (lengths.size() > 1) {
                throw bad("has embeddings of different lengths");
            }
            return vectors;
        }

        /** A JSON integer from 0 to size - 1, or -1 (a bool or a float is no int). */
        private static int index(Object raw, int size) {
            long i;
            if (raw instanceof Integer || raw instanceof Long || raw instanceof Short || raw instanceof Byte) {
                i = ((Number) raw).longValue();
            } else if (raw instanceof BigInteger b) {
                if (b.bitLength() > 62) {
                    return -1;
                }
                i = b.longValue();
            } else {
                return -1;
            }
            return i >= 0 && i < size ? (int) i : -1;
        }

        /** Python's {@code float(x)}: an int beyond the doubles is an OverflowError. */
        private static double toFloat(Number x) {
            double d = x.doubleValue();
            if (x instanceof BigInteger && Double.isInfinite(d)) {
                throw new OverflowError("int too large to convert to float");
            }
            return d;
        }
    }
}
