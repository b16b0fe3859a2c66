//! Assembles the Maven project.

use svc_backend_sdk::ir::{Auth, Document, LogFormat, LogLevel};
use svc_backend_sdk::writer::CodeWriter;
use svc_backend_sdk::{Diagnostic, File, Templates};

use crate::java::{literal, package_segment, quote};
use crate::{graph, nodes, tests};

const RUNTIME: &[(&str, &str)] = &[
    (
        "runtime/SvcError.java",
        include_str!("../runtime/java/SvcError.java"),
    ),
    (
        "runtime/GraphNode.java",
        include_str!("../runtime/java/GraphNode.java"),
    ),
    (
        "runtime/StateSchema.java",
        include_str!("../runtime/java/StateSchema.java"),
    ),
    (
        "runtime/Text.java",
        include_str!("../runtime/java/Text.java"),
    ),
    (
        "runtime/GraphRun.java",
        include_str!("../runtime/java/GraphRun.java"),
    ),
    (
        "runtime/Values.java",
        include_str!("../runtime/java/Values.java"),
    ),
    (
        "runtime/RequestJson.java",
        include_str!("../runtime/java/RequestJson.java"),
    ),
    (
        "runtime/EnvFile.java",
        include_str!("../runtime/java/EnvFile.java"),
    ),
    (
        "config/AuthSettings.java",
        include_str!("../runtime/java/AuthSettings.java"),
    ),
    (
        "web/GraphController.java",
        include_str!("../runtime/java/GraphController.java"),
    ),
    (
        "web/ErrorAdvice.java",
        include_str!("../runtime/java/ErrorAdvice.java"),
    ),
];
const UPSTREAM: &[(&str, &str)] = &[
    (
        "runtime/Upstream.java",
        include_str!("../runtime/java/Upstream.java"),
    ),
    (
        "runtime/HttpTool.java",
        include_str!("../runtime/java/HttpTool.java"),
    ),
];
const LLM_CLIENT: (&str, &str) = (
    "runtime/LlmClient.java",
    include_str!("../runtime/java/LlmClient.java"),
);
const MVNW: &str = include_str!("../runtime/wrapper/mvnw");
const MVNW_CMD: &str = include_str!("../runtime/wrapper/mvnw.cmd");
const WRAPPER_PROPERTIES: &str = include_str!("../runtime/wrapper/maven-wrapper.properties");

/// Spring Boot version of generated projects.
pub const SPRING_BOOT: &str = "3.5.16";

pub fn emit(doc: &Document, templates: &mut dyn Templates) -> Result<Vec<File>, Vec<Diagnostic>> {
    let placed = svc_backend_sdk::connectors::place(doc, "java-svc", templates)?;
    let bad: Vec<Diagnostic> = placed
        .dependencies
        .iter()
        .filter_map(|d| dependency_xml(d).err())
        .collect();
    if !bad.is_empty() {
        return Err(bad);
    }
    let pkg = package_segment(&doc.id);
    let base = format!("src/main/java/com/svc/{pkg}");
    let llm = doc.has_llm_nodes();
    let mut files = vec![
        File::text("pom.xml", pom(doc, &placed.dependencies)),
        File::text("mvnw", MVNW).executable(),
        File::text("mvnw.cmd", MVNW_CMD),
        File::text(".mvn/wrapper/maven-wrapper.properties", WRAPPER_PROPERTIES),
        File::text(".gitignore", "target/\nenv.yaml\n"),
        File::text("application.yaml", application_yaml(doc)),
        File::text("env.yaml", svc_backend_sdk::environment::env_yaml(doc)),
        File::text("README.md", readme(doc)),
        File::text("src/main/resources/application.yml", spring_yml(doc)),
        File::text(format!("{base}/Application.java"), application_java(&pkg)),
        File::text(format!("{base}/GraphState.java"), graph_state(doc, &pkg)),
        File::text(
            format!("{base}/graph/MainGraph.java"),
            graph::main_graph(doc, &pkg),
        ),
        File::text(
            format!("src/test/java/com/svc/{pkg}/GraphHttpTests.java"),
            tests::http_tests(doc, &pkg),
        ),
    ];
    let mut runtime: Vec<(&str, &str)> = RUNTIME.to_vec();
    if llm || doc.http_tools().next().is_some() {
        runtime.extend_from_slice(UPSTREAM);
    }
    if llm {
        runtime.push(LLM_CLIENT);
        files.push(File::text(
            format!("{base}/config/AiConfig.java"),
            ai_config(doc, &pkg),
        ));
    }
    for (path, text) in runtime {
        files.push(File::text(
            format!("{base}/{path}"),
            text.replace("PKG", &pkg),
        ));
    }
    files.extend(nodes::files(doc, &pkg, &base, &placed.snippets)?);
    placed.merge_into(&mut files)?;
    files.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(files)
}

