//! Files a document names by path, read by the host before any backend runs
//! (backends are sandboxed and see no files): each `rag` node's `documents`
//! folder becomes the list of its `.md` and `.txt` files, and each
//! `subgraph` node's `graph` path becomes the child document, read, checked
//! and resolved in turn (relative to its own folder), so the backend gets
//! one self-contained document. A cycle of files is refused.

use std::path::{Path, PathBuf};

use svc_ir::{
    map_child_checks, subgraph_child_checks, Diagnostic, Document, MapNode, NodeKind, RagDocument,
    RagDocuments, SourceFile, SubgraphNode, SubgraphRef,
};

/// A folder larger than this is refused: the documents are copied into the
/// project and loaded into memory at start-up.
const MAX_BYTES: u64 = 64 * 1024 * 1024;
const MAX_FILES: usize = 10_000;
/// How deep subgraph files may nest (a cycle is caught before this).
const MAX_DEPTH: usize = 32;

/// Resolves every path in `doc` (read from `source`, whose folder paths are
/// relative to). Diagnostics are placed in the file they are about.
pub fn resolve(doc: &mut Document, source: &SourceFile) -> Result<(), Vec<Diagnostic>> {
    let path = source.path();
    let base = path.parent().map(Path::to_path_buf).unwrap_or_default();
    let mut stack = vec![std::fs::canonicalize(&path).unwrap_or(path)];
    let mut errors = Vec::new();
    resolve_in(doc, &base, "", source, &mut stack, &mut errors);
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors)
    }
}

/// Whether `doc` names a file by path (a `rag` folder, a `subgraph` file)
/// at any depth: its project then depends on more than its own text.
pub fn names_files(doc: &Document) -> bool {
    doc.logical.nodes.iter().any(|n| match &n.kind {
        NodeKind::Rag(rag) => matches!(rag.documents, RagDocuments::Path(_)),
        NodeKind::Subgraph(SubgraphNode { graph, .. }) | NodeKind::Map(MapNode { graph, .. }) => {
            match graph {
                SubgraphRef::Path(_) => true,
                SubgraphRef::Embedded(child) => names_files(child),
            }
        }
        _ => false,
    })
}

/// `doc` lies at `prefix` inside `source` (embedded children have one).
fn resolve_in(
    doc: &mut Document,
    base: &Path,
    prefix: &str,
    source: &SourceFile,
    stack: &mut Vec<PathBuf>,
    errors: &mut Vec<Diagnostic>,
) {
    for i in 0..doc.logical.nodes.len() {
        let pointer = format!("{prefix}/logical/nodes/{i}");
        let n = &mut doc.logical.nodes[i];
        let id = n.id.clone();
        let fail = |message: String, at: &str, hint: &str| {
            source.locate(
                Diagnostic::error(&svc_ir::codes::IO, message)
                    .at(format!("{pointer}/{at}"))
                    .node(&id)
                    .hint(hint),
            )
        };
        match &mut n.kind {
            NodeKind::Rag(rag) => {
                let RagDocuments::Path(rel) = &rag.documents else {
                    continue;
                };
                match read_folder(&base.join(rel.as_str()), rel) {
                    Ok(list) => rag.documents = RagDocuments::List(list),
                    Err(message) => errors.push(fail(
                        message,
                        "documents",
                        "`documents` is a folder of .md/.txt files, relative to the graph document",
                    )),
                }
            }
            NodeKind::Subgraph(SubgraphNode { graph, .. })
            | NodeKind::Map(MapNode { graph, .. }) => match graph {
                SubgraphRef::Embedded(child) => {
                    let inner = format!("{pointer}/graph");
                    resolve_in(child, base, &inner, source, stack, errors);
                }
                SubgraphRef::Path(rel) => {
                    let file = base.join(rel.as_str());
                    let child = match read_child(&file, rel, stack, errors) {
                        Ok(Some(child)) => child,
                        Ok(None) => continue,
                        Err(d) => {
                            errors.push(source.locate(
                                d.at(format!("{pointer}/graph"))
                                    .node(&id)
                                    .hint("`graph` is a path to an IR document, relative to this one; subgraph files must not include each other"),
                            ));
                            continue;
                        }
                    };
                    *graph = SubgraphRef::Embedded(Box::new(child));
                    let checks = if matches!(doc.logical.nodes[i].kind, NodeKind::Map(_)) {
                        map_child_checks(doc, i)
                    } else {
                        subgraph_child_checks(doc, i)
                    };
                    for d in checks {
                        let at = d.pointer.clone().unwrap_or_default();
                        errors.push(source.locate(d.at(format!("{prefix}{at}"))));
                    }
                }
            },
            _ => {}
        }
    }
}

