//! `pom.xml`: Spring Boot parent, the graph's dependencies, connector
//! dependencies.

use svc_backend_sdk::ir::Document;
use svc_backend_sdk::Diagnostic;

use super::SPRING_BOOT;

/// A `<dependency>` for `group:artifact[:version]` (no version: managed by
/// Spring Boot's BOM).
pub(super) fn dependency_xml(spec: &str) -> Result<String, Diagnostic> {
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

pub(super) fn pom(doc: &Document, connector_dependencies: &[String]) -> String {
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
        <!-- The project's openapi.json goes into the jar, served at GET /openapi.json. -->
        <resources>
            <resource>
                <directory>src/main/resources</directory>
            </resource>
            <resource>
                <directory>${{project.basedir}}</directory>
                <includes>
                    <include>openapi.json</include>
                </includes>
            </resource>
        </resources>
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
