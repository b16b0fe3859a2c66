//! The project's Maven build: `pom.xml`, the reactor of the runtime module
//! (`svc-runtime/pom.xml`) and the service (`service.pom.xml`: Spring Boot
//! parent, the graph's dependencies, connector dependencies).

use svc_backend_sdk::ir::{A2aToken, CheckpointerKind, Document};
use svc_backend_sdk::writer::CodeWriter;
use svc_backend_sdk::Diagnostic;

use super::{RUNTIME_MODULE, SERVICE_POM, SPRING_BOOT};
use crate::java::{RUNTIME_GROUP, RUNTIME_VERSION};
use crate::parts::Library;

/// A Maven dependency: `group:artifact[:version]` (no version: managed by
/// Spring Boot's BOM), and its scope.
struct Dependency<'a> {
    group: &'a str,
    artifact: &'a str,
    version: Option<&'a str>,
    scope: Option<&'a str>,
    optional: bool,
}

impl<'a> Dependency<'a> {
    const fn managed(group: &'a str, artifact: &'a str) -> Self {
        Dependency {
            group,
            artifact,
            version: None,
            scope: None,
            optional: false,
        }
    }

    /// A connector's `group:artifact[:version]`, each part letters, digits,
    /// `.`, `_` and `-` (so nothing in it needs escaping).
    fn parse(spec: &'a str) -> Result<Self, Diagnostic> {
        let parts: Vec<&str> = spec.split(':').collect();
        let ok = |s: &str| {
            !s.is_empty()
                && s.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "._-".contains(c))
        };
        match parts.as_slice() {
            [g, a] if ok(g) && ok(a) => Ok(Dependency::managed(g, a)),
            [g, a, v] if ok(g) && ok(a) && ok(v) => Ok(Dependency {
                version: Some(v),
                ..Dependency::managed(g, a)
            }),
            _ => Err(Diagnostic::error(
                &CONNECTOR_DEPENDENCY,
                format!("a connector asks for the Maven dependency `{spec}`, which is not `group:artifact[:version]`"),
            )
            .hint("report it to the connector's author")),
        }
    }

    /// A BOM imported in `<dependencyManagement>`.
    fn write_import(&self, w: &mut CodeWriter) {
        w.block("<dependency>", "</dependency>", |w| {
            element(w, "groupId", self.group);
            element(w, "artifactId", self.artifact);
            if let Some(v) = self.version {
                element(w, "version", v);
            }
            element(w, "type", "pom");
            element(w, "scope", "import");
        });
    }

    fn write(&self, w: &mut CodeWriter) {
        w.block("<dependency>", "</dependency>", |w| {
            element(w, "groupId", self.group);
            element(w, "artifactId", self.artifact);
            if let Some(v) = self.version {
                element(w, "version", v);
            }
            if let Some(s) = self.scope {
                element(w, "scope", s);
            }
            if self.optional {
                element(w, "optional", "true");
            }
        });
    }
}

/// The `<dependency>` for a connector's `group:artifact[:version]`, or why
/// it cannot be one.
pub(super) fn dependency_xml(spec: &str) -> Result<String, Diagnostic> {
    let mut w = CodeWriter::text(INDENT);
    Dependency::parse(spec)?.write(&mut w);
    Ok(w.finish())
}

/// OpenTelemetry's Java SDK (settings.tracing.enabled), pinned.
const OPENTELEMETRY: &str = "1.68.0";
/// The Kotlin standard library OkHttp 5 declares.
const KOTLIN: &str = "2.1.21";

/// pom.xml's indentation.
const INDENT: &str = "    ";

/// `<tag>text</tag>`; `text` is already escaped.
fn element(w: &mut CodeWriter, tag: &str, text: &str) {
    w.line(format!("<{tag}>{text}</{tag}>"));
}

/// An XML comment, its lines after the first aligned with the first's text.
fn comment(w: &mut CodeWriter, lines: &[&str]) {
    let last = lines.len().saturating_sub(1);
    for (i, text) in lines.iter().enumerate() {
        let open = if i == 0 { "<!-- " } else { "     " };
        let close = if i == last { " -->" } else { "" };
        w.line(format!("{open}{text}{close}"));
    }
}

