package dev.svc.runtime;

import java.util.List;

/**
 * settings.a2a, compiled from the document (the generated A2aAgent supplies it as a bean):
 * the agent card's title, description, version and skills, where a message's text goes,
 * and the callers of settings.a2a.tokens.
 *
 * @param inputField the state field a message's text goes to
 * @param inputMessages whether the text is appended to it as a user message
 * @param tokens the callers of settings.a2a.tokens; empty: the service's own credential
 */
public record A2aSpec(String title, String description, String version, String inputField,
        boolean inputMessages, List<Skill> skills, List<Token> tokens) {

    /** A skill of the card; each runs the graph. */
    public record Skill(String id, String name, String description, List<String> tags, List<String> roles) {
    }

    /** One caller of settings.a2a.tokens as compiled: the variable of its token, never the token. */
    public record Token(String subject, List<String> roles, String env, String scheme) {
    }
}
