//! Connector nodes: their code comes from the connector component named by
//! `codegen.templates[platform][node]`, rendered by the host before emit
//! and handed to the backend as [`Connectors`]. See the connector contract
//! in `marketplace/README.md`.

use std::collections::{BTreeMap, BTreeSet};

use svc_ir::{Document, NodeKind};

use crate::{Connectors, Diagnostic, File};
use svc_ir::ConnectorNode;

/// The `env:NAME` values in connector configs, as (node id, NAME): the
/// variables a connector reads at run time. Generated tests point them at
/// their local stub; READMEs and env.yaml list them.
pub fn env_refs(doc: &Document) -> Vec<(String, String)> {
    fn walk(v: &serde_json::Value, node: &str, out: &mut Vec<(String, String)>) {
        match v {
            serde_json::Value::String(s) => {
                if let Some(var) = s.strip_prefix("env:").filter(|v| svc_ir::is_identifier(v)) {
                    out.push((node.to_string(), var.to_string()));
                }
            }
            serde_json::Value::Array(items) => items.iter().for_each(|i| walk(i, node, out)),
            serde_json::Value::Object(m) => m.values().for_each(|i| walk(i, node, out)),
            _ => {}
        }
    }
    let mut out = Vec::new();
    for n in &doc.logical.nodes {
        if let NodeKind::Connector(ConnectorNode { config }) = &n.kind {
            for v in config.values() {
                walk(v, &n.id, &mut out);
            }
        }
    }
    out.dedup();
    out
}

/// What the connector nodes of a document add to a project.
#[derive(Debug, Default)]
pub struct Placed {
    /// The function body of each connector node, by node id.
    pub snippets: BTreeMap<String, String>,
    /// Extra files, each once.
    files: BTreeMap<String, File>,
    /// This platform's dependency specs (packages), sorted and unique.
    pub dependencies: Vec<String>,
    /// The backend's runtime helpers the connectors use (the names of
    /// their `svc-runtime:NAME` dependencies), which the backend emits.
    pub runtime: BTreeSet<String>,
}

impl Placed {
    pub fn is_empty(&self) -> bool {
        self.snippets.is_empty()
    }

    /// Whether a connector file lives under `prefix`.
    pub fn has_files_under(&self, prefix: &str) -> bool {
        self.files.keys().any(|p| p.starts_with(prefix))
    }

    /// Adds the connector files to the backend's own; a path both write is
    /// an error.
    pub fn merge_into(self, files: &mut Vec<File>) -> Result<(), Vec<Diagnostic>> {
        let clashes: Vec<Diagnostic> = self
            .files
            .keys()
            .filter(|p| files.iter().any(|f| &f.path == *p))
            .map(|p| {
                Diagnostic::error(
                    &CONNECTOR_FILE_CONFLICT,
                    format!("a connector writes `{p}`, which the backend generates itself"),
                )
                .hint("connector files belong in the folders the connector contract names (marketplace/README.md)")
            })
            .collect();
        if !clashes.is_empty() {
            return Err(clashes);
        }
        files.extend(self.files.into_values());
        Ok(())
    }
}

/// The prefix of a dependency spec that names a helper of the backend's
/// runtime instead of a package: `svc-runtime:upstream` asks the backend
/// for its upstream HTTP client (see [`runtime_helper`]).
pub const RUNTIME_PREFIX: &str = "svc-runtime:";

/// A connector's declaration that its code for `platform` calls the
/// backend's runtime helper `name` (the helpers each backend offers are
/// listed in `marketplace/README.md`); the backend then emits it, so a
/// connector carries no copy of the runtime.
pub fn runtime_helper(platform: &str, name: &str) -> crate::Dependency {
    crate::Dependency {
        platform: platform.to_string(),
        spec: format!("{RUNTIME_PREFIX}{name}"),
    }
}

