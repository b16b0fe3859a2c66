//! `svc compile DOC --out DIR` (and `svc-java compile`): reads the document
//! and the test file beside it, writes the project kept from an identical
//! earlier compile if there is one (`svc_compile::reuse`), else runs the
//! pipeline and keeps what it made.

use std::process::ExitCode;

use svc_ir::SourceFile;

use svc_compile::reuse::{Made, Shelf};

use crate::backends::Backends;
use crate::{output, test_cases, CompileArgs};

pub(crate) fn run(
    args: &CompileArgs,
    document: &std::path::Path,
    out: &std::path::Path,
    platform: Option<&str>,
) -> ExitCode {
    if args.timings {
        svc_compile::timings::start();
    }
    let doc_name = document.display().to_string();
    let text = match std::fs::read_to_string(document) {
        Ok(t) => t,
        Err(e) => {
            let d = svc_ir::Diagnostic::error(
                &svc_ir::codes::IO,
                format!("cannot read `{doc_name}`: {e}"),
            )
            .hint("check the path of the graph document");
            return output::fail(args.format, &[d]);
        }
    };
    let mut source = SourceFile::new(doc_name, text);
    svc_compile::timings::lap("read the document");
    let runtime = std::sync::Arc::new(args.engine.runtime());
    let mut registry = match args.plugins.registry(std::sync::Arc::clone(&runtime)) {
        Ok(r) => r,
        Err(d) => return output::fail(args.format, &[d]),
    };
    svc_compile::timings::lap("find plugins");
    let cases = test_cases::read_beside(document);
    svc_compile::timings::lap("read the test file");

    // A project made before from exactly these inputs is written again as
    // it is, without the engine.
    let reuse = args.engine.cache_dir().and_then(|d| {
        let key = reuse_key(
            args,
            document,
            &source.text,
            platform,
            cases.as_deref(),
            &registry,
        )?;
        Some((Shelf::new(d.join("projects")), key))
    });
    let earlier = reuse.as_ref().and_then(|(shelf, key)| shelf.load(key));
    let code = if let Some(made) = earlier {
        svc_compile::timings::lap("find the project made before");
        match svc_compile::write::write_project(out, &made.files, args.force) {
            Ok(()) => {
                svc_compile::timings::lap("write the project");
                report(args, out, &made)
            }
            Err(d) => output::fail(args.format, &[d]),
        }
    } else {
        let backends = Backends {
            runtime: &runtime,
            override_path: args.engine.backend.clone(),
        };
        let mut options = vec![("sdk".to_string(), args.sdk.as_str().to_string())];
        // The graph's test cases become the project's own tests.
        if let Some(cases) = &cases {
            match test_cases::bundle(document, &source.text, cases) {
                Ok(Some(bundle)) => options.push(("testCases".to_string(), bundle)),
                Ok(None) => {}
                Err(diags) => return output::fail(args.format, &diags),
            }
        }
        svc_compile::timings::lap("check the test file");
        let compile = svc_compile::Compile {
            platform,
            options: &options,
            out: svc_compile::Output::Dir {
                path: out,
                force: args.force,
            },
            keep: reuse.as_ref().map(|(shelf, key)| (shelf, key.as_str())),
        };
        match compile.run(&mut source, &backends, &mut registry) {
            Ok(mut generated) => {
                // The project is written; not keeping it (a cache that
                // cannot be written) only costs the next compile its time.
                if let (true, Some(Err(e))) = (args.verbose, generated.kept.take()) {
                    eprintln!(
                        "note: the project is not kept for reuse in the cache directory: {e}"
                    );
                }
                report(args, out, &Made::from(generated))
            }
            Err(diags) => output::fail(args.format, &diags),
        }
    };
    if args.timings {
        output::timings(&svc_compile::timings::finish());
    }
    // The process ends now: its exit returns the engine, the components'
    // code and their memory to the system at once, which tearing them
    // down one by one took ~4% of a warm compile.
    std::mem::forget(registry);
    std::mem::forget(runtime);
    code
}

/// Prints what a compile made (the backend's own output with --verbose).
fn report(args: &CompileArgs, out: &std::path::Path, made: &Made) -> ExitCode {
    if args.verbose && !made.plugin_output.is_empty() {
        eprintln!(
            "--- output of the backend component ---\n{}",
            made.plugin_output
        );
    }
    output::compiled(args.format, out, made);
    ExitCode::SUCCESS
}

/// The digest of everything a compile's project is made from: this very
/// executable (its built-in backends and checks), the document's path (its
/// diagnostics name it) and text, the test file beside it, the platform,
/// the options, the limits and every pack on the plugin paths. `None` when
/// a backend comes from a file (--backend, SVC_BACKEND_*): that compile is
/// not kept or reused.
fn reuse_key(
    args: &CompileArgs,
    document: &std::path::Path,
    text: &str,
    platform: Option<&str>,
    cases: Option<&str>,
    registry: &svc_packs::registry::Registry,
) -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    let backend_from_file = args.engine.backend.is_some()
        || std::env::vars_os().any(|(k, v)| {
            k.to_str().is_some_and(|k| k.starts_with("SVC_BACKEND_")) && !v.is_empty()
        });
    if backend_from_file {
        return None;
    }
    // A rebuilt svc is a new file: its identity changes with it; the
    // release and the built-in backends' digests are named besides.
    let exe = std::env::current_exe().ok()?;
    let meta = std::fs::metadata(&exe).ok()?;
    let identity = format!(
        "{} {} {} {} {}.{}",
        exe.display(),
        meta.dev(),
        meta.ino(),
        meta.len(),
        meta.mtime(),
        meta.mtime_nsec()
    );
    let mut key = svc_compile::reuse::Key::default();
    key.part("svc", identity.as_bytes())
        .part("host", svc_compile::HOST_VERSION.as_bytes());
    for b in svc_builtin::BACKENDS {
        key.part("built-in backend", b.sha256.as_bytes());
    }
    key.part("document path", document.display().to_string().as_bytes())
        .part("document", text.as_bytes())
        .part("platform", platform.unwrap_or_default().as_bytes())
        .part("sdk", args.sdk.as_str().as_bytes())
        .part("limits", format!("{:?}", args.engine.limits()).as_bytes());
    match cases {
        Some(cases) => key.part("test file", cases.as_bytes()),
        None => key.part("no test file", &[]),
    };
    for (source, sha256) in registry.packs() {
        key.part("pack", source.as_bytes())
            .part("pack sha256", sha256.as_bytes());
    }
    Some(key.finish())
}