/// A `<dependency>` for `group:artifact[:version]` (no version: managed by
/// Spring Boot's BOM).
fn dependency_xml(spec: &str) -> Result<String, Diagnostic> {
    let parts: Vec<&str> = spec.split(':').collect();
    let ok = |s: &str| {
        !s.is_empty()
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || "._-".contains(c))
    };
    match parts.as_slice() {
        [g, a] if ok(g) && ok(a) => Ok(format!(
            "        <dependency>\n            <groupId>{g}</groupId>\n            <artifactId>{a}</artifactId>\n        </dependency>\n"
        )),
        [g, a, v] if ok(g) && ok(a) && ok(v) => Ok(format!(
            "        <dependency>\n            <groupId>{g}</groupId>\n            <artifactId>{a}</artifactId>\n            <version>{v}</version>\n        </dependency>\n"
        )),
        _ => Err(Diagnostic::error(
            "connector-dependency",
            format!("a connector asks for the Maven dependency `{spec}`, which is not `group:artifact[:version]`"),
        )
        .hint("report it to the connector's author")),
    }
}

fn pom(doc: &Document, connector_dependencies: &[String]) -> String {
    let extra: String = connector_dependencies
        .iter()
        .filter_map(|d| dependency_xml(d).ok())
        .collect();
    let description = doc
        .description
        .clone()
        .or_else(|| doc.name.clone())
        .unwrap_or_else(|| format!("The {} graph as a Spring Boot service", doc.id));
    let esc = |s: &str| {
        s.replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;")
    };
    format!(
        r#"<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0"
         xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"
         xsi:schemaLocation="http://maven.apache.org/POM/4.0.0 https://maven.apache.org/xsd/maven-4.0.0.xsd">
    <modelVersion>4.0.0</modelVersion>

    <parent>
        <groupId>org.springframework.boot</groupId>
        <artifactId>spring-boot-starter-parent</artifactId>
        <version>{SPRING_BOOT}</version>
        <relativePath/>
    </parent>

    <groupId>com.svc</groupId>
    <artifactId>{id}</artifactId>
    <version>{version}</version>
    <description>{description}</description>

    <properties>
        <java.version>21</java.version>
    </properties>

    <dependencies>
        <dependency>
            <groupId>org.springframework.boot</groupId>
            <artifactId>spring-boot-starter-web</artifactId>
        </dependency>
        <dependency>
            <groupId>org.springframework.boot</groupId>
            <artifactId>spring-boot-starter-test</artifactId>
            <scope>test</scope>
        </dependency>
{extra}    </dependencies>

    <build>
        <finalName>service</finalName>
        <plugins>
            <plugin>
                <groupId>org.springframework.boot</groupId>
                <artifactId>spring-boot-maven-plugin</artifactId>
            </plugin>
        </plugins>
    </build>
</project>
"#,
        id = doc.id,
        version = esc(&doc.version),
        description = esc(&description),
    )
}

