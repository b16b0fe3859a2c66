//! `rag` nodes: the best passages of the node's documents for its query,
//! by BM25 in process or over an embeddings API (rag.go). The documents
//! ship with the service (`internal/graph/documents/<node>.json`, embedded);
//! `internal/graph/retrievers.go` loads them and builds the embedding
//! indexes at start-up.

use svc_backend_sdk::ir::{Document, FieldType, Node, NodeKind, RagDocuments, RagNode, Retriever};
use svc_backend_sdk::subgraphs::{all_graphs, GraphScope};
use svc_backend_sdk::writer::CodeWriter;
use svc_backend_sdk::{Diagnostic, File};

use super::{func_name, render, signature};
use crate::golang::quote;

fn retriever_var(id: &str) -> String {
    format!("retriever_{id}")
}

pub fn write(doc: &Document, scope: &GraphScope, n: &Node, r: &RagNode, body: &mut CodeWriter) {
    let name = scope.name(&n.id);
    let as_text = doc.state_field(&r.output_key).map(|f| f.ty) == Some(FieldType::String);
    let value = if as_text {
        "PassagesText(passages)"
    } else {
        "PassagesValue(passages)"
    };
    body.line(format!(
        "// {} finds the {} best passages of its documents for its query.",
        func_name(&name),
        r.top_k
    ));
    let open = signature(body, &func_name(&name));
    body.block(open, "}", |w| {
        w.line(format!(
            "passages, err := {}.Search(ctx, {}, {}, {})",
            retriever_var(&name),
            quote(&name),
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

/// A rag node of any graph of the document.
struct Rag<'a> {
    /// Its registered name (retriever_<name>, documents/<name>.json).
    name: String,
    /// Its pointer in the document.
    at: String,
    node: &'a RagNode,
}

fn rag_nodes(doc: &Document) -> Vec<Rag<'_>> {
    let mut out = Vec::new();
    for (d, scope) in all_graphs(doc) {
        for (i, n) in d.logical.nodes.iter().enumerate() {
            if let NodeKind::Rag(r) = &n.kind {
                out.push(Rag {
                    name: scope.name(&n.id),
                    at: scope.at(&format!("/logical/nodes/{i}")),
                    node: r,
                });
            }
        }
    }
    out
}

/// Each rag node's documents, and one `retrievers.go` for the rag nodes of
/// every graph; nothing when the document has none.
pub fn files(doc: &Document) -> Result<Vec<File>, Vec<Diagnostic>> {
    let mut out = Vec::new();
    let mut errors = Vec::new();
    for Rag { name, at, node: r } in rag_nodes(doc) {
        let RagDocuments::List(documents) = &r.documents else {
            // The host reads a folder into a list before any backend runs.
            errors.push(
                Diagnostic::error(
                    &svc_backend_sdk::ir::codes::INVALID_VALUE,
                    format!("rag node `{name}`: the host did not read its documents folder"),
                )
                .at(format!("{at}/documents")),
            );
            continue;
        };
        let data = serde_json::to_string_pretty(documents).unwrap_or_default();
        out.push(File::text(
            format!("internal/graph/documents/{name}.json"),
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
    for Rag { name, .. } in rag_nodes(doc) {
        w.line(format!(
            "// {} searches the documents of {} (set at start-up).",
            retriever_var(&name),
            quote(&name)
        ));
        w.line(format!("var {} Retriever", retriever_var(&name)));
        w.blank();
    }
    w.block("func init() {", "}", |w| {
        w.line("RegisterPrepare(prepareRetrievers)");
    });
    w.blank();
    w.line("// prepareRetrievers loads each rag node's documents and builds the embedding");
    w.line("// indexes, as python-svc does at start-up: without them the service does not start.");
    w.block(
        format!("func prepareRetrievers(ctx {context}) error {{"),
        "}",
        |w| {
            w.line("var indexes []*Embedding");
            for Rag { name, node: r, .. } in rag_nodes(doc) {
                let docs = format!("docs_{name}");
                w.line(format!("{docs}, err := readDocuments({})", quote(&name)));
                w.block("if err != nil {", "}", |w| {
                    w.line("return err");
                });
                match &r.retriever {
                    Retriever::Bm25 => {
                        w.line(format!("{} = NewBM25({docs})", retriever_var(&name)));
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
                        let index = format!("index_{name}");
                        w.line(format!(
                            "{index} := NewEmbeddingRetriever({}, {docs}, {model})",
                            quote(&name)
                        ));
                        w.line(format!("{} = {index}", retriever_var(&name)));
                        w.line(format!("indexes = append(indexes, {index})"));
                    }
                }
            }
            w.line("return BuildIndexes(ctx, indexes)");
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
                w.line("if docs, err = LoadDocuments(data); err == nil {");
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
