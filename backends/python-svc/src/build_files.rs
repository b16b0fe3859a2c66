//! The project's build files: `pyproject.toml` and the `Dockerfile`.

use svc_backend_sdk::ir::{Document, NodeKind};
use svc_backend_sdk::writer::CodeWriter;

use crate::project::sdk_requirement;

/// The base image of the Dockerfile: a Python the SDK supports.
pub(crate) const PYTHON_IMAGE: &str = "python:3.12-slim";

/// A TOML basic string (a JSON string is one).
fn toml_string(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_default()
}

/// A TOML array of strings, on one line.
fn toml_array<S: AsRef<str>>(items: &[S]) -> String {
    let items: Vec<String> = items.iter().map(|i| toml_string(i.as_ref())).collect();
    format!("[{}]", items.join(", "))
}

/// A TOML table: `[name]`, then its `key = value` lines; a blank line
/// before it unless it is the first.
fn table(w: &mut CodeWriter, name: &str, entries: &[(&str, String)]) {
    w.blank().line(format!("[{name}]"));
    for (key, value) in entries {
        w.line(format!("{key} = {value}"));
    }
}

/// pyproject.toml: the `app` package, the SDK and the connectors'
/// requirements, pytest's settings.
pub(crate) fn pyproject(doc: &Document, connector_dependencies: &[String]) -> String {
    let dependencies: Vec<String> = std::iter::once(sdk_requirement(doc))
        .chain(connector_dependencies.iter().cloned())
        .collect();
    let mut w = CodeWriter::text("    ");
    table(
        &mut w,
        "build-system",
        &[
            ("requires", toml_array(&["setuptools>=68"])),
            ("build-backend", toml_string("setuptools.build_meta")),
        ],
    );
    table(
        &mut w,
        "project",
        &[
            ("name", toml_string(&doc.id)),
            ("version", toml_string(&doc.version)),
            ("requires-python", toml_string(">=3.10,<3.14")),
            ("dependencies", toml_array(&dependencies)),
        ],
    );
    table(
        &mut w,
        "project.optional-dependencies",
        &[("test", toml_array(&["pytest>=8", "httpx>=0.27"]))],
    );
    table(
        &mut w,
        "tool.setuptools.packages.find",
        &[("include", toml_array(&["app*"]))],
    );
    // The rag nodes' documents ship with the package.
    if doc
        .logical
        .nodes
        .iter()
        .any(|n| matches!(n.kind, NodeKind::Rag(_)))
    {
        table(
            &mut w,
            "tool.setuptools.package-data",
            &[("app", toml_array(&["documents/*.json"]))],
        );
    }
    table(
        &mut w,
        "tool.pytest.ini_options",
        &[
            ("pythonpath", toml_array(&["."])),
            ("testpaths", toml_array(&["tests"])),
        ],
    );
    w.finish()
}

/// The project's image: a virtual environment with the project and its
/// dependencies, copied onto a slim Python image where the service runs as
/// a non-root user.
pub(crate) fn dockerfile(doc: &Document) -> String {
    let port = doc.logical.settings.server.port;
    let mut w = CodeWriter::text("    ");
    w.line("# Install the service into a virtual environment, then run it as a non-root user on a")
        .line(
            "# slim image. Secrets come only from the environment of `docker run` (env.yaml stays",
        )
        .line("# out of the image, see .dockerignore).")
        .line(format!("FROM {PYTHON_IMAGE} AS build"))
        .line("ENV PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_CACHE_DIR=1")
        .line("RUN python -m venv /opt/venv")
        .line("ENV PATH=/opt/venv/bin:$PATH")
        .line("WORKDIR /srv/service")
        .line("COPY . .")
        .line("# vendor/: the svc-sdk wheel the project was compiled with (see the README).")
        .line("# application.json: the configuration precompiled, read without YAML at start-up.")
        .line("RUN pip install --find-links vendor . && python -m svc compile --force")
        .blank();
    w.line(format!("FROM {PYTHON_IMAGE}"))
        .line("RUN useradd --system --uid 10001 --no-create-home --shell /usr/sbin/nologin svc")
        .line("COPY --from=build /opt/venv /opt/venv")
        .line("COPY --from=build /srv/service /srv/service")
        .line("WORKDIR /srv/service")
        .line(format!(
            "ENV PATH=/opt/venv/bin:$PATH PYTHONUNBUFFERED=1 SVC_HOST=0.0.0.0 SVC_PORT={port}"
        ))
        .line("USER 10001")
        .line(format!("EXPOSE {port}"))
        .line("HEALTHCHECK --interval=10s --timeout=5s --start-period=10s --retries=3 \\");
    w.indent().line(
        "CMD [\"python\", \"-c\", \"import os, urllib.request; urllib.request.urlopen('http://127.0.0.1:' + os.environ['SVC_PORT'] + '/health', timeout=2)\"]",
    );
    w.dedent()
        .line("CMD [\"python\", \"-m\", \"svc\", \"run\"]");
    w.finish()
}

#[cfg(test)]
mod tests {
    use super::{pyproject, toml_array, toml_string};

    #[test]
    fn toml_values_are_quoted_and_escaped() {
        assert_eq!(toml_string("a\"b\\c"), r#""a\"b\\c""#);
        assert_eq!(toml_array(&["x", "y>=1"]), r#"["x", "y>=1"]"#);
        assert_eq!(toml_array::<&str>(&[]), "[]");
    }

    #[test]
    fn connector_dependencies_follow_the_sdk() {
        let text = include_str!("../../../fixtures/valid/minimal.graph.json");
        let doc = svc_backend_sdk::ir::SourceFile::new("minimal.graph.json", text)
            .parse()
            .unwrap();
        let sdk = crate::project::sdk_requirement(&doc);
        let deps = ["httpx>=0.27".to_string(), "odd \"name\"".to_string()];
        let toml = pyproject(&doc, &deps);
        let line = format!("dependencies = [\"{sdk}\", \"httpx>=0.27\", \"odd \\\"name\\\"\"]\n");
        assert!(toml.contains(&line), "{toml}");
        assert!(toml.starts_with("[build-system]\n"), "{toml}");
    }
}
