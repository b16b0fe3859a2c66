//! `svc plugin new NAME`: a pack project whose connector builds, tests and
//! packs as generated. The files are `host/cli/plugin-template/`, with
//! `@{...}` placeholders filled here.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Args;
use svc_compile::ProjectFile;
use svc_ir::Diagnostic;
use svc_packs::project::{is_connector_id, is_pack_name};

#[derive(Debug, Args)]
pub struct PluginNewArgs {
    /// The pack name (`demo`), or `owner/name` to set the connector id
    /// (default owner: `local`).
    name: String,
    /// Where to create `<name>/` (default: the current directory).
    #[arg(long, default_value = ".")]
    dir: PathBuf,
    /// Replace a non-empty `<dir>/<name>` (only that directory).
    #[arg(long)]
    force: bool,
    /// The svc backend SDK crate the connector builds against (default:
    /// $SVC_SDK_DIR, else the `backends/sdk` of the svc source this binary
    /// was built from).
    #[arg(long, value_name = "DIR")]
    sdk: Option<PathBuf>,
}

/// (path, contents) of the template; paths hold placeholders too.
const TEMPLATE: &[(&str, &str)] = &[
    (
        "svc.project.json",
        include_str!("../plugin-template/svc.project.json"),
    ),
    ("README.md", include_str!("../plugin-template/README.md")),
    (".gitignore", include_str!("../plugin-template/gitignore")),
    (
        "rust-toolchain.toml",
        include_str!("../plugin-template/rust-toolchain.toml"),
    ),
    (
        "connector/Cargo.toml",
        include_str!("../plugin-template/connector/Cargo.toml"),
    ),
    (
        "connector/src/lib.rs",
        include_str!("../plugin-template/connector/src/lib.rs"),
    ),
    (
        "templates/go/connector_@{snake}.go",
        include_str!("../plugin-template/templates/go/connector_@{snake}.go"),
    ),
    (
        "templates/python-svc/@{snake}.py",
        include_str!("../plugin-template/templates/python-svc/@{snake}.py"),
    ),
    (
        "templates/java-svc/@{camel}.java",
        include_str!("../plugin-template/templates/java-svc/@{camel}.java"),
    ),
    (
        "example/@{snake}.graph.json",
        include_str!("../plugin-template/example/@{snake}.graph.json"),
    ),
];

fn camel(name: &str) -> String {
    name.split('-')
        .map(|part| {
            let mut c = part.chars();
            match c.next() {
                Some(first) => first.to_ascii_uppercase().to_string() + c.as_str(),
                None => String::new(),
            }
        })
        .collect()
}

fn fill(text: &str, vars: &[(&str, String)]) -> String {
    vars.iter().fold(text.to_string(), |t, (k, v)| {
        t.replace(&format!("@{{{k}}}"), v)
    })
}

fn sdk_dir(flag: Option<&Path>) -> Result<PathBuf, Diagnostic> {
    let built_from = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../backends/sdk");
    let candidate = flag
        .map(Path::to_path_buf)
        .or_else(|| {
            std::env::var_os("SVC_SDK_DIR")
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        })
        .unwrap_or(built_from);
    candidate
        .join("Cargo.toml")
        .is_file()
        .then(|| candidate.canonicalize().unwrap_or(candidate.clone()))
        .ok_or_else(|| {
            Diagnostic::error(
                "sdk-not-found",
                format!("the svc backend SDK is not at `{}`", candidate.display()),
            )
            .hint("pass --sdk DIR (or set SVC_SDK_DIR) to the `backends/sdk` folder of an svc checkout")
        })
}

pub fn scaffold(args: &PluginNewArgs) -> Result<PathBuf, Diagnostic> {
    let (owner, name) = match args.name.split_once('/') {
        Some((o, n)) => (o.to_string(), n.to_string()),
        None => ("local".to_string(), args.name.clone()),
    };
    let id = format!("{owner}/{name}");
    if !is_pack_name(&name) || !is_connector_id(&id) {
        return Err(Diagnostic::error(
            "invalid-name",
            format!("invalid pack name {:?}", args.name),
        )
        .hint("use lowercase letters, digits and single dashes, starting with a letter (optionally `owner/name`)"));
    }
    let sdk = sdk_dir(args.sdk.as_deref())?;
    let sdk = sdk
        .to_str()
        .filter(|p| !p.contains(['\'', '\n', '\r']))
        .ok_or_else(|| {
            Diagnostic::error(
                "sdk-not-found",
                format!(
                    "the SDK path `{}` cannot be written into Cargo.toml",
                    sdk.display()
                ),
            )
            .hint("move the svc checkout to a path without quotes or non-UTF-8 names")
        })?;
    let vars = [
        ("name", name.clone()),
        ("id", id),
        ("snake", name.replace('-', "_")),
        ("camel", camel(&name)),
        ("sdk", sdk.to_string()),
    ];
    let files: Vec<ProjectFile> = TEMPLATE
        .iter()
        .map(|(path, text)| ProjectFile {
            path: fill(path, &vars),
            contents: fill(text, &vars).into_bytes(),
            executable: false,
        })
        .collect();
    let target = args.dir.join(&name);
    svc_compile::write::write_project(&target, &files, args.force)?;
    Ok(target)
}

pub fn run(args: &PluginNewArgs) -> ExitCode {
    match scaffold(args) {
        Ok(target) => {
            println!(
                "created pack project {}\n  test:  cargo test --manifest-path {}/connector/Cargo.toml\n  pack:  svc pack --root {}",
                target.display(),
                target.display(),
                target.display()
            );
            ExitCode::SUCCESS
        }
        Err(d) => {
            eprintln!("{}", d.render());
            ExitCode::from(1)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_become_identifiers() {
        assert_eq!(camel("kv-cache"), "KvCache");
        assert_eq!(camel("demo"), "Demo");
        let vars = [("snake", "kv_cache".to_string())];
        assert_eq!(fill("app/@{snake}.py", &vars), "app/kv_cache.py");
    }

    #[test]
    fn every_placeholder_is_known() {
        let known = ["name", "id", "snake", "camel", "sdk"];
        for (path, text) in TEMPLATE {
            for piece in [*path, *text] {
                for (i, _) in piece.match_indices("@{") {
                    let rest = &piece[i + 2..];
                    let key = &rest[..rest.find('}').unwrap()];
                    assert!(
                        known.contains(&key),
                        "{path}: unknown placeholder @{{{key}}}"
                    );
                }
            }
        }
    }
}
