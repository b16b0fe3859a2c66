//! Files a document names by path, read by the host before any backend runs
//! (backends are sandboxed and see no files): each `rag` node's `documents`
//! folder becomes the list of its `.md` and `.txt` files, so the backend
//! copies them into the project.

use std::path::{Path, PathBuf};

use svc_ir::{Diagnostic, Document, NodeKind, RagDocument, RagDocuments};

/// A folder larger than this is refused: the documents are copied into the
/// project and loaded into memory at start-up.
const MAX_BYTES: u64 = 64 * 1024 * 1024;
const MAX_FILES: usize = 10_000;

/// Replaces every `documents` path with the files it names, relative to
/// `base` (the document's folder).
pub fn documents(doc: &mut Document, base: &Path) -> Result<(), Vec<Diagnostic>> {
    let mut errors = Vec::new();
    for (i, n) in doc.logical.nodes.iter_mut().enumerate() {
        let NodeKind::Rag(rag) = &mut n.kind else {
            continue;
        };
        let RagDocuments::Path(rel) = &rag.documents else {
            continue;
        };
        let pointer = format!("/logical/nodes/{i}/documents");
        match read_folder(&base.join(rel), rel) {
            Ok(list) => rag.documents = RagDocuments::List(list),
            Err(message) => errors.push(
                Diagnostic::error("io", message)
                    .at(pointer)
                    .node(&n.id)
                    .hint(
                        "`documents` is a folder of .md/.txt files, relative to the graph document",
                    ),
            ),
        }
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors)
    }
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

#[cfg(test)]
mod tests {
    #![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)] // test code

    use super::*;

    fn doc_with(documents: &str) -> Document {
        let text = format!(
            r#"{{"irVersion": "2", "id": "d", "logical": {{
                "state": [{{"name": "q", "type": "string"}}, {{"name": "p", "type": "array"}}],
                "nodes": [{{"id": "start", "kind": "start"}},
                          {{"id": "search", "kind": "rag", "query": "{{{{q}}}}", "documents": "{documents}", "outputKey": "p"}},
                          {{"id": "end", "kind": "end"}}],
                "edges": [{{"from": "start", "to": "search"}}, {{"from": "search", "to": "end"}}]}}}}"#
        );
        svc_ir::SourceFile::new("d.graph.json", text)
            .parse()
            .expect("valid")
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
        let mut doc = doc_with("docs");
        documents(&mut doc, dir.path()).unwrap();
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
        let mut doc = doc_with("nowhere");
        let e = documents(&mut doc, dir.path()).unwrap_err();
        assert_eq!(e[0].code, "io");
        assert_eq!(e[0].pointer.as_deref(), Some("/logical/nodes/1/documents"));
        assert_eq!(e[0].node.as_deref(), Some("search"));
        assert!(e[0].message.contains("`nowhere`"), "{}", e[0].message);

        std::fs::create_dir_all(dir.path().join("bin")).unwrap();
        std::fs::write(dir.path().join("bin/x.md"), [0xff, 0xfe, 0x00]).unwrap();
        let mut doc = doc_with("bin");
        let e = documents(&mut doc, dir.path()).unwrap_err();
        assert!(
            e[0].message.contains("bin/x.md") && e[0].message.contains("UTF-8"),
            "{}",
            e[0].message
        );
    }
}