/// Gathers the rendered connector nodes' snippets, files (each path once;
/// two different contents at one path are an error) and this platform's
/// dependencies: packages, and the runtime helpers of the backend, which
/// must be among the `helpers` it offers.
pub fn place(
    doc: &Document,
    platform: &str,
    helpers: &[&str],
    connectors: &Connectors,
) -> Result<Placed, Vec<Diagnostic>> {
    let mut placed = Placed::default();
    let mut diags = Vec::new();
    for (i, n) in doc.logical.nodes.iter().enumerate() {
        let NodeKind::Connector(_) = &n.kind else {
            continue;
        };
        let node = n.id.clone();
        let Some(rendered) = connectors.get(&node).cloned() else {
            diags.push(
                Diagnostic::error(
                    &svc_ir::codes::CONNECTOR_MISSING,
                    format!("the host rendered no code for connector node `{node}` on {platform}"),
                )
                .at(format!("/logical/nodes/{i}"))
                .hint(
                    "the emit request does not match the document; report it to the host's authors",
                ),
            );
            continue;
        };
        for f in rendered.files {
            match placed.files.get(&f.path) {
                Some(existing) if existing.contents != f.contents => diags.push(
                    Diagnostic::error(
                        &CONNECTOR_FILE_CONFLICT,
                        format!(
                            "connector node `{node}` writes `{}` with contents different from another connector node's",
                            f.path
                        ),
                    )
                    .node(node.clone()),
                ),
                Some(_) => {}
                None => {
                    placed.files.insert(f.path.clone(), f);
                }
            }
        }
        for d in rendered.dependencies {
            if d.platform != platform {
                continue;
            }
            match d.spec.strip_prefix(RUNTIME_PREFIX) {
                None => placed.dependencies.push(d.spec),
                Some(helper) if helpers.contains(&helper) => {
                    placed.runtime.insert(helper.to_string());
                }
                Some(helper) => diags.push(
                    Diagnostic::error(
                        &CONNECTOR_RUNTIME,
                        format!(
                            "connector node `{node}` asks for the runtime helper `{helper}`, which the {platform} backend does not have"
                        ),
                    )
                    .at(format!("/logical/nodes/{i}"))
                    .hint(if helpers.is_empty() {
                        format!("the {platform} backend offers no runtime helpers to connectors; use a version of the connector made for this backend")
                    } else {
                        format!(
                            "the {platform} backend offers {}; use a version of the connector made for this backend",
                            helpers.join(", ")
                        )
                    }),
                ),
            }
        }
        placed.snippets.insert(node, rendered.snippet);
    }
    placed.dependencies.sort();
    placed.dependencies.dedup();
    if diags.is_empty() {
        Ok(placed)
    } else {
        Err(diags)
    }
}

