//! `rag` nodes: the best passages of the node's documents for its query,
//! by BM25 in process or over an embeddings API (rag.go). The documents
//! ship with the service (`internal/graph/documents/<node>.json`, embedded);
//! `internal/graph/retrievers.go` loads them and builds the embedding
//! indexes at start-up.

use svc_backend_sdk::ir::{Document, FieldType, Node, NodeKind, RagDocuments, RagNode, Retriever};
use svc_backend_sdk::writer::CodeWriter;
use svc_backend_sdk::{Diagnostic, File};

use super::{func_name, render, signature};
use crate::golang::quote;

fn retriever_var(id: &str) -> String {
    format!("retriever_{id}")
}

pub fn write(doc: &Document, n: &Node, r: &RagNode, body: &mut CodeWriter) {
    let as_text = doc.state_field(&r.output_key).map(|f| f.ty) == Some(FieldType::String);
    let value = if as_text {
        "passagesText(passages)"
    } else {
        "passagesValue(passages)"
    };
    body.line(format!(
        "// {} finds the {} best passages of its documents for its query.",
        func_name(&n.id),
        r.top_k
    ));
    let open = signature(body, &func_name(&n.id));
    body.block(open, "}", |w| {
        w.line(format!(
            "passages, err := {}.Search(ctx, {}, {}, {})",
            retriever_var(&n.id),
            quote(&n.id),
            render(&r.query),
            r.top_k
        ));
        w.block("if err != nil {", "}", |w| {
            w.line("return nil, err");
        });
        w.line(format!(
            "return State{{{}: {value}}}, nil",
            quote(&r.output_key)
        ));
    });
}

fn rag_nodes(doc: &Document) -> impl Iterator<Item = (usize, &Node, &RagNode)> {
    doc.logical
        .nodes
        .iter()
        .enumerate()
        .filter_map(|(i, n)| match &n.kind {
            NodeKind::Rag(r) => Some((i, n, r)),
            _ => None,
        })
}

/// Each rag node's documents, and `retrievers.go`; nothing when the graph
/// has no rag node.
pub fn files(doc: &Document) -> Result<Vec<File>, Vec<Diagnostic>> {
    let mut out = Vec::new();
    let mut errors = Vec::new();
    for (i, n, r) in rag_nodes(doc) {
        let RagDocuments::List(documents) = &r.documents else {
            // The host reads a folder into a list before any backend runs.
            errors.push(
                Diagnostic::error(
                    &svc_backend_sdk::ir::codes::INVALID_VALUE,
                    format!(
                        "rag node `{}`: the host did not read its documents folder",
                        n.id
                    ),
                )
                .at(format!("/logical/nodes/{i}/documents")),
            );
            continue;
        };
        let data = serde_json::to_string_pretty(documents).unwrap_or_default();
        out.push(File::text(
            format!("internal/graph/documents/{}.json", n.id),
            data + "\n",
        ));
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    if out.is_empty() {
        return Ok(out);
    }
    out.push(File::text("internal/graph/retrievers.go", retrievers(doc)));
    Ok(out)
}

fn retrievers(doc: &Document) -> String {
    let mut w = CodeWriter::go();
    let context = w.name("context", "Context");
    let fs = w.name("embed", "FS");
    w.line("// documents holds each rag node's documents, read at compile time.");
    w.line("//");
    w.line("//go:embed documents");
    w.line(format!("var documents {fs}"));
    w.blank();
    for (_, n, _) in rag_nodes(doc) {
        w.line(format!(
            "// {} searches the documents of {} (set at start-up).",
            retriever_var(&n.id),
            quote(&n.id)
        ));
        w.line(format!("var {} Retriever", retriever_var(&n.id)));
        w.blank();
    }
    w.block("func init() {", "}", |w| {
        w.line("prepare = prepareRetrievers");
    });
    w.blank();
    w.line("// prepareRetrievers loads each rag node's documents and builds the embedding");
    w.line("// indexes, as python-svc does at start-up: without them the service does not start.");
    w.block(
        format!("func prepareRetrievers(ctx {context}) error {{"),
        "}",
        |w| {
            w.line("var indexes []*Embedding");
            for (_, n, r) in rag_nodes(doc) {
                let docs = format!("docs_{}", n.id);
                w.line(format!("{docs}, err := readDocuments({})", quote(&n.id)));
                w.block("if err != nil {", "}", |w| {
                    w.line("return err");
                });
                match &r.retriever {
                    Retriever::Bm25 => {
                        w.line(format!("{} = newBM25({docs})", retriever_var(&n.id)));
                    }
                    Retriever::Embedding {
                        model,
                        base_url_env,
                        api_key_env,
                    } => {
                        // The SDK's defaults, not settings.model's variables.
                        let model = format!(
                            "EmbeddingModel{{Name: {}, BaseURLEnv: {}, APIKeyEnv: {}}}",
                            quote(model.as_deref().unwrap_or("text-embedding-3-small")),
                            quote(base_url_env.as_deref().unwrap_or("OPENAI_BASE_URL")),
                            quote(api_key_env.as_deref().unwrap_or("OPENAI_API_KEY"))
                        );
                        let index = format!("index_{}", n.id);
                        w.line(format!(
                            "{index} := newEmbeddingRetriever({}, {docs}, {model})",
                            quote(&n.id)
                        ));
                        w.line(format!("{} = {index}", retriever_var(&n.id)));
                        w.line(format!("indexes = append(indexes, {index})"));
                    }
                }
            }
            w.line("return buildIndexes(ctx, indexes)");
        },
    );
    w.blank();
    let errorf = w.name("fmt", "Errorf");
    w.line("// readDocuments is the list the compiler copied for the rag node `node`.");
    w.block(
        "func readDocuments(node string) ([]Document, error) {",
        "}",
        |w| {
            w.line("data, err := documents.ReadFile(\"documents/\" + node + \".json\")");
            w.block("if err == nil {", "}", |w| {
                w.line("var docs []Document");
                w.line("if docs, err = loadDocuments(data); err == nil {");
                w.indent().line("return docs, nil").dedent();
                w.line("}");
            });
            w.line(format!(
                "return nil, {errorf}(\"the documents of rag node %q: %w\", node, err)"
            ));
        },
    );
    w.finish_file("package graph\n\n")
}
