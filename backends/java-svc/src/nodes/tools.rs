//! Native tools: a class per tool running its java-svc body, which tool
//! nodes call with their input map as `state`. HTTP tools need no class
//! (the runtime's `HttpTool`).

use svc_backend_sdk::ir::{Document, ToolKind};
use svc_backend_sdk::{Diagnostic, File};

use super::{native_class, tool_class_name};
use crate::java::quote;
use crate::scope::Scope;

/// The native tools of the graph at `scope`, in its `nodes` package.
pub fn files(doc: &Document, scope: &Scope) -> Result<Vec<File>, Vec<Diagnostic>> {
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
                .at(scope.at(&format!("/logical/tools/{i}"))),
            );
            continue;
        };
        let class = tool_class_name(&t.id);
        out.push(File::text(
            format!("{}/nodes/{class}.java", scope.dir),
            native_class(
                scope,
                &class,
                &format!(
                    "The native tool {}: `state` is the tool input, `result` the tool's result.",
                    quote(&scope.name(&t.id))
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