fn application_java(pkg: &str) -> String {
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

fn type_const(t: svc_backend_sdk::ir::FieldType) -> &'static str {
    use svc_backend_sdk::ir::FieldType::*;
    match t {
        String => "Type.STRING",
        Integer => "Type.INTEGER",
        Number => "Type.NUMBER",
        Boolean => "Type.BOOLEAN",
        Object => "Type.OBJECT",
        Array => "Type.ARRAY",
        Messages => "Type.MESSAGES",
    }
}

fn item(it: &svc_backend_sdk::ir::ItemType) -> String {
    match &it.items {
        Some(inner) => format!("new Item({}, {})", type_const(it.ty), item(inner)),
        None => format!("new Item({}, null)", type_const(it.ty)),
    }
}

/// The field legacy `{"input": ...}` requests fill: the first required string field.
pub fn legacy_field(doc: &Document) -> Option<&str> {
    doc.logical
        .state
        .iter()
        .find(|f| f.required && f.ty == svc_backend_sdk::ir::FieldType::String)
        .map(|f| f.name.as_str())
}

fn graph_state(doc: &Document, pkg: &str) -> String {
    let mut w = CodeWriter::spaces();
    w.line(format!("package com.svc.{pkg};")).blank();
    w.line(format!("import com.svc.{pkg}.runtime.StateSchema;"));
    w.line(format!("import com.svc.{pkg}.runtime.StateSchema.Field;"));
    w.line(format!("import com.svc.{pkg}.runtime.StateSchema.Item;"));
    w.line(format!("import com.svc.{pkg}.runtime.StateSchema.Type;"));
    w.line(format!("import com.svc.{pkg}.runtime.Values;"));
    w.line("import java.util.List;").blank();
    w.line("/** The state of the graph and the settings compiled from its document. */");
    w.block("public final class GraphState {", "}", |w| {
        w.line("/** `none` or `api_key` (security.auth). */");
        w.line(format!(
            "public static final String AUTH = {};",
            quote(doc.security.auth.as_str())
        ));
        w.line("/** The environment variable holding the API key (security.keyEnv). */");
        w.line(format!(
            "public static final String KEY_ENV = {};",
            quote(&doc.security.key_env)
        ));
        w.line("/** The field a legacy {\"input\"} or {\"query\"} request fills, or null. */");
        w.line(format!(
            "public static final String LEGACY_INPUT_FIELD = {};",
            legacy_field(doc)
                .map(quote)
                .unwrap_or_else(|| "null".into())
        ));
        w.blank();
        w.line("public static final StateSchema SCHEMA = new StateSchema(List.of(");
        w.indent().indent();
        let n = doc.logical.state.len();
        for (i, f) in doc.logical.state.iter().enumerate() {
            let items = f.items.as_ref().map(item).unwrap_or_else(|| "null".into());
            let default = match f.default.as_ref().filter(|d| !d.is_null()) {
                Some(d) => format!("() -> {}", literal(d)),
                None => "null".into(),
            };
            w.line(format!(
                "new Field({}, {}, {items}, {}, {}, {default}){}",
                quote(&f.name),
                type_const(f.ty),
                f.reducer == svc_backend_sdk::ir::Reducer::Append,
                f.required,
                if i + 1 < n { "," } else { "" }
            ));
        }
        w.dedent().dedent();
        w.line("));").blank();
        w.block("private GraphState() {", "}", |_| {});
    });
    let mut text = w.finish();
    if !text.contains("Values.") {
        text = text.replace(&format!("import com.svc.{pkg}.runtime.Values;\n"), "");
    }
    if !text.contains("new Item(") {
        text = text.replace(
            &format!("import com.svc.{pkg}.runtime.StateSchema.Item;\n"),
            "",
        );
    }
    text
}

