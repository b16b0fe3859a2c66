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
            &CONNECTOR_DEPENDENCY,
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
        <!-- -Dsvc.cds.skip=true: package without the CDS training run below. -->
        <svc.cds.skip>false</svc.cds.skip>
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
            <!-- Spring AOT: at package time the application context is analysed once
                 and its bean definitions written as code, which a start with
                 -Dspring.aot.enabled=true uses instead of scanning and reflection. -->
            <plugin>
                <groupId>org.springframework.boot</groupId>
                <artifactId>spring-boot-maven-plugin</artifactId>
                <executions>
                    <execution>
                        <id>process-aot</id>
                        <goals>
                            <goal>process-aot</goal>
                        </goals>
                    </execution>
                </executions>
            </plugin>
            <!-- Spring Boot's CDS support, after the jar is built: the jar is extracted
                 to target/app, and a training run starts the application context there
                 and stops (spring.context.exit=onRefresh). On a JDK 25 or newer it writes
                 an AOT cache (the classes loaded and linked, and method profiles) to
                 target/app/service.aot; on JDK 21 to 24 a CDS archive of the classes
                 loaded, target/app/service.jsa. target/app/java.args names the one
                 written: start with `java @target/app/java.args -jar target/app/service.jar`
                 from this directory (either fits the JVM that wrote it and this class
                 path; another JVM ignores it with a warning). -Dsvc.cds.skip=true skips
                 it all. -->
            <plugin>
                <groupId>org.apache.maven.plugins</groupId>
                <artifactId>maven-antrun-plugin</artifactId>
                <executions>
                    <execution>
                        <id>cds-training-run</id>
                        <phase>package</phase>
                        <goals>
                            <goal>run</goal>
                        </goals>
                        <configuration>
                            <skip>${{svc.cds.skip}}</skip>
                            <target xmlns:if="ant:if" xmlns:unless="ant:unless">
                                <condition property="svc.aot.cache">
                                    <javaversion atleast="25"/>
                                </condition>
                                <delete dir="${{project.build.directory}}/app"/>
                                <exec executable="${{java.home}}/bin/java" dir="${{project.basedir}}" failonerror="true">
                                    <arg line="-Djarmode=tools -jar target/service.jar extract --destination target/app"/>
                                </exec>
                                <exec executable="${{java.home}}/bin/java" dir="${{project.basedir}}" failonerror="true">
                                    <!-- Stand-ins for this run only: it serves nothing. -->
                                    <env key="{key_env}" value="cds-training-run"/>
                                    <env key="SVC_PORT" value="0"/>
                                    <arg line="-XX:AOTCacheOutput=target/app/service.aot" if:set="svc.aot.cache"/>
                                    <arg line="-XX:ArchiveClassesAtExit=target/app/service.jsa" unless:set="svc.aot.cache"/>
                                    <arg line="-Dspring.aot.enabled=true -Dspring.context.exit=onRefresh -jar target/app/service.jar"/>
                                </exec>
                                <echo file="target/app/java.args" message="-XX:AOTCache=target/app/service.aot -Dspring.aot.enabled=true" if:set="svc.aot.cache"/>
                                <echo file="target/app/java.args" message="-XX:SharedArchiveFile=target/app/service.jsa -Dspring.aot.enabled=true" unless:set="svc.aot.cache"/>
                            </target>
                        </configuration>
                    </execution>
                </executions>
            </plugin>
        </plugins>
    </build>
</project>
"#,
        id = doc.id,
        key_env = doc.security.key_env,
        version = esc(&doc.version),
        description = esc(&description),
    )
}

svc_backend_sdk::ir::diagnostic_codes! {
    /// A connector asks the Java backend for a Maven dependency that is not group:artifact[:version].
    ///
    /// A connector's rendered code can list runtime dependencies per platform. The `java-svc` backend writes them into `pom.xml` and accepts only `group:artifact` or `group:artifact:version`, each part made of letters, digits, `.`, `_` and `-`. Anything else could not be written as a `<dependency>`.
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