/// Text of the document in XML character data.
fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// A `<plugin>` of `group:artifact` with one `<execution>` of `goal`
/// (in `phase`, when given); `configure` writes its `<configuration>`.
fn plugin(
    w: &mut CodeWriter,
    (group, artifact): (&str, &str),
    (id, phase, goal): (&str, Option<&str>, &str),
    configure: impl FnOnce(&mut CodeWriter),
) {
    w.block("<plugin>", "</plugin>", |w| {
        element(w, "groupId", group);
        element(w, "artifactId", artifact);
        w.block("<executions>", "</executions>", |w| {
            w.block("<execution>", "</execution>", |w| {
                element(w, "id", id);
                if let Some(phase) = phase {
                    element(w, "phase", phase);
                }
                w.block("<goals>", "</goals>", |w| element(w, "goal", goal));
                configure(w);
            });
        });
    });
}

/// A `<plugin>` of Maven's own (`org.apache.maven.plugins:artifact`) with
/// the `<configuration>` that `configure` writes, for every execution.
fn configured_plugin(w: &mut CodeWriter, artifact: &str, configure: impl FnOnce(&mut CodeWriter)) {
    w.block("<plugin>", "</plugin>", |w| {
        element(w, "groupId", "org.apache.maven.plugins");
        element(w, "artifactId", artifact);
        w.block("<configuration>", "</configuration>", configure);
    });
}

