package dev.svc.runtime;

import java.io.IOException;
import java.io.Reader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.yaml.snakeyaml.Yaml;

/**
 * Reads env.yaml at start-up: nested keys flatten to UPPER_SNAKE names, and
 * each becomes a system property (which Spring's ${NAME} placeholders see)
 * unless the environment or the command line already sets it. Empty values
 * are skipped, so an env.yaml template never blanks out a real variable.
 */
public final class EnvFile {
    private EnvFile() {
    }

    public static void load(Path path) throws IOException {
        if (!Files.isRegularFile(path)) {
            return;
        }
        try (Reader in = Files.newBufferedReader(path)) {
            Object data = new Yaml().load(in);
            if (data instanceof Map<?, ?> map) {
                export("", map);
            }
        }
    }

    private static void export(String prefix, Map<?, ?> map) {
        for (Map.Entry<?, ?> e : map.entrySet()) {
            String name = (prefix.isEmpty() ? "" : prefix + "_") + String.valueOf(e.getKey()).toUpperCase(Locale.ROOT);
            Object value = e.getValue();
            if (value instanceof Map<?, ?> nested) {
                export(name, nested);
            } else if (value != null && !(value instanceof List<?>) && !String.valueOf(value).isEmpty()
                    && System.getenv(name) == null && System.getProperty(name) == null) {
                System.setProperty(name, String.valueOf(value));
            }
        }
    }

    /** A variable from the environment, or from env.yaml through a system property. */
    public static String get(String name) {
        String v = System.getenv(name);
        return v != null && !v.isEmpty() ? v : System.getProperty(name, "");
    }
}
