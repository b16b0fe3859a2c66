//! `Application.java`, the Spring Boot entry point.

pub(super) fn application_java(pkg: &str) -> String {
    format!(
        r#"package com.svc.{pkg};

import com.svc.{pkg}.config.AuthSettings;
import com.svc.{pkg}.runtime.EnvFile;
import java.nio.file.Path;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;

/** Starts the service: env.yaml first, then the credential check, then Spring. */
@SpringBootApplication
public class Application {{
    public static void main(String[] args) throws Exception {{
        EnvFile.load(Path.of("env.yaml"));
        if (!"none".equals(GraphState.AUTH) && EnvFile.get(GraphState.KEY_ENV).isEmpty()) {{
            // Never fall back to "no auth": a missing key stops the service.
            System.err.println("error: " + AuthSettings.missingKeyMessage());
            System.exit(1);
        }}
        // SVC_HOST and SVC_PORT override the address on every svc target.
        String host = EnvFile.get("SVC_HOST");
        if (!host.isEmpty()) {{
            System.setProperty("server.address", host);
        }}
        String port = EnvFile.get("SVC_PORT");
        if (!port.isEmpty()) {{
            System.setProperty("server.port", port);
        }}
        SpringApplication.run(Application.class, args);
    }}
}}
"#
    )
}
