//! Native tools: a class per tool running its java-svc body, which tool
//! nodes call with their input map as `state`. HTTP tools need no class
//! (the runtime's `HttpTool`).

use svc_backend_sdk::ir::{Document, ToolKind};
use svc_backend_sdk::{Diagnostic, File};

use super::{native_class, tool_class_name};
use crate::java::quote;

pub fn files(doc: &Document, pkg: &str, base: &str) -> Result<Vec<File>, Vec<Diagnostic>> {
    let mut out = Vec::new();
    let mut missing = Vec::new();
    for (i, t) in doc.logical.tools.iter().enumerate() {
        if !matches!(t.kind, ToolKind::Native) {
            continue;
        }
        let Some(body) = doc.body("java-svc", &t.id) else {
            missing.push(
                Diagnostic::error(
                    &svc_backend_sdk::ir::codes::MISSING_BODY,
                    format!("native tool `{}` has no java-svc body", t.id),
                )
                .at(format!("/logical/tools/{i}")),
            );
            continue;
        };
        let class = tool_class_name(&t.id);
        out.push(File::text(
            format!("{base}/nodes/{class}.java"),
            native_class(
                pkg,
                &class,
                &format!(
                    "The native tool {}: `state` is the tool input, `result` the tool's result.",
                    quote(&t.id)
                ),
                body,
            ),
        ));
    }
    if missing.is_empty() {
        Ok(out)
    } else {
        Err(missing)
    }
}