/// Reads, checks and resolves the child document at `file`. `Ok(None)`:
/// it had errors, already in `errors` (placed in its own file); `Err`: it
/// cannot be read or closes a cycle (to be placed at the parent's node).
fn read_child(
    file: &Path,
    shown: &str,
    stack: &mut Vec<PathBuf>,
    errors: &mut Vec<Diagnostic>,
) -> Result<Option<Document>, Diagnostic> {
    let unreadable = |e: std::io::Error| {
        Diagnostic::error(
            &svc_ir::codes::IO,
            format!("cannot read subgraph `{shown}` ({}): {e}", file.display()),
        )
    };
    let canonical = std::fs::canonicalize(file).map_err(unreadable)?;
    if let Some(at) = stack.iter().position(|p| *p == canonical) {
        let chain: Vec<String> = stack[at..]
            .iter()
            .chain([&canonical])
            .map(|p| p.display().to_string())
            .collect();
        return Err(Diagnostic::error(
            &SUBGRAPH_CYCLE,
            format!("subgraph files form a cycle: {}", chain.join(" -> ")),
        ));
    }
    if stack.len() >= MAX_DEPTH {
        return Err(Diagnostic::error(
            &SUBGRAPH_CYCLE,
            format!("subgraph `{shown}` nests deeper than {MAX_DEPTH} files"),
        ));
    }
    let text = std::fs::read_to_string(&canonical).map_err(unreadable)?;
    let mut child_source = SourceFile::new(file.display().to_string(), text);
    let mut child = match child_source.parse() {
        Ok(doc) => doc,
        Err(diags) => {
            errors.extend(diags);
            return Ok(None);
        }
    };
    let base = file.parent().map(Path::to_path_buf).unwrap_or_default();
    stack.push(canonical);
    let before = errors.len();
    resolve_in(&mut child, &base, "", &child_source, stack, errors);
    stack.pop();
    Ok((errors.len() == before).then_some(child))
}

/// The `.md` and `.txt` files under `dir`, sorted by their path relative to
/// it (the document id, with `/` separators); hidden entries are skipped.
fn read_folder(dir: &Path, shown: &str) -> Result<Vec<RagDocument>, String> {
    if !dir.is_dir() {
        return Err(format!(
            "rag documents folder `{shown}` ({}) is not a folder",
            dir.display()
        ));
    }
    let mut paths: Vec<(String, PathBuf)> = Vec::new();
    let walk = walkdir::WalkDir::new(dir)
        .follow_links(false)
        .into_iter()
        .filter_entry(|e| e.depth() == 0 || !e.file_name().to_string_lossy().starts_with('.'));
    let mut total = 0u64;
    for entry in walk {
        let entry =
            entry.map_err(|e| format!("cannot read rag documents folder `{shown}`: {e}"))?;
        let path = entry.path();
        let wanted = entry.file_type().is_file()
            && matches!(
                path.extension().and_then(|e| e.to_str()),
                Some("md" | "txt")
            );
        if !wanted {
            continue;
        }
        total += entry.metadata().map(|m| m.len()).unwrap_or(0);
        if total > MAX_BYTES || paths.len() >= MAX_FILES {
            return Err(format!(
                "rag documents folder `{shown}` holds more than {MAX_FILES} files or {} MiB",
                MAX_BYTES / (1024 * 1024)
            ));
        }
        let id = path
            .strip_prefix(dir)
            .unwrap_or(path)
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect::<Vec<_>>()
            .join("/");
        paths.push((id, path.to_path_buf()));
    }
    paths.sort();
    paths
        .into_iter()
        .map(|(id, path)| match std::fs::read(&path) {
            Ok(bytes) => String::from_utf8(bytes)
                .map(|text| RagDocument {
                    id: id.clone(),
                    text,
                })
                .map_err(|_| format!("rag document `{shown}/{id}` is not UTF-8 text")),
            Err(e) => Err(format!("cannot read rag document `{shown}/{id}`: {e}")),
        })
        .collect()
}

