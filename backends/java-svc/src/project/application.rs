//! `Application.java`, the Spring Boot entry point.

use svc_backend_sdk::writer::CodeWriter;

use crate::java::runtime;

pub(super) fn application_java(pkg: &str) -> String {
    let mut w = CodeWriter::java();
    let auth_settings = w.name(&format!("com.svc.{pkg}.config"), "AuthSettings");
    let env_file = runtime(&mut w, pkg, "EnvFile");
    let path = w.name("java.nio.file", "Path");
    let spring_application = w.name("org.springframework.boot", "SpringApplication");
    let spring_boot_application = w.name(
        "org.springframework.boot.autoconfigure",
        "SpringBootApplication",
    );
    w.lines(&format!(
        r#"/** Starts the service: env.yaml first, then the credential check, then Spring. */
@{spring_boot_application}
public class Application {{
    public static void main(String[] args) throws Exception {{
        {env_file}.load({path}.of("env.yaml"));
        // Spring AOT runs main at build time to analyse the context; nothing is served then.
        boolean aotProcessing = Boolean.getBoolean("spring.aot.processing");
        if (!aotProcessing && !"none".equals(GraphState.AUTH) && {env_file}.get(GraphState.KEY_ENV).isEmpty()) {{
            // Never fall back to "no auth": a missing key stops the service.
            System.err.println("error: " + {auth_settings}.missingKeyMessage());
            System.exit(1);
        }}
        // SVC_HOST and SVC_PORT override the address on every svc target.
        String host = {env_file}.get("SVC_HOST");
        if (!host.isEmpty()) {{
            System.setProperty("server.address", host);
        }}
        String port = {env_file}.get("SVC_PORT");
        if (!port.isEmpty()) {{
            System.setProperty("server.port", port);
        }}
        {spring_application}.run(Application.class, args);
    }}
}}
"#
    ));
    w.finish_file(&format!("package com.svc.{pkg};\n\n"))
}
