package com.svc.connectors.__SVC_SNAKE__;

import com.svc.connectors.runtime.Fields;
import java.util.Map;

/**
 * The __SVC_ID__ connector: fills the {{field}} references of a text from the state. The
 * filling is the Java runtime's (com.svc.connectors.runtime.Fields): a connector calls the
 * runtime instead of carrying a copy of it.
 */
public final class __SVC_CAMEL__ {
    private __SVC_CAMEL__() {}

    public static String render(String template, Map<String, Object> state) {
        return Fields.fill(template, state);
    }
}