fn ai_config(doc: &Document, pkg: &str) -> String {
    let timeout = doc.logical.settings.request_timeout_ms;
    format!(
        r#"package com.svc.{pkg}.config;

import com.svc.{pkg}.runtime.LlmClient;
import java.time.Duration;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** The model provider: an OpenAI-compatible chat-completions API (only graphs with LLM nodes have this). */
@Configuration
public class AiConfig {{
    @Bean
    public LlmClient llmClient(@Value("${{svc.llm.base-url}}") String baseUrl,
            @Value("${{svc.llm.api-key:}}") String apiKey) {{
        return new LlmClient(baseUrl, apiKey, Duration.ofMillis({timeout}));
    }}
}}
"#
    )
}

fn log_level(doc: &Document) -> &'static str {
    match doc.logical.settings.logging.level {
        LogLevel::Debug => "DEBUG",
        LogLevel::Info => "INFO",
        LogLevel::Warning => "WARN",
        LogLevel::Error => "ERROR",
    }
}

/// `src/main/resources/application.yml`: Spring's configuration.
fn spring_yml(doc: &Document) -> String {
    let s = &doc.logical.settings;
    let mut out = format!(
        "# Spring configuration compiled from the graph document.\n\
         # SVC_HOST and SVC_PORT override the address (Application.main); SERVER_PORT works as in any Spring Boot app.\n\
         server:\n  address: \"{host}\"\n  port: {port}\n  error:\n    whitelabel:\n      enabled: false\n\
         \x20 # A refused body (over 1 MiB, or a 401) is read and discarded up to 8 MiB before the\n\
         \x20 # connection closes, so a client that sends it whole before reading gets the answer.\n\
         \x20 tomcat:\n    max-swallow-size: 8MB\n\
         spring:\n  application:\n    name: {id}\n  main:\n    banner-mode: \"off\"\n  threads:\n    virtual:\n      enabled: true\n  web:\n    resources:\n      add-mappings: false\n\
         svc:\n  security:\n    key: ${{{key}:}}\n",
        host = s.server.host,
        port = s.server.port,
        id = doc.id,
        key = doc.security.key_env,
    );
    if doc.has_llm_nodes() {
        let (base_env, key_env) = s
            .model
            .as_ref()
            .map(|m| (m.base_url_env.as_str(), m.api_key_env.as_str()))
            .unwrap_or(("OPENAI_BASE_URL", "OPENAI_API_KEY"));
        out.push_str(&format!(
            "  llm:\n    base-url: ${{{base_env}:https://api.openai.com/v1}}\n    api-key: ${{{key_env}:}}\n"
        ));
    }
    let http: Vec<_> = doc.http_tools().collect();
    if !http.is_empty() {
        out.push_str("  tools:\n");
        for (id, endpoint) in http {
            let value = match endpoint.strip_prefix("env:") {
                Some(var) => format!("${{{var}:}}"),
                None => endpoint.to_string(),
            };
            out.push_str(&format!("    {id}:\n      endpoint: \"{value}\"\n"));
        }
    }
    out.push_str(&format!(
        "logging:\n  level:\n    root: {}\n",
        log_level(doc)
    ));
    if doc.logical.settings.logging.format == LogFormat::Json {
        out.push_str("  structured:\n    format:\n      console: ecs\n");
    }
    out
}

/// `application.yaml`: the svc settings of the service, for people and tools.
fn application_yaml(doc: &Document) -> String {
    let s = &doc.logical.settings;
    let mut out = format!(
        "# Settings compiled from the graph document. Spring reads src/main/resources/application.yml,\n\
         # which is derived from the same settings; change the graph and recompile instead of editing either.\n\
         app:\n  name: {id}\n  version: \"{version}\"\n\
         graph:\n  entrypoint: {id}\n  max_steps: {steps}\n  request_timeout_ms: {timeout}\n\
         server:\n  host: \"{host}\"\n  port: {port}\n  auth:\n    type: {auth}\n    key_env: {key}\n",
        id = doc.id,
        version = doc.version,
        steps = s.max_steps,
        timeout = s.request_timeout_ms,
        host = s.server.host,
        port = s.server.port,
        auth = doc.security.auth.as_str(),
        key = doc.security.key_env,
    );
    if let Some(m) = &s.model {
        out.push_str(&format!(
            "model:\n  provider: {}\n  name: {}\n  base_url_env: {}\n  api_key_env: {}\n",
            quote(&m.provider),
            quote(&m.name),
            m.base_url_env,
            m.api_key_env
        ));
    }
    out
}

