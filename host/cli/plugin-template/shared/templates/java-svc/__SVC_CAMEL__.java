package com.svc.connectors.__SVC_SNAKE__;

import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** The __SVC_ID__ connector: fills the {{field}} references of a text from the state. */
public final class __SVC_CAMEL__ {
    private static final Pattern FIELD =
            Pattern.compile("\\{\\{\\s*([A-Za-z_][A-Za-z0-9_]*)\\s*\\}\\}");

    private __SVC_CAMEL__() {}

    public static String render(String template, Map<String, Object> state) {
        Matcher m = FIELD.matcher(template);
        StringBuilder out = new StringBuilder();
        while (m.find()) {
            Object value = state.get(m.group(1));
            m.appendReplacement(out, Matcher.quoteReplacement(value == null ? "" : String.valueOf(value)));
        }
        m.appendTail(out);
        return out.toString();
    }
}