svc_ir::diagnostic_codes! {
    /// Subgraph documents include each other in a cycle.
    ///
    /// A `subgraph` node's `graph` may be a path to another document, read by `svc compile` relative to the document naming it, and that document may have subgraphs of its own. A file that includes itself, directly or through others, could never be expanded, so it is refused; the message lists the files of the cycle.
    ///
    /// Break the cycle: one of the documents must not name the other.
    ///
    /// # Example
    ///
    /// ```json
    /// // a.graph.json
    /// { "id": "inner", "kind": "subgraph", "graph": "b.graph.json", "input": { "q": "q" } }
    /// // b.graph.json
    /// { "id": "inner", "kind": "subgraph", "graph": "a.graph.json", "input": { "q": "q" } }
    /// ```
    ///
    /// # Fix
    ///
    /// ```json
    /// // b.graph.json: a graph of its own nodes, no subgraph back to a.graph.json
    /// { "id": "say", "kind": "response_template", "template": "{{q}}", "outputKey": "a" }
    /// ```
    pub SUBGRAPH_CYCLE = "subgraph-cycle", group "nodes";
}

#[cfg(test)]
mod tests {
    #![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)] // test code

    use serde_json::json;

    use super::*;

    fn graph(id: &str, state: serde_json::Value, middle: serde_json::Value) -> String {
        json!({"irVersion": "2", "id": id, "logical": {
            "state": state,
            "nodes": [{"id": "start", "kind": "start"}, middle, {"id": "end", "kind": "end"}],
            "edges": [{"from": "start", "to": middle["id"]}, {"from": middle["id"], "to": "end"}]}})
        .to_string()
    }

    fn rag(documents: &str) -> String {
        graph(
            "d",
            json!([{"name": "q", "type": "string"}, {"name": "p", "type": "array"}]),
            json!({"id": "search", "kind": "rag", "query": "{{q}}", "documents": documents, "outputKey": "p"}),
        )
    }

    fn sub(id: &str, path: &str) -> String {
        graph(
            id,
            json!([{"name": "q", "type": "string", "required": true}, {"name": "a", "type": "string"}]),
            json!({"id": "inner", "kind": "subgraph", "graph": path, "input": {"q": "q"}, "output": {"a": "a"}}),
        )
    }

    /// Writes `text` as `name` in `dir`, then parses and resolves it.
    fn resolved(dir: &Path, name: &str, text: &str) -> Result<Document, Vec<Diagnostic>> {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        let mut source = SourceFile::new(path.display().to_string(), text);
        let mut doc = source.parse()?;
        resolve(&mut doc, &source)?;
        Ok(doc)
    }

    /// `svc compile` keeps a project for reuse only when its document names
    /// no file: a rag folder or subgraph file, at any depth, is noticed.
    #[test]
    fn names_files_sees_folders_and_subgraph_files_at_any_depth() {
        let parsed = |text: &str| SourceFile::new("d.graph.json", text).parse().unwrap();
        assert!(names_files(&parsed(&rag("docs"))));
        assert!(names_files(&parsed(&sub("p", "child.graph.json"))));
        let inline = |documents: serde_json::Value| {
            graph(
                "d",
                json!([{"name": "q", "type": "string"}, {"name": "p", "type": "array"}]),
                json!({"id": "search", "kind": "rag", "query": "{{q}}", "documents": documents, "outputKey": "p"}),
            )
        };
        let listed_inline = inline(json!([{"id": "a", "text": "alpha"}]));
        assert!(!names_files(&parsed(&listed_inline)));
        let embed = |child: &str| {
            let child: serde_json::Value = serde_json::from_str(child).unwrap();
            graph(
                "p",
                json!([{"name": "q", "type": "string", "required": true}, {"name": "a", "type": "string"}]),
                json!({"id": "inner", "kind": "subgraph", "graph": child, "input": {"q": "q"}, "output": {"a": "a"}}),
            )
        };
        assert!(names_files(&parsed(&embed(&sub("c", "leaf.graph.json")))));
        let leaf = graph(
            "leaf",
            json!([{"name": "q", "type": "string", "required": true}, {"name": "a", "type": "string"}]),
            json!({"id": "say", "kind": "response_template", "template": "{{q}}", "outputKey": "a"}),
        );
        assert!(!names_files(&parsed(&embed(&leaf))));
    }

    fn listed(doc: &Document) -> Vec<(String, String)> {
        match &doc.logical.nodes[1].kind {
            NodeKind::Rag(r) => match &r.documents {
                RagDocuments::List(l) => l.iter().map(|d| (d.id.clone(), d.text.clone())).collect(),
                RagDocuments::Path(p) => panic!("still a path: {p}"),
            },
            _ => panic!("not a rag node"),
        }
    }