fn readme(doc: &Document) -> String {
    let title = doc.name.clone().unwrap_or_else(|| doc.id.clone());
    let s = &doc.logical.settings;
    let mut out = format!("# {title}\n\n");
    if let Some(d) = &doc.description {
        out.push_str(&format!("{d}\n\n"));
    }
    out.push_str(&format!(
        "A Spring Boot {SPRING_BOOT} service (Java 21+) generated by svc from the graph `{}` (version {}).\n\n",
        doc.id, doc.version
    ));
    out.push_str("## Configure\n\n| variable | meaning |\n|---|---|\n");
    out.push_str(&format!(
        "| `SVC_HOST` | listen address (default `{}`) |\n",
        s.server.host
    ));
    out.push_str(&format!(
        "| `SVC_PORT` | listen port (default `{}`; `SERVER_PORT` also works) |\n",
        s.server.port
    ));
    for (k, v) in svc_backend_sdk::environment::variables(doc) {
        out.push_str(&format!("| `{k}` | {v} |\n"));
    }
    out.push_str(&format!(
        "\nValues may also be put in `env.yaml`. The run is limited to {} steps and {} ms; requests over \
         1 MiB and responses over 4 MiB are refused.\n\n",
        s.max_steps, s.request_timeout_ms
    ));
    let (header, export) = match doc.security.auth {
        Auth::None => (String::new(), String::new()),
        _ => (
            format!(" -H \"X-API-Key: ${}\"", doc.security.key_env),
            format!("export {}=change-me\n", doc.security.key_env),
        ),
    };
    out.push_str("## Authenticate\n\n");
    out.push_str(if doc.security.auth == Auth::None {
        "Authentication is off (`security.auth` is `none` in the graph).\n\n"
    } else {
        "Every `/invoke` request carries the key in the `X-API-Key` header; `/health` needs none. \
         Without the key variable the service refuses to start.\n\n"
    });
    out.push_str(&format!(
        "## Build, test, run\n\nWith `JAVA_HOME` pointing at a JDK 21 or newer (the Maven Wrapper fetches Maven 3.9):\n\n\
         ```sh\n./mvnw -q test\n./mvnw -q -DskipTests package\n{export}java -jar target/service.jar\n```\n\n\
         ```sh\ncurl -s localhost:{port}/health\ncurl -s localhost:{port}/invoke -H 'Content-Type: application/json'{header} -d '{{\"state\": {{...}}}}'\n```\n\n\
         `POST /invoke` takes `{{\"state\": {{...}}}}` and answers `{{\"result\": {{...}}}}`. The legacy forms \
         `{{\"input\": \"...\"}}` and `{{\"query\": \"...\"}}` fill the first required string field and are answered \
         with `{{\"output\": <last value written>, \"state\": {{...}}}}`. Errors are `{{\"error\": {{\"code\", \"message\", \"details\"}}}}`.\n\n",
        port = s.server.port
    ));
    out.push_str(
        "## Layout\n\n\
         - `Application.java`, `GraphState.java`: start-up, and the state and settings compiled from the graph\n\
         - `graph/MainGraph.java`: the run loop of this graph\n\
         - `nodes/*.java`: one class per node (native bodies from `bodiesByPlatform[\"java-svc\"]`)\n\
         - `web/`: the HTTP contract; `config/`: the credential and (with LLM nodes) the model provider\n\
         - `runtime/`: state schema, reducers and upstream calls shared by the generated classes\n",
    );
    out
}
