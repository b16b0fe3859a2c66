//! Connector nodes: their code comes from the connector component named by
//! `codegen.templates[platform][node]`, rendered through the host. See the
//! connector contract in `marketplace/README.md`.

use std::collections::BTreeMap;

use svc_ir::{Document, NodeKind};

use crate::{ConnectorRef, Diagnostic, File, Rendered, Templates};

/// Renders every connector node of the document for `platform`, returning
/// (node id, rendered code) or every failure at once.
pub fn render_all(
    doc: &Document,
    platform: &str,
    templates: &mut dyn Templates,
) -> Result<Vec<(String, Rendered)>, Vec<Diagnostic>> {
    let mut out = Vec::new();
    let mut diags = Vec::new();
    for (i, n) in doc.logical.nodes.iter().enumerate() {
        let NodeKind::Connector { config } = &n.kind else {
            continue;
        };
        let ptr = format!("/logical/nodes/{i}");
        let Some(t) = doc
            .codegen
            .templates
            .get(platform)
            .and_then(|t| t.get(&n.id))
        else {
            diags.push(
                Diagnostic::error(
                    "template-required",
                    format!("connector node `{}`: template required (codegen.templates[\"{platform}\"])", n.id),
                )
                .at(ptr),
            );
            continue;
        };
        let reference = ConnectorRef {
            node_id: n.id.clone(),
            id: t.connector.clone(),
            version: t.version.clone(),
            entry: t.entry.clone(),
        };
        let config = serde_json::to_string(config).unwrap_or_default();
        match templates.render(&reference, platform, &config) {
            Ok(rendered) => out.push((n.id.clone(), rendered)),
            // Pointers from the host and the connector are relative to the
            // node's config.
            Err(errors) => diags.extend(errors.into_iter().map(|mut d| {
                d.pointer = Some(match d.pointer.take() {
                    Some(p) if p.starts_with('/') => format!("{ptr}/config{p}"),
                    Some(p) if p.is_empty() => format!("{ptr}/config"),
                    _ => ptr.clone(),
                });
                d
            })),
        }
    }
    if diags.is_empty() {
        Ok(out)
    } else {
        Err(diags)
    }
}

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
        if let NodeKind::Connector { config } = &n.kind {
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
    /// This platform's dependency specs, sorted and unique.
    pub dependencies: Vec<String>,
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
                    "connector-file-conflict",
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

/// Renders every connector node and gathers their snippets, files (each
/// path once; two different contents at one path are an error) and this
/// platform's dependencies.
pub fn place(
    doc: &Document,
    platform: &str,
    templates: &mut dyn Templates,
) -> Result<Placed, Vec<Diagnostic>> {
    let mut placed = Placed::default();
    let mut diags = Vec::new();
    for (node, rendered) in render_all(doc, platform, templates)? {
        for f in rendered.files {
            match placed.files.get(&f.path) {
                Some(existing) if existing.contents != f.contents => diags.push(
                    Diagnostic::error(
                        "connector-file-conflict",
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
        placed.dependencies.extend(
            rendered
                .dependencies
                .into_iter()
                .filter(|d| d.platform == platform)
                .map(|d| d.spec),
        );
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Dependency;

    struct Fake;

    impl Templates for Fake {
        fn render(
            &mut self,
            c: &ConnectorRef,
            platform: &str,
            config: &str,
        ) -> Result<Rendered, Vec<Diagnostic>> {
            if config.contains("bad") {
                return Err(vec![Diagnostic::error("connector-config", "bad").at("/url")]);
            }
            Ok(Rendered {
                files: vec![File::text(
                    "shared.txt",
                    if c.node_id == "b" && config.contains("clash") {
                        "other"
                    } else {
                        "same"
                    },
                )],
                snippet: format!("// {} for {platform}", c.node_id),
                dependencies: vec![
                    Dependency {
                        platform: platform.into(),
                        spec: "dep>=1".into(),
                    },
                    Dependency {
                        platform: "elsewhere".into(),
                        spec: "nope".into(),
                    },
                ],
            })
        }
    }

    fn doc(config_b: &str) -> Document {
        let text = format!(
            r#"{{"irVersion":"2.2","id":"d","logical":{{"state":[],"nodes":[
            {{"id":"start","kind":"start"}},
            {{"id":"a","kind":"connector","config":{{}}}},
            {{"id":"b","kind":"connector","config":{{"url":"{config_b}"}}}},
            {{"id":"end","kind":"end"}}],
            "edges":[{{"from":"start","to":"a"}},{{"from":"a","to":"b"}},{{"from":"b","to":"end"}}]}},
            "codegen":{{"templates":{{"go":{{"a":{{"connector":"x/y","version":"^1"}},"b":{{"connector":"x/y","version":"^1"}}}}}}}}}}"#
        );
        svc_ir::SourceFile::new("d.json", text).parse().unwrap()
    }

    #[test]
    fn places_snippets_files_once_and_this_platforms_dependencies() {
        let placed = place(&doc("ok"), "go", &mut Fake).unwrap();
        assert_eq!(placed.snippets["a"], "// a for go");
        assert_eq!(placed.dependencies, ["dep>=1"]);
        let mut files = vec![File::text("go.mod", "")];
        placed.merge_into(&mut files).unwrap();
        assert_eq!(files.len(), 2);
    }

    #[test]
    fn different_files_at_one_path_conflict() {
        let err = place(&doc("clash"), "go", &mut Fake).unwrap_err();
        assert_eq!(err[0].code, "connector-file-conflict");
    }

    #[test]
    fn a_missing_template_and_config_pointers_are_placed_in_the_document() {
        let err = place(&doc("bad"), "go", &mut Fake).unwrap_err();
        assert_eq!(
            err[0].pointer.as_deref(),
            Some("/logical/nodes/2/config/url")
        );
        let err = place(&doc("ok"), "java-svc", &mut Fake).unwrap_err();
        assert_eq!(err.len(), 2);
        assert!(err[0].message.contains("codegen.templates[\"java-svc\"]"));
    }
}
