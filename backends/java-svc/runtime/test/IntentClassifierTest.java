package dev.svc.runtime;

import static dev.svc.runtime.ModelStub.*;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The intent classifier against a scripted model: python-svc's prompt, matching and errors. */
class IntentClassifierTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final LlmClient.Provider PROVIDER = new LlmClient.Provider(MODEL_URL_ENV, MODEL_KEY_ENV);
    private static final LlmClient.Model MODEL = new LlmClient.Model(PROVIDER, "stub-model", 0.25, 64);

    private Stub stub;
    private LlmClient llm;

    @BeforeEach
    void start() throws IOException {
        stub = new Stub();
        llm = new LlmClient(variables(stub.url("/v1"), "test-key"), Duration.ofSeconds(5));
    }

    @AfterEach
    void stop() {
        stub.close();
    }

    @Test
    void classifierPromptAndMatching() throws Exception {
        List<IntentClassifier.Intent> intents = List.of(
                new IntentClassifier.Intent("billing", "invoices and refunds", List.of("Where is my refund?")),
                new IntentClassifier.Intent("shipping", "parcels", List.of()));
        AtomicReference<String> reply = new AtomicReference<>(" Billing\n");
        stub.routes.put("/v1/chat/completions", r -> answer(reply.get()));
        assertEquals("billing", IntentClassifier.classify(llm, "classify", MODEL, intents, "Where is my refund?", "other"));
        Request sent = stub.to("/v1/chat/completions").get(0);
        assertEquals("{\"model\":\"stub-model\",\"messages\":[{\"role\":\"system\",\"content\":"
                + JSON.writeValueAsString("Classify the user's message into exactly one of these intents:\n"
                        + "- billing: invoices and refunds\n  Examples: \"Where is my refund?\"\n- shipping: parcels\n"
                        + "Answer with the intent's name only. If none of them fits, answer \"other\".")
                + "},{\"role\":\"user\",\"content\":\"Where is my refund?\"}],\"temperature\":0.25,\"max_tokens\":64}",
                sent.body());
        reply.set("SHIPPING");
        assertEquals("shipping", IntentClassifier.classify(llm, "classify", MODEL, intents, "", "other"));
        assertEquals(List.of(Map.of("role", "system", "content", system(stub.to("/v1/chat/completions").get(1))),
                Map.of("role", "user", "content", "")), stub.to("/v1/chat/completions").get(1).messages());
        reply.set("no idea");
        assertEquals("other", IntentClassifier.classify(llm, "classify", MODEL, intents, "Good morning", "other"));
        // The fallback comes back verbatim, even when it is no intent's name.
        assertEquals("Autre", IntentClassifier.classify(llm, "classify", MODEL, intents, "x", "Autre"));
    }

    @Test
    void classifierQuotesExamplesRawAndTheFallbackInAscii() throws Exception {
        List<IntentClassifier.Intent> intents = List.of(
                new IntentClassifier.Intent(" Remboursé ", null, List.of("Où est \"mon\" argent?", "€")),
                new IntentClassifier.Intent("remboursé", "duplicate spelling", null));
        stub.routes.put("/v1/chat/completions", r -> answer("REMBOURSÉ"));
        assertEquals(" Remboursé ", IntentClassifier.classify(llm, "c", MODEL, intents, "x", "autre é"));
        assertEquals("Classify the user's message into exactly one of these intents:\n- " + " Remboursé \n"
                + "  Examples: \"Où est \\\"mon\\\" argent?\"; \"€\"\n- remboursé: duplicate spelling\n"
                + "Answer with the intent's name only. If none of them fits, answer \"autre \\u00e9\".",
                system(stub.to("/v1/chat/completions").get(0)));
    }

    @Test
    void classifierReplyWithoutText() {
        List<IntentClassifier.Intent> intents = List.of(new IntentClassifier.Intent("a", "", List.of()));
        stub.routes.put("/v1/chat/completions", r -> new Reply(200, envelope("{\"content\":null}")));
        SvcError e = assertThrows(SvcError.class, () -> IntentClassifier.classify(llm, "c", MODEL, intents, "x", "other"));
        assertError(e, 502, "upstream_error", "node \"c\": the model reply has no choices[0].message.content",
                called(details("c", "invalid_json"), "stub-model", 1));
        stub.routes.put("/v1/chat/completions", r -> new Reply(200, "{\"choices\":[{}]}"));
        e = assertThrows(SvcError.class, () -> IntentClassifier.classify(llm, "c", MODEL, intents, "x", "other"));
        assertError(e, 502, "upstream_error", "node \"c\": the model reply has no choices[0].message",
                called(details("c", "invalid_json"), "stub-model", 1));
    }
}
