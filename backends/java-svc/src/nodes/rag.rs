//! A rag node: the best passages of its documents for its query, by BM25
//! in process or over an embeddings API (runtime/Retrieval.java). The
//! documents ship with the service (`src/main/resources/documents/<name>.json`,
//! by the node's registered name);
//! an embedding index is built when the node is made, at start-up, and a
//! failure stops the service.

use svc_backend_sdk::ir::{Document, FieldType, RagDocuments, RagNode, Retriever};
use svc_backend_sdk::writer::CodeWriter;
use svc_backend_sdk::{Diagnostic, File};

use super::{node_class, render, run_method};
use crate::java::{quote, runtime};
use crate::scope::Scope;

/// `src/main/resources/documents/<name>.json`, the documents the node
/// registered as `name` searches.
pub fn documents(name: &str, at: &str, r: &RagNode) -> Result<File, Diagnostic> {
    let RagDocuments::List(documents) = &r.documents else {
        // The host reads a folder into a list before any backend runs.
        return Err(Diagnostic::error(
            &svc_backend_sdk::ir::codes::INVALID_VALUE,
            format!("rag node `{name}`: the host did not read its documents folder"),
        )
        .at(format!("{at}/documents")));
    };
    let data = serde_json::to_string_pretty(documents).unwrap_or_default();
    Ok(File::text(
        format!("src/main/resources/documents/{name}.json"),
        data + "\n",
    ))
}

pub fn class(doc: &Document, scope: &Scope, class: &str, id: &str, r: &RagNode) -> String {
    let name = scope.name(id);
    let mut w = CodeWriter::java();
    let retrieval = runtime(&mut w, "Retrieval");
    let query = render(&mut w, &r.query);
    let resource = quote(&format!("/documents/{name}.json"));
    let as_text = doc.state_field(&r.output_key).map(|f| f.ty) == Some(FieldType::String);
    let value = if as_text {
        format!("{retrieval}.text(passages)")
    } else {
        format!("{retrieval}.value(passages)")
    };
    let list = w.name("java.util", "List");
    let fields = vec![format!("private final {retrieval}.Retriever retriever;")];
    node_class(
        w,
        scope,
        class,
        &format!(
            "The rag node {}: the {} best passages of its documents ({resource} on the classpath).",
            quote(&name),
            r.top_k
        ),
        &fields,
        |w| {
            match &r.retriever {
                Retriever::Bm25 => {
                    w.block(format!("public {class}() {{"), "}", |w| {
                        w.line(format!(
                            "this.retriever = {retrieval}.bm25({retrieval}.load({resource}));"
                        ));
                    });
                }
                Retriever::Embedding {
                    model,
                    base_url_env,
                    api_key_env,
                } => {
                    let or_null = |v: &Option<String>| {
                        v.as_deref().map(quote).unwrap_or_else(|| "null".into())
                    };
                    w.line("/** Builds the embedding index: a failure stops the service, naming the node. */");
                    w.block(
                        format!("public {class}() {{"),
                        "}",
                        |w| {
                            w.line(format!(
                                "{retrieval}.Embedding index = {retrieval}.embedding({}, {retrieval}.load({resource}), {}, {}, {});",
                                quote(&name),
                                or_null(model),
                                or_null(base_url_env),
                                or_null(api_key_env)
                            ));
                            w.line("try {");
                            w.indent().line("index.buildAtStartup();").dedent();
                            w.block("} catch (InterruptedException e) {", "}", |w| {
                                w.line("Thread.currentThread().interrupt();");
                                w.line(format!(
                                    "throw new IllegalStateException({}, e);",
                                    quote(&format!("start-up was interrupted while the embedding index of rag node \"{name}\" was built"))
                                ));
                            });
                            w.line("this.retriever = index;");
                        },
                    );
                }
            }
            w.blank();
            run_method(w, true, |w| {
                w.line(format!(
                    "{list}<{retrieval}.Passage> passages = retriever.search({}, {query}, {});",
                    quote(&name),
                    r.top_k
                ));
                w.line(format!("return {value};"));
            });
        },
    )
}
