//! `Dockerfile` and `.dockerignore`: the jar built with the Maven Wrapper
//! (the runtime module, then the service, Spring AOT included), then run on a JRE image as a non-root user, with
//! the AOT cache of a training run made in that image (a cache fits only
//! the JVM that wrote it, so it cannot come from the JDK stage).

use svc_backend_sdk::ir::Document;
use svc_backend_sdk::writer::CodeWriter;

use super::{RUNTIME_MODULE, SERVICE_POM};
use crate::java::RUNTIME_PACKAGE;

/// The base images: Temurin's 25, whose JVM reads an AOT cache (JEP 483);
/// the project still compiles for Java 21.
const JDK_IMAGE: &str = "eclipse-temurin:25-jdk";
const JRE_IMAGE: &str = "eclipse-temurin:25-jre";

pub(super) fn dockerfile(doc: &Document) -> String {
    let port = doc.logical.settings.server.port;
    let key_env = &doc.security.key_env;
    let mut w = CodeWriter::text("    ");
    w.line("# Build the jar, then run it on a JRE as a non-root user. Secrets come only from the")
        .line("# environment of `docker run` (env.yaml stays out of the image, see .dockerignore).")
        .line(format!("FROM {JDK_IMAGE} AS build"))
        .line("WORKDIR /src")
        .line(format!("COPY mvnw pom.xml {SERVICE_POM} ./"))
        .line("COPY .mvn .mvn")
        .line(format!("COPY {RUNTIME_MODULE}/pom.xml {RUNTIME_MODULE}/"))
        .line("RUN ./mvnw -q -B dependency:go-offline")
        .line(format!("COPY {RUNTIME_MODULE}/src {RUNTIME_MODULE}/src"))
        .line("COPY openapi.json ./")
        .line("COPY src src")
        .line(
            "# The training run happens in the final image, with the JVM that will read its cache.",
        )
        .line("RUN ./mvnw -q -B -DskipTests -Dsvc.cds.skip=true package")
        .blank();
    w.line(format!("FROM {JRE_IMAGE}"))
        .line("RUN useradd --system --uid 10001 --no-create-home --shell /usr/sbin/nologin svc")
        .line("WORKDIR /app")
        .line("COPY --from=build /src/target/service.jar /tmp/service.jar")
        .line("# Spring Boot's CDS support on JDK 25: the extracted jar, and a training run that")
        .line("# starts the service on a loopback port, answers one request of each kind, stops,")
        .line("# and writes the AOT cache of the classes it loaded and linked to service.aot (the")
        .line("# key is a stand-in for that run only).")
        .line("RUN java -Djarmode=tools -jar /tmp/service.jar extract --destination /app \\");
    w.indent()
        .line("&& rm /tmp/service.jar \\")
        .line(format!(
            "&& {key_env}=cds-training-run SVC_HOST=127.0.0.1 SVC_PORT=0 OTEL_SDK_DISABLED=true \\"
        ))
        .indent()
        .line("java -XX:AOTCacheOutput=/app/service.aot -Dspring.aot.enabled=true -Dsvc.training-run=true \\")
        .line("-jar /app/service.jar");
    w.dedent().dedent();
    w.line(format!("ENV SVC_HOST=0.0.0.0 SVC_PORT={port}"))
        .line("USER 10001")
        .line(format!("EXPOSE {port}"))
        .line("HEALTHCHECK --interval=10s --timeout=5s --start-period=20s --retries=3 \\");
    w.indent().line(format!(
        "CMD [\"java\", \"-cp\", \"/app/service.jar\", \"{RUNTIME_PACKAGE}.HealthCheck\"]"
    ));
    w.dedent().line(
        "ENTRYPOINT [\"java\", \"-XX:AOTCache=/app/service.aot\", \"-Dspring.aot.enabled=true\", \"-jar\", \"/app/service.jar\"]",
    );
    w.finish()
}

/// `.dockerignore`: the build output, the local secrets and the history
/// stay out of the build context.
pub(super) const DOCKERIGNORE: &str = include_str!("../../runtime/dockerignore");
