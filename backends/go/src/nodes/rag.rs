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
use crate::golang::{quote, rt};

fn retriever_var(id: &str) -> String {
    format!("retriever_{id}")
}

pub fn write(doc: &Document, scope: &GraphScope, n: &Node, r: &RagNode, body: &mut CodeWriter) {
    let name = scope.name(&n.id);
    let as_text = doc.state_field(&r.output_key).map(|f| f.ty) == Some(FieldType::String);
    let value = if as_text {
        format!("{}(passages)", rt(body, "PassagesText"))
    } else {
        format!("{}(passages)", rt(body, "PassagesValue"))
    };
    body.line(format!(
        "// {} finds the {} best passages of its documents for its query.",
        func_name(&name),
        r.top_k
    ));
    let open = signature(body, &func_name(&name));
    body.block(open, "}", |w| {
        let query = render(w, &r.query);
        w.line(format!(
            "passages, err := {}.Search(ctx, {}, {query}, {})",
            retriever_var(&name),
            quote(&name),
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
        let retriever = rt(&mut w, "Retriever");
        w.line(format!("var {} {retriever}", retriever_var(&name)));
        w.blank();
    }
    w.block("func init() {", "}", |w| {
        let register = rt(w, "RegisterPrepare");
        w.line(format!("{register}(prepareRetrievers)"));
    });
    w.blank();
    w.line("// prepareRetrievers loads each rag node's documents and builds the embedding");
    w.line("// indexes, as python-svc does at start-up: without them the service does not start.");
    w.block(
        format!("func prepareRetrievers(ctx {context}) error {{"),
        "}",
        |w| {
            let embedding = rt(w, "Embedding");
            w.line(format!("var indexes []*{embedding}"));
            for Rag { name, node: r, .. } in rag_nodes(doc) {
                let docs = format!("docs_{name}");
                w.line(format!("{docs}, err := readDocuments({})", quote(&name)));
                w.block("if err != nil {", "}", |w| {
                    w.line("return err");
                });
                match &r.retriever {
                    Retriever::Bm25 => {
                        let bm25 = rt(w, "NewBM25");
                        w.line(format!("{} = {bm25}({docs})", retriever_var(&name)));
                    }
                    Retriever::Embedding {
                        model,
                        base_url_env,
                        api_key_env,
                    } => {
                        // The SDK's defaults, not settings.model's variables.
                        let model = format!(
                            "{}{{Name: {}, BaseURLEnv: {}, APIKeyEnv: {}}}",
                            rt(w, "EmbeddingModel"),
                            quote(model.as_deref().unwrap_or("text-embedding-3-small")),
                            quote(base_url_env.as_deref().unwrap_or("OPENAI_BASE_URL")),
                            quote(api_key_env.as_deref().unwrap_or("OPENAI_API_KEY"))
                        );
                        let index = format!("index_{name}");
                        let retriever = rt(w, "NewEmbeddingRetriever");
                        w.line(format!(
                            "{index} := {retriever}({}, {docs}, {model})",
                            quote(&name)
                        ));
                        w.line(format!("{} = {index}", retriever_var(&name)));
                        w.line(format!("indexes = append(indexes, {index})"));
                    }
                }
            }
            let build = rt(w, "BuildIndexes");
            w.line(format!("return {build}(ctx, indexes)"));
        },
    );
    w.blank();
    let errorf = w.name("fmt", "Errorf");
    let document = rt(&mut w, "Document");
    w.line("// readDocuments is the list the compiler copied for the rag node `node`.");
    w.block(
        format!("func readDocuments(node string) ([]{document}, error) {{"),
        "}",
        |w| {
            w.line("data, err := documents.ReadFile(\"documents/\" + node + \".json\")");
            w.block("if err == nil {", "}", |w| {
                let load = rt(w, "LoadDocuments");
                w.line(format!("var docs []{document}"));
                w.line(format!("if docs, err = {load}(data); err == nil {{"));
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
