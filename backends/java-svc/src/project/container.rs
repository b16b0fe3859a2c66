//! `Dockerfile` and `.dockerignore`: the jar built with the Maven Wrapper
//! (Spring AOT included), then run on a JRE image as a non-root user, with
//! the AOT cache of a training run made in that image (a cache fits only
//! the JVM that wrote it, so it cannot come from the JDK stage).

use svc_backend_sdk::ir::Document;

/// The base images: Temurin's 25, whose JVM reads an AOT cache (JEP 483);
/// the project still compiles for Java 21.
const JDK_IMAGE: &str = "eclipse-temurin:25-jdk";
const JRE_IMAGE: &str = "eclipse-temurin:25-jre";

pub(super) fn dockerfile(doc: &Document, pkg: &str) -> String {
    let port = doc.logical.settings.server.port;
    let key_env = &doc.security.key_env;
    format!(
        "# Build the jar, then run it on a JRE as a non-root user. Secrets come only from the\n\
         # environment of `docker run` (env.yaml stays out of the image, see .dockerignore).\n\
         FROM {JDK_IMAGE} AS build\n\
         WORKDIR /src\n\
         COPY mvnw pom.xml ./\n\
         COPY .mvn .mvn\n\
         RUN ./mvnw -q -B dependency:go-offline\n\
         COPY openapi.json ./\n\
         COPY src src\n\
         # The training run happens in the final image, with the JVM that will read its cache.\n\
         RUN ./mvnw -q -B -DskipTests -Dsvc.cds.skip=true package\n\
         \n\
         FROM {JRE_IMAGE}\n\
         RUN useradd --system --uid 10001 --no-create-home --shell /usr/sbin/nologin svc\n\
         WORKDIR /app\n\
         COPY --from=build /src/target/service.jar /tmp/service.jar\n\
         # Spring Boot's CDS support on JDK 25: the extracted jar, and a training run that\n\
         # starts the application context, stops, and writes the AOT cache of the classes it\n\
         # loaded and linked to service.aot (the key is a stand-in for that run only).\n\
         RUN java -Djarmode=tools -jar /tmp/service.jar extract --destination /app \\\n\
         \x20   && rm /tmp/service.jar \\\n\
         \x20   && {key_env}=cds-training-run SVC_PORT=0 java -XX:AOTCacheOutput=/app/service.aot \\\n\
         \x20       -Dspring.aot.enabled=true -Dspring.context.exit=onRefresh -jar /app/service.jar\n\
         ENV SVC_HOST=0.0.0.0 SVC_PORT={port}\n\
         USER 10001\n\
         EXPOSE {port}\n\
         HEALTHCHECK --interval=10s --timeout=5s --start-period=20s --retries=3 \\\n\
         \x20   CMD [\"java\", \"-cp\", \"/app/service.jar\", \"com.svc.{pkg}.runtime.HealthCheck\"]\n\
         ENTRYPOINT [\"java\", \"-XX:AOTCache=/app/service.aot\", \"-Dspring.aot.enabled=true\", \"-jar\", \"/app/service.jar\"]\n"
    )
}

pub(super) const DOCKERIGNORE: &str = "target/\nenv.yaml\n.git/\n";
