//! `POST /api/export` writes only below the opened document's folder: a
//! `dir` with `..`, an absolute path elsewhere, or a path through a symlink
//! that leads out (to a folder that exists, or to one the export would
//! create) is `400` with the error envelope, and nothing is written
//! anywhere.

use std::collections::BTreeSet;
use std::path::Path;

use serde_json::json;

use super::{fixture, Designer};

/// Every path under `root`, symlinks listed and not followed.
fn listing(root: &Path) -> BTreeSet<String> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeSet<String>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let rel = path.strip_prefix(root).unwrap().display().to_string();
            let meta = std::fs::symlink_metadata(&path).unwrap();
            out.insert(format!("{rel} {:?}", meta.file_type()));
            if meta.is_dir() {
                walk(root, &path, out);
            }
        }
    }
    let mut out = BTreeSet::new();
    walk(root, root, &mut out);
    out
}

#[test]
fn an_export_writes_only_inside_the_documents_folder() {
    let tmp = tempfile::tempdir().unwrap();
    let top = std::fs::canonicalize(tmp.path()).unwrap();
    let docs = top.join("docs");
    let elsewhere = top.join("elsewhere");
    std::fs::create_dir_all(&docs).unwrap();
    std::fs::create_dir_all(&elsewhere).unwrap();
    let doc = docs.join("triage.graph.json");
    std::fs::copy(fixture("support_triage.graph.json"), &doc).unwrap();
    // A link to an empty folder elsewhere (an export would fill it), and one
    // to a folder elsewhere that does not exist yet.
    std::os::unix::fs::symlink(&elsewhere, docs.join("out-link")).unwrap();
    std::os::unix::fs::symlink(elsewhere.join("later"), docs.join("dangling")).unwrap();
    let d = Designer::start(&doc);
    let model = d.get("/api/document").json()["model"].clone();
    let before = listing(&top);

    let absolute = elsewhere.join("abs").display().to_string();
    let outside = top.join("beside").display().to_string();
    for dir in [
        "../elsewhere/out",
        "sub/../../elsewhere",
        absolute.as_str(),
        outside.as_str(),
        "/tmp/svc-export-test",
        "out-link",
        "out-link/new/deeper",
        "dangling",
        "dangling/x",
        ".",
    ] {
        let r = d.call(
            "POST",
            "/api/export",
            &[],
            &json!({"model": model, "platform": "go", "dir": dir}),
        );
        assert_eq!(r.status, 400, "{dir}: {}", r.text());
        let error = &r.json()["error"];
        assert_eq!(error["code"], "dir_outside_document", "{dir}: {error}");
        assert!(
            error["message"]
                .as_str()
                .unwrap()
                .contains("not inside the document's folder"),
            "{dir}: {error}"
        );
        assert_eq!(listing(&top), before, "{dir}: something was written");
    }
    assert!(!Path::new("/tmp/svc-export-test").exists());

    // Below the document's folder, by a relative or an absolute path, it
    // writes.
    for (dir, out) in [
        ("exports/go".to_string(), docs.join("exports/go")),
        (
            docs.join("abs-go").display().to_string(),
            docs.join("abs-go"),
        ),
    ] {
        let r = d.call(
            "POST",
            "/api/export",
            &[],
            &json!({"model": model, "platform": "go", "dir": dir}),
        );
        assert_eq!(r.status, 200, "{dir}: {}", r.text());
        assert_eq!(r.json()["dir"], out.display().to_string());
        assert!(out.join("go.mod").is_file(), "{dir}");
    }
    assert_eq!(std::fs::read_dir(&elsewhere).unwrap().count(), 0);
}