/// The start of a pom: the XML declaration and `<project>`, indented.
fn project(w: &mut CodeWriter) {
    w.line(r#"<?xml version="1.0" encoding="UTF-8"?>"#)
        .line(r#"<project xmlns="http://maven.apache.org/POM/4.0.0""#)
        .line(r#"         xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance""#)
        .line(r#"         xsi:schemaLocation="http://maven.apache.org/POM/4.0.0 https://maven.apache.org/xsd/maven-4.0.0.xsd">"#)
        .indent();
    element(w, "modelVersion", "4.0.0");
    w.blank().block("<parent>", "</parent>", |w| {
        element(w, "groupId", "org.springframework.boot");
        element(w, "artifactId", "spring-boot-starter-parent");
        element(w, "version", SPRING_BOOT);
        w.line("<relativePath/>");
    });
    w.blank();
}

/// `group:artifact:version` of a pom.
fn coordinates(w: &mut CodeWriter, group: &str, artifact: &str, version: &str) {
    element(w, "groupId", group);
    element(w, "artifactId", artifact);
    element(w, "version", version);
}

/// OpenTelemetry's versions (settings.tracing.enabled), in `<properties>`.
fn opentelemetry_versions(w: &mut CodeWriter) {
    comment(
        w,
        &[
            "OpenTelemetry: newer than Spring Boot's BOM names; OkHttp (the OTLP",
            "exporter's client) needs a newer Kotlin standard library than Boot's.",
        ],
    );
    element(w, "opentelemetry.version", OPENTELEMETRY);
    element(w, "kotlin.version", KOTLIN);
}

/// Boot does not manage the alpha BOM (the SDK's incubator API).
fn opentelemetry_bom(w: &mut CodeWriter) {
    w.blank()
        .block("<dependencyManagement>", "</dependencyManagement>", |w| {
            w.block("<dependencies>", "</dependencies>", |w| {
                Dependency {
                    version: Some("${opentelemetry.version}-alpha"),
                    ..Dependency::managed("io.opentelemetry", "opentelemetry-bom-alpha")
                }
                .write_import(w);
            });
        });
}

/// The libraries of the runtime's classes the project holds (parts.rs'
/// `JavaPart::Library`), each row's comment first; optional in the runtime
/// module, whose users declare what they use.
fn write_libraries(w: &mut CodeWriter, libraries: &[&Library], optional: bool) {
    let mut said: &[&str] = &[];
    for library in libraries {
        if !library.why.is_empty() && library.why != said {
            comment(w, library.why);
            said = library.why;
        }
        Dependency {
            version: library.version,
            optional,
            ..Dependency::managed(library.group, library.artifact)
        }
        .write(w);
    }
}

/// The project's `pom.xml`: the reactor that builds the runtime module
/// (`svc-runtime/`), then the service (`service.pom.xml`, beside it in this
/// directory, so that the service's sources stay in `src/` and its jar is
/// `target/service.jar`).
pub(super) fn reactor_pom(doc: &Document) -> String {
    let mut w = CodeWriter::text(INDENT);
    project(&mut w);
    coordinates(
        &mut w,
        "com.svc",
        &format!("{}-build", doc.id),
        &escape(&doc.version),
    );
    element(&mut w, "packaging", "pom");
    element(
        &mut w,
        "description",
        "The runtime module, then the service, built together",
    );
    w.blank().block("<modules>", "</modules>", |w| {
        element(w, "module", RUNTIME_MODULE);
        element(w, "module", SERVICE_POM);
    });
    w.blank().block("<build>", "</build>", |w| {
        w.block("<plugins>", "</plugins>", |w| {
            comment(
                w,
                &[
                    "This directory's target/ is the service's, which cleans it itself: the",
                    "reactor, built last, must not remove its jar.",
                ],
            );
            configured_plugin(w, "maven-clean-plugin", |w| element(w, "skip", "true"));
        });
    });
    w.dedent().line("</project>");
    w.finish()
}

/// `svc-runtime/pom.xml`: the runtime, `dev.svc:svc-runtime` at
/// `java::RUNTIME_VERSION`, as runtime/pom.xml builds it, with the classes
/// and libraries of the features the graph uses. Its tests run where svc
/// is built.
pub(super) fn runtime_pom(doc: &Document, libraries: &[&Library]) -> String {
    let traced = doc.logical.settings.tracing.enabled;
    let mut w = CodeWriter::text(INDENT);
    project(&mut w);
    coordinates(&mut w, RUNTIME_GROUP, RUNTIME_MODULE, RUNTIME_VERSION);
    element(
        &mut w,
        "description",
        "The runtime of the services svc compiles for java-svc, with the features this graph uses",
    );
    w.blank().block("<properties>", "</properties>", |w| {
        element(w, "java.version", "21");
        comment(w, &["Its tests run where svc is built; none are here."]);
        element(w, "maven.test.skip", "true");
        if traced {
            opentelemetry_versions(w);
        }
    });
    if traced {
        opentelemetry_bom(&mut w);
    }
    w.blank().block("<dependencies>", "</dependencies>", |w| {
        Dependency::managed("org.springframework.boot", "spring-boot-starter-web").write(w);
        write_libraries(w, libraries, true);
    });
    w.dedent().line("</project>");
    w.finish()
}

/// `service.pom.xml`: the service, on the runtime module and the libraries
/// of the features it uses, at the runtime's versions.
pub(super) fn service_pom(
    doc: &Document,
    libraries: &[&Library],
    connector_dependencies: &[String],
) -> String {
    let description = doc
        .description
        .clone()
        .or_else(|| doc.name.clone())
        .unwrap_or_else(|| format!("The {} graph as a Spring Boot service", doc.id));
    let traced = doc.logical.settings.tracing.enabled;
    let mut w = CodeWriter::text(INDENT);
    project(&mut w);
    element(&mut w, "groupId", "com.svc");
    element(&mut w, "artifactId", &doc.id);
    element(&mut w, "version", &escape(&doc.version));
    element(&mut w, "description", &escape(&description));
    w.blank().block("<properties>", "</properties>", |w| {
        element(w, "java.version", "21");
        comment(
            w,
            &[
                "-Dsvc.cds.skip=true: package without the CDS training run below;",
                "with -Dspring-boot.aot.skip=true too, without Spring AOT (a developer",
                "build: what svc test and svc design build).",
            ],
        );
        element(w, "svc.cds.skip", "false");
        element(w, "spring-boot.aot.skip", "false");
        if traced {
            opentelemetry_versions(w);
        }
    });
    if traced {
        opentelemetry_bom(&mut w);
    }
    let checkpointer = doc.logical.settings.checkpointer.kind;
    w.blank().block("<dependencies>", "</dependencies>", |w| {
        Dependency::managed("org.springframework.boot", "spring-boot-starter-web").write(w);
        comment(w, &["The runtime, the module svc-runtime/ of this build."]);
        Dependency {
            version: Some(RUNTIME_VERSION),
            ..Dependency::managed(RUNTIME_GROUP, RUNTIME_MODULE)
        }
        .write(w);
        write_libraries(w, libraries, false);
        Dependency {
            scope: Some("test"),
            ..Dependency::managed("org.springframework.boot", "spring-boot-starter-test")
        }
        .write(w);
        // An invalid one is the connector-dependency error the project reports.
        for d in connector_dependencies
            .iter()
            .filter_map(|d| Dependency::parse(d).ok())
        {
            d.write(w);
        }
    });
    w.blank().block("<build>", "</build>", |w| {
        element(w, "finalName", "service");
        comment(
            w,
            &["The project's openapi.json goes into the jar, served at GET /openapi.json."],
        );
        w.block("<resources>", "</resources>", |w| {
            w.block("<resource>", "</resource>", |w| {
                element(w, "directory", "src/main/resources");
            });
            w.block("<resource>", "</resource>", |w| {
                element(w, "directory", "${project.basedir}");
                w.block("<includes>", "</includes>", |w| {
                    element(w, "include", "openapi.json");
                });
            });
        });
        w.block("<plugins>", "</plugins>", |w| {
            let sqlite = checkpointer == CheckpointerKind::Sqlite;
            if sqlite {
                native_access(w);
            }
            surefire(w, sqlite, &doc.logical.settings.a2a.tokens);
            spring_aot(w);
            cds_training_run(w, &doc.security.key_env);
        });
    });
    w.dedent().line("</project>");
    w.finish()
}

/// sqlite-jdbc loads its native library (System.load), which JDK 22 and
/// newer warn about unless the jar's classes may: the manifest of the jar
/// run with -jar says so (and the tests' JVM is told, `surefire`).
fn native_access(w: &mut CodeWriter) {
    comment(
        w,
        &[
            "sqlite-jdbc loads its native library: native access for the jar's classes",
            "(the manifest of the jar run with -jar; the tests' JVM below).",
        ],
    );
    configured_plugin(w, "maven-jar-plugin", |w| {
        w.block("<archive>", "</archive>", |w| {
            w.block("<manifestEntries>", "</manifestEntries>", |w| {
                element(w, "Enable-Native-Access", "ALL-UNNAMED");
            });
        });
    });
}

/// The tests' JVM, when it needs more than the defaults: native access for
/// sqlite-jdbc, and a token of its own for each A2A caller (the service
/// does not start without them), as python-svc's tests set them.
fn surefire(w: &mut CodeWriter, native_access: bool, tokens: &[A2aToken]) {
    if !native_access && tokens.is_empty() {
        return;
    }
    if !tokens.is_empty() {
        comment(
            w,
            &[
                "The tests' tokens of the A2A callers (settings.a2a.tokens), as system",
                "properties, which EnvFile reads when the variable is not set.",
            ],
        );
    }
    configured_plugin(w, "maven-surefire-plugin", |w| {
        if native_access {
            element(w, "argLine", "--enable-native-access=ALL-UNNAMED");
        }
        if !tokens.is_empty() {
            w.block(
                "<systemPropertyVariables>",
                "</systemPropertyVariables>",
                |w| {
                    for (i, t) in tokens.iter().enumerate() {
                        element(w, &t.token_env, &format!("a2a-test-token-{i}"));
                    }
                },
            );
        }
    });
}

/// Spring Boot's plugin, with its AOT processing.
fn spring_aot(w: &mut CodeWriter) {
    comment(
        w,
        &[
            "Spring AOT: at package time the application context is analysed once",
            "and its bean definitions written as code, which a start with",
            "-Dspring.aot.enabled=true uses instead of scanning and reflection.",
        ],
    );
    plugin(
        w,
        ("org.springframework.boot", "spring-boot-maven-plugin"),
        ("process-aot", None, "process-aot"),
        |_| {},
    );
}

/// The CDS training run after packaging; `key_env` gets a stand-in key.
fn cds_training_run(w: &mut CodeWriter, key_env: &str) {
    comment(
        w,
        &[
            "Spring Boot's CDS support, after the jar is built: the jar is extracted",
            "to target/app, and a training run starts the service there on a loopback",
            "port, answers one request of each kind (svc.training-run: TrainingRun.java)",
            "and stops. On a JDK 25 or newer it writes an AOT cache (the classes",
            "loaded and linked, and method profiles) to",
            "target/app/service.aot; on JDK 21 to 24 a CDS archive of the classes",
            "loaded, target/app/service.jsa. target/app/java.args names the one",
            "written: start with `java @target/app/java.args -jar target/app/service.jar`",
            "from this directory (either fits the JVM that wrote it and this class",
            "path; another JVM ignores it with a warning). -Dsvc.cds.skip=true skips",
            "the training run (java.args then only turns Spring AOT on, or with",
            "-Dspring-boot.aot.skip=true is empty).",
        ],
    );
    let java =
        r#"<exec executable="${java.home}/bin/java" dir="${project.basedir}" failonerror="true">"#;
    let training = r#"<exec executable="${java.home}/bin/java" dir="${project.basedir}" failonerror="true" unless:set="svc.cds.off">"#;
    plugin(
        w,
        ("org.apache.maven.plugins", "maven-antrun-plugin"),
        ("cds-training-run", Some("package"), "run"),
        |w| {
            w.block("<configuration>", "</configuration>", |w| {
                let target = r#"<target xmlns:if="ant:if" xmlns:unless="ant:unless">"#;
                w.block(target, "</target>", |w| {
                    w.block(r#"<condition property="svc.cds.off">"#, "</condition>", |w| {
                        w.line(r#"<istrue value="${svc.cds.skip}"/>"#);
                    });
                    // What the start needs: an AOT cache (JDK 25+), a CDS archive
                    // (JDK 21 to 24), Spring AOT alone, or nothing.
                    let condition = |w: &mut CodeWriter, property: &str, all: &[&str]| {
                        w.block(format!(r#"<condition property="{property}">"#), "</condition>", |w| {
                            w.block("<and>", "</and>", |w| {
                                for line in all {
                                    w.line(*line);
                                }
                            });
                        });
                    };
                    let jdk25 = r#"<javaversion atleast="25"/>"#;
                    let cds = r#"<not><istrue value="${svc.cds.skip}"/></not>"#;
                    condition(w, "svc.aot.cache", &[jdk25, cds]);
                    condition(w, "svc.cds.archive", &[&format!("<not>{jdk25}</not>"), cds]);
                    condition(
                        w,
                        "svc.spring-aot.only",
                        &[r#"<istrue value="${svc.cds.skip}"/>"#, r#"<not><istrue value="${spring-boot.aot.skip}"/></not>"#],
                    );
                    w.line(r#"<delete dir="${project.build.directory}/app"/>"#);
                    w.block(java, "</exec>", |w| {
                        w.line(r#"<arg line="-Djarmode=tools -jar target/service.jar extract --destination target/app"/>"#);
                    });
                    w.block(training, "</exec>", |w| {
                        comment(w, &["Stand-ins for this run only: it answers only itself."]);
                        w.line(format!(r#"<env key="{key_env}" value="cds-training-run"/>"#))
                            .line(r#"<env key="SVC_HOST" value="127.0.0.1"/>"#)
                            .line(r#"<env key="OTEL_SDK_DISABLED" value="true"/>"#)
                            .line(r#"<env key="SVC_PORT" value="0"/>"#)
                            .line(r#"<arg line="-XX:AOTCacheOutput=target/app/service.aot" if:set="svc.aot.cache"/>"#)
                            .line(r#"<arg line="-XX:ArchiveClassesAtExit=target/app/service.jsa" if:set="svc.cds.archive"/>"#)
                            .line(r#"<arg line="-Dspring.aot.enabled=true -Dsvc.training-run=true -jar target/app/service.jar"/>"#);
                    });
                    w.line(r#"<echo file="target/app/java.args" message=""/>"#)
                        .line(r#"<echo file="target/app/java.args" message="-XX:AOTCache=target/app/service.aot -Dspring.aot.enabled=true" if:set="svc.aot.cache"/>"#)
                        .line(r#"<echo file="target/app/java.args" message="-XX:SharedArchiveFile=target/app/service.jsa -Dspring.aot.enabled=true" if:set="svc.cds.archive"/>"#)
                        .line(r#"<echo file="target/app/java.args" message="-Dspring.aot.enabled=true" if:set="svc.spring-aot.only"/>"#);
                });
            });
        },
    );
}

svc_backend_sdk::ir::diagnostic_codes! {
    /// A connector asks the Java backend for a Maven dependency that is not group:artifact[:version].
    ///
    /// A connector's rendered code can list runtime dependencies per platform. The `java-svc` backend writes them into `service.pom.xml` and accepts only `group:artifact` or `group:artifact:version`, each part made of letters, digits, `.`, `_` and `-`. Anything else could not be written as a `<dependency>`.
    ///
    /// The spec comes from the connector component, so report it to the connector's author (or use another version of the connector).
    ///
    /// # Example
    ///
    /// A connector rendering for `java-svc` with
    ///
    /// ```rust,ignore
    /// Dependency { platform: "java-svc".into(), spec: "caffeine".into() }
    /// ```
    ///
    /// # Fix
    ///
    /// ```rust,ignore
    /// Dependency { platform: "java-svc".into(), spec: "com.github.ben-manes.caffeine:caffeine:3.1.8".into() }
    /// ```
    pub CONNECTOR_DEPENDENCY = "connector-dependency", group "connector";
}

#[cfg(test)]
mod tests {
    use super::{dependency_xml, service_pom};

    fn minimal() -> svc_backend_sdk::ir::Document {
        let text = include_str!("../../../../fixtures/valid/minimal.graph.json");
        svc_backend_sdk::ir::SourceFile::new("minimal.graph.json", text)
            .parse()
            .unwrap()
    }

    #[test]
    fn connector_dependencies_go_last_in_dependencies() {
        let doc = minimal();
        let deps = ["a.b:c", "x:y-z:1.0.2", "not a spec"].map(String::from);
        // As the format! text of before wrote them; the invalid one is left
        // to the connector-dependency error.
        let expected = service_pom(&doc, &[], &[]).replace(
            "    </dependencies>\n",
            "        <dependency>\n            <groupId>a.b</groupId>\n            <artifactId>c</artifactId>\n        </dependency>\n        <dependency>\n            <groupId>x</groupId>\n            <artifactId>y-z</artifactId>\n            <version>1.0.2</version>\n        </dependency>\n    </dependencies>\n",
        );
        assert_eq!(service_pom(&doc, &[], &deps), expected);
        assert!(dependency_xml("not a spec").is_err());
        assert_eq!(
            dependency_xml("a:b:1").unwrap(),
            "<dependency>\n    <groupId>a</groupId>\n    <artifactId>b</artifactId>\n    <version>1</version>\n</dependency>\n"
        );
    }

    /// The text of each `<tag>` in `xml`, in order.
    fn texts<'a>(xml: &'a str, tag: &str) -> Vec<&'a str> {
        let (open, close) = (format!("<{tag}>"), format!("</{tag}>"));
        xml.split(open.as_str())
            .skip(1)
            .map(|rest| rest.split(close.as_str()).next().unwrap().trim())
            .collect()
    }

    /// The runtime's own build (runtime/pom.xml) is `dev.svc:svc-runtime`
    /// at `java::RUNTIME_VERSION`, on the Spring Boot of generated projects,
    /// with every library a graph may need (parts.rs'
    /// `JavaPart::Library`) at the version a generated pom pins, optional
    /// (OpenTelemetry's through the same BOM); nothing else in it has a
    /// version.
    #[test]
    fn the_runtime_builds_with_the_projects_versions() {
        use super::{OPENTELEMETRY, SPRING_BOOT};
        use crate::java::{RUNTIME_GROUP, RUNTIME_VERSION};
        use crate::parts::{JavaPart, TABLE};

        let xml = include_str!("../../runtime/pom.xml");
        let parent = texts(xml, "parent")[0];
        assert_eq!(texts(parent, "artifactId"), ["spring-boot-starter-parent"]);
        assert_eq!(texts(parent, "version"), [SPRING_BOOT]);
        let own = xml.split("</parent>").nth(1).unwrap();
        let own = own.split("<properties>").next().unwrap();
        assert_eq!(texts(own, "groupId"), [RUNTIME_GROUP]);
        assert_eq!(texts(own, "artifactId"), ["svc-runtime"]);
        assert_eq!(texts(own, "version"), [RUNTIME_VERSION]);
        assert_eq!(texts(xml, "java.version"), ["21"]);

        let mut pinned: Vec<(&str, &str, &str)> = TABLE
            .iter()
            .flat_map(|row| row.parts.iter())
            .filter_map(|part| match part {
                JavaPart::Library(l) => l.version.map(|v| (l.group, l.artifact, v)),
                _ => None,
            })
            .collect();
        pinned.sort();
        pinned.dedup();
        // OpenTelemetry (Telemetry's) through its BOM, as a traced graph's pom.
        let (managed, deps) = xml.split_once("</dependencyManagement>").unwrap();
        assert_eq!(texts(xml, "opentelemetry.version"), [OPENTELEMETRY]);
        assert!(
            managed.contains("<artifactId>opentelemetry-bom-alpha</artifactId>\n                <version>${opentelemetry.version}-alpha</version>"),
            "{managed}"
        );
        let mut found = Vec::new();
        for dep in texts(deps, "dependency") {
            let versions = texts(dep, "version");
            let Some(version) = versions.first() else {
                continue;
            };
            let (group, artifact) = (texts(dep, "groupId")[0], texts(dep, "artifactId")[0]);
            assert_eq!(
                texts(dep, "optional"),
                ["true"],
                "{group}:{artifact} is not optional"
            );
            found.push((group, artifact, *version));
        }
        found.sort();
        assert_eq!(found, pinned);
    }

    #[test]
    fn the_description_is_escaped() {
        let mut doc = minimal();
        doc.description = Some("a < b & c > d".into());
        let text = service_pom(&doc, &[], &[]);
        assert!(
            text.contains("\n    <description>a &lt; b &amp; c &gt; d</description>\n"),
            "{text}"
        );
    }
}
