//! `GraphState.java`: the state schema as Java constants.

use svc_backend_sdk::ir::Document;
use svc_backend_sdk::writer::CodeWriter;

use crate::java::{literal, quote};

fn type_const(t: svc_backend_sdk::ir::FieldType) -> &'static str {
    use svc_backend_sdk::ir::FieldType::*;
    match t {
        String => "Type.STRING",
        Integer => "Type.INTEGER",
        Number => "Type.NUMBER",
        Boolean => "Type.BOOLEAN",
        Object => "Type.OBJECT",
        Array => "Type.ARRAY",
        Messages => "Type.MESSAGES",
    }
}

fn item(it: &svc_backend_sdk::ir::ItemType) -> String {
    match &it.items {
        Some(inner) => format!("new Item({}, {})", type_const(it.ty), item(inner)),
        None => format!("new Item({}, null)", type_const(it.ty)),
    }
}

/// The field legacy `{"input": ...}` requests fill: the first required string field.
pub fn legacy_field(doc: &Document) -> Option<&str> {
    doc.logical
        .state
        .iter()
        .find(|f| f.required && f.ty == svc_backend_sdk::ir::FieldType::String)
        .map(|f| f.name.as_str())
}

pub(super) fn graph_state(doc: &Document, pkg: &str) -> String {
    let mut w = CodeWriter::spaces();
    w.line(format!("package com.svc.{pkg};")).blank();
    w.line(format!("import com.svc.{pkg}.runtime.StateSchema;"));
    w.line(format!("import com.svc.{pkg}.runtime.StateSchema.Field;"));
    w.line(format!("import com.svc.{pkg}.runtime.StateSchema.Item;"));
    w.line(format!("import com.svc.{pkg}.runtime.StateSchema.Type;"));
    w.line(format!("import com.svc.{pkg}.runtime.Values;"));
    w.line("import java.util.List;").blank();
    w.line("/** The state of the graph and the settings compiled from its document. */");
    w.block("public final class GraphState {", "}", |w| {
        w.line("/** `none` or `api_key` (security.auth). */");
        w.line(format!(
            "public static final String AUTH = {};",
            quote(doc.security.auth.as_str())
        ));
        w.line("/** The environment variable holding the API key (security.keyEnv). */");
        w.line(format!(
            "public static final String KEY_ENV = {};",
            quote(&doc.security.key_env)
        ));
        w.line("/** The field a legacy {\"input\"} or {\"query\"} request fills, or null. */");
        w.line(format!(
            "public static final String LEGACY_INPUT_FIELD = {};",
            legacy_field(doc)
                .map(quote)
                .unwrap_or_else(|| "null".into())
        ));
        w.blank();
        w.line("public static final StateSchema SCHEMA = new StateSchema(List.of(");
        w.indent().indent();
        let n = doc.logical.state.len();
        for (i, f) in doc.logical.state.iter().enumerate() {
            let items = f.items.as_ref().map(item).unwrap_or_else(|| "null".into());
            let default = match f.default.as_ref().filter(|d| !d.is_null()) {
                Some(d) => format!("() -> {}", literal(d)),
                None => "null".into(),
            };
            w.line(format!(
                "new Field({}, {}, {items}, {}, {}, {default}){}",
                quote(&f.name),
                type_const(f.ty),
                f.reducer == svc_backend_sdk::ir::Reducer::Append,
                f.required,
                if i + 1 < n { "," } else { "" }
            ));
        }
        w.dedent().dedent();
        w.line("));").blank();
        w.block("private GraphState() {", "}", |_| {});
    });
    let mut text = w.finish();
    if !text.contains("Values.") {
        text = text.replace(&format!("import com.svc.{pkg}.runtime.Values;\n"), "");
    }
    if !text.contains("new Item(") {
        text = text.replace(
            &format!("import com.svc.{pkg}.runtime.StateSchema.Item;\n"),
            "",
        );
    }
    text
}