svc_ir::diagnostic_codes! {
    /// A connector writes a file the backend generates, or two connector nodes write one path with different contents.
    ///
    /// Connector components return files besides the snippet of each node. Every path must be written once: a connector file at a path the backend generates itself (say `go.mod`), or two connector nodes writing the same path with different contents, would silently overwrite code, so the compile stops. Identical files from several nodes are written once.
    ///
    /// Connector files belong in the folders the connector contract names (`marketplace/README.md`); report the clash to the connector's author.
    ///
    /// # Example
    ///
    /// A connector that renders for `go`
    ///
    /// ```rust,ignore
    /// files: vec![File::text("go.mod", "module x\n")],
    /// ```
    ///
    /// # Fix
    ///
    /// ```rust,ignore
    /// files: vec![File::text("internal/connectors/webhook/webhook.go", WEBHOOK_GO)],
    /// ```
    pub CONNECTOR_FILE_CONFLICT = "connector-file-conflict", group "connector";

    /// A connector asks for a runtime helper the backend does not have.
    ///
    /// A connector's code may call the backend's own runtime instead of carrying a copy of it: it declares a dependency `svc-runtime:NAME` for the platform (`svc_backend_sdk::connectors::runtime_helper`), and the backend emits that helper into the project. A name the backend does not offer means the connector was made for another version of the backend; its code would not compile, so the compile stops.
    ///
    /// Use a version of the connector made for this backend (the helpers each backend offers are listed in `marketplace/README.md`), or report it to the connector's author.
    ///
    /// # Example
    ///
    /// A connector that renders for `go`
    ///
    /// ```rust,ignore
    /// dependencies: vec![runtime_helper("go", "mailer")],
    /// ```
    ///
    /// while the go backend offers `upstream` only.
    ///
    /// # Fix
    ///
    /// ```rust,ignore
    /// dependencies: vec![runtime_helper("go", "upstream")],
    /// ```
    ///
    /// with code that calls the runtime's upstream client.
    pub CONNECTOR_RUNTIME = "connector-runtime", group "connector";
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Dependency, Rendered};

    fn rendered(node: &str, shared: &str) -> Rendered {
        Rendered {
            files: vec![File::text("shared.txt", shared)],
            snippet: format!("// {node}"),
            dependencies: vec![
                Dependency {
                    platform: "go".into(),
                    spec: "dep>=1".into(),
                },
                Dependency {
                    platform: "elsewhere".into(),
                    spec: "nope".into(),
                },
                runtime_helper("go", "upstream"),
                runtime_helper("elsewhere", "nothing"),
            ],
        }
    }

    fn doc() -> Document {
        let text = r#"{"irVersion":"2.2","id":"d","logical":{"state":[],"nodes":[
            {"id":"start","kind":"start"},
            {"id":"a","kind":"connector","config":{}},
            {"id":"b","kind":"connector","config":{"url":"x"}},
            {"id":"end","kind":"end"}],
            "edges":[{"from":"start","to":"a"},{"from":"a","to":"b"},{"from":"b","to":"end"}]},
            "codegen":{"templates":{"go":{"a":{"connector":"x/y","version":"^1"},"b":{"connector":"x/y","version":"^1"}}}}}"#;
        svc_ir::SourceFile::new("d.json", text.to_string())
            .parse()
            .unwrap()
    }

    #[test]
    fn places_snippets_files_once_and_this_platforms_dependencies() {
        let connectors = Connectors::new([
            ("a".to_string(), rendered("a", "same")),
            ("b".to_string(), rendered("b", "same")),
        ]);
        let placed = place(&doc(), "go", &["upstream"], &connectors).unwrap();
        assert_eq!(placed.snippets["a"], "// a");
        assert_eq!(placed.dependencies, ["dep>=1"]);
        assert_eq!(placed.runtime.iter().collect::<Vec<_>>(), ["upstream"]);
        let mut files = vec![File::text("go.mod", "")];
        placed.merge_into(&mut files).unwrap();
        assert_eq!(files.len(), 2);
    }

    #[test]
    fn different_files_at_one_path_conflict() {
        let connectors = Connectors::new([
            ("a".to_string(), rendered("a", "same")),
            ("b".to_string(), rendered("b", "other")),
        ]);
        let err = place(&doc(), "go", &["upstream"], &connectors).unwrap_err();
        assert_eq!(err[0].code, "connector-file-conflict");
    }

    #[test]
    fn a_runtime_helper_the_backend_lacks_is_refused_by_name() {
        let connectors = Connectors::new([
            ("a".to_string(), rendered("a", "same")),
            ("b".to_string(), rendered("b", "same")),
        ]);
        let err = place(&doc(), "go", &["other"], &connectors).unwrap_err();
        assert_eq!(err.len(), 2);
        assert_eq!(err[0].code, "connector-runtime");
        assert!(err[0].message.contains("`upstream`"), "{}", err[0].message);
        assert_eq!(err[0].pointer.as_deref(), Some("/logical/nodes/1"));
    }

    #[test]
    fn a_node_the_host_did_not_render_is_named() {
        let connectors = Connectors::new([("a".to_string(), rendered("a", "same"))]);
        let err = place(&doc(), "go", &["upstream"], &connectors).unwrap_err();
        assert_eq!(err.len(), 1);
        assert_eq!(err[0].code, "connector-missing");
        assert_eq!(err[0].pointer.as_deref(), Some("/logical/nodes/2"));
    }
}
