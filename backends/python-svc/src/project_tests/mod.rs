//! The project's tests, in `tests/`: `test_service.py` drives the service
//! through the HTTP contract (`service.rs`); stand-ins for the MCP servers
//! and A2A agents the graph calls run beside it (`mcp_stub.rs`,
//! `a2a_stub.rs`).

mod a2a_stub;
mod fixture;
mod mcp_stub;
mod service;
mod upstream;

use serde_json::Value;
use svc_backend_sdk::ir::Document;
use svc_backend_sdk::File;

use crate::py::quote;

pub fn files(doc: &Document) -> Vec<File> {
    let mut out = vec![File::text("tests/test_service.py", service::module(doc))];
    if let Some(stub) = a2a_stub::module(doc) {
        out.push(File::text("tests/a2a_stub.py", stub));
    }
    if let Some(stub) = mcp_stub::module(doc) {
        out.push(File::text("tests/mcp_stub.py", stub));
    }
    out
}

/// A JSON text as a Python string literal.
fn js(v: &Value) -> String {
    quote(&v.to_string())
}
