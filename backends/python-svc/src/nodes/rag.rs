//! A rag node: the best passages of its documents for a query, by keyword
//! or over an embeddings API; the documents ship with the package
//! (`<scope>/documents/<module>.json`).

use svc_backend_sdk::ir::{FieldType, RagDocuments, RagNode, Retriever};
use svc_backend_sdk::writer::CodeWriter;
use svc_backend_sdk::{Diagnostic, File};

use super::{graph_node, render, Site};
use crate::py::{module_file, quote, suite, top_level_gap, write_expr, Expr, LINE};

/// `<scope>/documents/<module>.json`, the documents the node searches.
pub(super) fn documents(site: &Site, r: &RagNode) -> Result<File, Diagnostic> {
    let RagDocuments::List(documents) = &r.documents else {
        // The host reads a folder into a list before any backend runs.
        return Err(Diagnostic::error(
            &svc_backend_sdk::ir::codes::INVALID_VALUE,
            format!(
                "rag node `{}`: the host did not read its documents folder",
                site.name
            ),
        )
        .at(site.at("/documents")));
    };
    let data = serde_json::to_string_pretty(documents).unwrap_or_default();
    Ok(File::text(
        format!("{}/documents/{}.json", site.scope.dir, site.module),
        data + "\n",
    ))
}

pub(super) fn module(site: &Site, r: &RagNode) -> String {
    let module_name = &site.module;
    let mut w = CodeWriter::python();
    let path = w.name("pathlib", "Path");
    let load = w.name("svc.rag", "load_documents");
    w.line(format!(
        "DOCUMENTS = {load}({path}(__file__).parent.parent / \"documents\" / {})",
        quote(&format!("{module_name}.json"))
    ));
    let mut args = vec![Expr::atom(quote(&site.name)), Expr::atom("DOCUMENTS")];
    if let Retriever::Embedding {
        model,
        base_url_env,
        api_key_env,
    } = &r.retriever
    {
        args.push(Expr::kw("kind", Expr::atom(quote("embedding"))));
        if let Some(m) = model {
            args.push(Expr::kw("model", Expr::atom(quote(m))));
        }
        if let Some(v) = base_url_env {
            args.push(Expr::kw("base_url_env", Expr::atom(quote(v))));
        }
        if let Some(v) = api_key_env {
            args.push(Expr::kw("api_key_env", Expr::atom(quote(v))));
        }
    }
    let retriever = Expr::call(w.name("svc.rag", "retriever"), args);
    write_expr(&mut w, 0, "RETRIEVER = ", &retriever, "");
    top_level_gap(&mut w);
    let query = render(&mut w, &r.query, LINE - 12);
    let decorator = graph_node(&mut w, &site.name);
    w.line(decorator);
    suite(&mut w, "def node(state: dict) -> dict:", |w| {
        write_expr(w, 1, "query = ", &query, "");
        w.line(format!("passages = RETRIEVER.search(query, {})", r.top_k));
        let as_text = site.doc.state_field(&r.output_key).map(|f| f.ty) == Some(FieldType::String);
        let value = if as_text {
            format!("{}(passages)", w.name("svc.rag", "passages_text"))
        } else {
            "passages".to_string()
        };
        w.line(format!("return {{{}: {value}}}", quote(&r.output_key)));
    });
    module_file(
        &format!(
            "The rag node `{}`: the {} best passages of its documents (app/documents/{module_name}.json).",
            site.name, r.top_k
        ),
        w,
    )
}
