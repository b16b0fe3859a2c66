//! `GraphState.java`: the state schema as Java constants.

use svc_backend_sdk::ir::Document;
use svc_backend_sdk::writer::CodeWriter;

use crate::java::{literal, quote, runtime, RUNTIME_PACKAGE};

/// A nested class of the runtime's `StateSchema` (`Field`, `Item`, `Type`),
/// imported.
fn schema_class(w: &mut CodeWriter, class: &str) -> String {
    w.name(&format!("{RUNTIME_PACKAGE}.StateSchema"), class)
}

fn type_const(w: &mut CodeWriter, t: svc_backend_sdk::ir::FieldType) -> String {
    use svc_backend_sdk::ir::FieldType::*;
    let constant = match t {
        String => "STRING",
        Integer => "INTEGER",
        Number => "NUMBER",
        Boolean => "BOOLEAN",
        Object => "OBJECT",
        Array => "ARRAY",
        Messages => "MESSAGES",
    };
    format!("{}.{constant}", schema_class(w, "Type"))
}

fn item(w: &mut CodeWriter, it: &svc_backend_sdk::ir::ItemType) -> String {
    let class = schema_class(w, "Item");
    let ty = type_const(w, it.ty);
    let inner = match &it.items {
        Some(inner) => item(w, inner),
        None => "null".to_string(),
    };
    format!("new {class}({ty}, {inner})")
}

/// The field legacy `{"input": ...}` requests fill: the first required string field.
pub fn legacy_field(doc: &Document) -> Option<&str> {
    doc.logical
        .state
        .iter()
        .find(|f| f.required && f.ty == svc_backend_sdk::ir::FieldType::String)
        .map(|f| f.name.as_str())
}

/// `public static final StateSchema SCHEMA = ...`: the graph's state fields
/// (GraphState's, and each child graph's in its ChildGraph).
pub fn schema_constant(w: &mut CodeWriter, doc: &Document) {
    let schema = runtime(w, "StateSchema");
    let list = w.name("java.util", "List");
    w.line(format!(
        "public static final {schema} SCHEMA = new {schema}({list}.of("
    ));
    w.indent().indent();
    let n = doc.logical.state.len();
    for (i, f) in doc.logical.state.iter().enumerate() {
        let field = schema_class(w, "Field");
        let ty = type_const(w, f.ty);
        let items = match &f.items {
            Some(it) => item(w, it),
            None => "null".into(),
        };
        let default = match f.default.as_ref().filter(|d| !d.is_null()) {
            Some(d) => format!("() -> {}", literal(w, d)),
            None => "null".into(),
        };
        // The shape of `properties`, checked after the type.
        let schema = match f.value_schema() {
            Some(schema) => format!(", {}", literal(w, &schema)),
            None => String::new(),
        };
        w.line(format!(
            "new {field}({}, {ty}, {items}, {}, {}, {default}{schema}){}",
            quote(&f.name),
            f.reducer == svc_backend_sdk::ir::Reducer::Append,
            f.required,
            if i + 1 < n { "," } else { "" }
        ));
    }
    w.dedent().dedent();
    w.line("));");
}

pub(super) fn graph_state(doc: &Document, pkg: &str) -> String {
    let mut w = CodeWriter::java();
    w.line("/** The state of the graph and the settings compiled from its document. */");
    w.block("public final class GraphState {", "}", |w| {
        w.line("/** `none`, `api_key` or `bearer` (security.auth). */");
        w.line(format!(
            "public static final String AUTH = {};",
            quote(doc.security.auth.as_str())
        ));
        w.line("/** The environment variable holding the key or token (security.keyEnv). */");
        w.line(format!(
            "public static final String KEY_ENV = {};",
            quote(&doc.security.key_env)
        ));
        let mcp = &doc.logical.settings.mcp;
        if mcp.expose {
            w.line("/** The graph's id and version: the MCP server's name and version at /mcp. */");
            w.line(format!(
                "public static final String NAME = {};",
                quote(&doc.id)
            ));
            w.line(format!(
                "public static final String VERSION = {};",
                quote(&doc.version)
            ));
            w.line("/** The graph's tool at /mcp (settings.mcp.toolName, else the graph's id). */");
            w.line(format!(
                "public static final String MCP_TOOL_NAME = {};",
                quote(mcp.tool_name.as_deref().unwrap_or(&doc.id))
            ));
        }
        w.line("/** The field a legacy {\"input\"} or {\"query\"} request fills, or null. */");
        w.line(format!(
            "public static final String LEGACY_INPUT_FIELD = {};",
            legacy_field(doc)
                .map(quote)
                .unwrap_or_else(|| "null".into())
        ));
        w.blank();
        schema_constant(w, doc);
        w.blank();
        w.block("private GraphState() {", "}", |_| {});
    });
    w.finish_file(&format!("package com.svc.{pkg};\n\n"))
}