    #[test]
    fn reads_md_and_txt_files_sorted_skipping_hidden_and_others() {
        let dir = tempfile::tempdir().unwrap();
        let docs = dir.path().join("docs");
        std::fs::create_dir_all(docs.join("b")).unwrap();
        std::fs::create_dir_all(docs.join(".git")).unwrap();
        std::fs::write(docs.join("z.md"), "zed").unwrap();
        std::fs::write(docs.join("b/a.txt"), "ay").unwrap();
        std::fs::write(docs.join(".hidden.md"), "no").unwrap();
        std::fs::write(docs.join(".git/x.md"), "no").unwrap();
        std::fs::write(docs.join("data.json"), "{}").unwrap();
        let doc = resolved(dir.path(), "d.graph.json", &rag("docs")).unwrap();
        assert_eq!(
            listed(&doc),
            [
                ("b/a.txt".into(), "ay".into()),
                ("z.md".into(), "zed".into())
            ]
        );
    }

    #[test]
    fn a_missing_folder_or_binary_file_names_the_node_and_path() {
        let dir = tempfile::tempdir().unwrap();
        let e = resolved(dir.path(), "d.graph.json", &rag("nowhere")).unwrap_err();
        assert_eq!(e[0].code, "io");
        assert_eq!(e[0].pointer.as_deref(), Some("/logical/nodes/1/documents"));
        assert_eq!(e[0].node.as_deref(), Some("search"));
        assert!(e[0].position.is_some());
        assert!(e[0].message.contains("`nowhere`"), "{}", e[0].message);

        std::fs::create_dir_all(dir.path().join("bin")).unwrap();
        std::fs::write(dir.path().join("bin/x.md"), [0xff, 0xfe, 0x00]).unwrap();
        let e = resolved(dir.path(), "d.graph.json", &rag("bin")).unwrap_err();
        assert!(
            e[0].message.contains("bin/x.md") && e[0].message.contains("UTF-8"),
            "{}",
            e[0].message
        );
    }

    #[test]
    fn subgraph_files_are_embedded_nested_and_checked() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("parts/docs")).unwrap();
        std::fs::write(dir.path().join("parts/docs/a.md"), "alpha").unwrap();
        // leaf: a rag node whose folder is relative to the leaf's own file.
        let leaf = graph(
            "leaf",
            json!([{"name": "q", "type": "string", "required": true}, {"name": "a", "type": "string"}]),
            json!({"id": "search", "kind": "rag", "query": "{{q}}", "documents": "docs", "outputKey": "a"}),
        );
        std::fs::write(dir.path().join("parts/leaf.graph.json"), leaf).unwrap();
        std::fs::write(
            dir.path().join("parts/middle.graph.json"),
            sub("middle", "leaf.graph.json"),
        )
        .unwrap();
        let doc = resolved(
            dir.path(),
            "top.graph.json",
            &sub("top", "parts/middle.graph.json"),
        )
        .unwrap();
        let NodeKind::Subgraph(s) = &doc.logical.nodes[1].kind else {
            panic!()
        };
        let SubgraphRef::Embedded(middle) = &s.graph else {
            panic!("middle not embedded")
        };
        let NodeKind::Subgraph(s) = &middle.logical.nodes[1].kind else {
            panic!()
        };
        let SubgraphRef::Embedded(leaf) = &s.graph else {
            panic!("leaf not embedded")
        };
        assert_eq!(listed(leaf), [("a.md".into(), "alpha".into())]);
    }

    #[test]
    fn a_cycle_of_files_a_bad_child_and_a_type_mismatch_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("b.graph.json"), sub("b", "a.graph.json")).unwrap();
        let e = resolved(dir.path(), "a.graph.json", &sub("a", "b.graph.json")).unwrap_err();
        assert_eq!(e[0].code, "subgraph-cycle", "{e:?}");
        assert!(
            e[0].message.contains("a.graph.json -> "),
            "{}",
            e[0].message
        );

        // The child's own errors are placed in the child's file.
        std::fs::write(dir.path().join("bad.graph.json"), "{\"irVersion\": \"2\"}").unwrap();
        let e = resolved(dir.path(), "c.graph.json", &sub("c", "bad.graph.json")).unwrap_err();
        assert!(
            e[0].file.as_deref().unwrap().ends_with("bad.graph.json"),
            "{e:?}"
        );

        // A child whose `q` is an integer cannot take the parent's string.
        let child = graph(
            "child",
            json!([{"name": "q", "type": "integer", "required": true}, {"name": "a", "type": "string"}]),
            json!({"id": "t", "kind": "response_template", "template": "x", "outputKey": "a"}),
        );
        std::fs::write(dir.path().join("child.graph.json"), child).unwrap();
        let e = resolved(dir.path(), "d.graph.json", &sub("d", "child.graph.json")).unwrap_err();
        assert_eq!(e[0].code, "subgraph-type", "{e:?}");
        assert_eq!(e[0].pointer.as_deref(), Some("/logical/nodes/1/input/q"));
        assert!(e[0].position.is_some());
    }
}
