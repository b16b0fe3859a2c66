//! `svc plugin new NAME [--lang rust|python|typescript]`: a pack project
//! whose connector builds, tests and packs as generated. The files are
//! `host/cli/plugin-template/` (`shared/` for every language, then the
//! language's folder), with `__SVC_NAME__` placeholders filled here
//! (svc_backend_sdk::placeholders, the syntax of every file svc fills).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Args;
use svc_backend_sdk::placeholders::Placeholders;
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
    /// The language of the connector: rust (a cargo crate), python
    /// (componentize-py) or typescript (ComponentizeJS).
    #[arg(long, value_enum, default_value_t = Lang::Rust)]
    lang: Lang,
    /// The svc backend SDK crate a Rust connector builds against (default:
    /// $SVC_SDK_DIR, else the `backends/sdk` of the svc source this binary
    /// was built from).
    #[arg(long, value_name = "DIR")]
    sdk: Option<PathBuf>,
}

/// (path, contents) of a template file; paths hold placeholders too.
type TemplateFile = (&'static str, &'static str);

macro_rules! template {
    ($($path:literal => $file:literal),* $(,)?) => {
        &[$(($path, include_str!(concat!("../plugin-template/", $file)))),*]
    };
}

/// What every project gets, whatever its language: the platform templates
/// and the example graph.
const SHARED: &[TemplateFile] = template![
    "templates/go/connector___SVC_SNAKE__.go" => "shared/templates/go/connector___SVC_SNAKE__.go",
    "templates/python-svc/__SVC_SNAKE__.py" => "shared/templates/python-svc/__SVC_SNAKE__.py",
    "templates/java-svc/__SVC_CAMEL__.java" => "shared/templates/java-svc/__SVC_CAMEL__.java",
    "example/__SVC_SNAKE__.graph.json" => "shared/example/__SVC_SNAKE__.graph.json",
];

const RUST: &[TemplateFile] = template![
    "svc.project.json" => "rust/svc.project.json",
    "README.md" => "rust/README.md",
    ".gitignore" => "rust/gitignore",
    "rust-toolchain.toml" => "rust/rust-toolchain.toml",
    "connector/Cargo.toml" => "rust/connector/Cargo.toml",
    "connector/src/lib.rs" => "rust/connector/src/lib.rs",
];

const PYTHON: &[TemplateFile] = template![
    "svc.project.json" => "python/svc.project.json",
    "README.md" => "python/README.md",
    ".gitignore" => "python/gitignore",
    "connector/app.py" => "python/connector/app.py",
    "connector/tests/conftest.py" => "python/connector/tests/conftest.py",
    "connector/tests/test_connector.py" => "python/connector/tests/test_connector.py",
];

const TYPESCRIPT: &[TemplateFile] = template![
    "svc.project.json" => "typescript/svc.project.json",
    "README.md" => "typescript/README.md",
    ".gitignore" => "typescript/gitignore",
    "connector/package.json" => "typescript/connector/package.json",
    "connector/package-lock.json" => "typescript/connector/package-lock.json",
    "connector/tsconfig.json" => "typescript/connector/tsconfig.json",
    "connector/src/connector.ts" => "typescript/connector/src/connector.ts",
    "connector/src/wit.ts" => "typescript/connector/src/wit.ts",
    "connector/src/templates.d.ts" => "typescript/connector/src/templates.d.ts",
    "connector/test/connector.test.ts" => "typescript/connector/test/connector.test.ts",
];

/// The interface Python and TypeScript components are built against (a
/// Rust connector gets it through the backend SDK crate).
const WIT: TemplateFile = (
    "connector/wit/codegen.wit",
    include_str!("../../../wit/since_v0.2.0/codegen.wit"),
);

/// `--lang`: the language of the connector's code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Lang {
    #[default]
    Rust,
    Python,
    Typescript,
}

impl Lang {
    fn files(self) -> Vec<TemplateFile> {
        let own: &[TemplateFile] = match self {
            Lang::Rust => RUST,
            Lang::Python => PYTHON,
            Lang::Typescript => TYPESCRIPT,
        };
        let mut files: Vec<TemplateFile> = SHARED.iter().chain(own).copied().collect();
        if self != Lang::Rust {
            files.push(WIT);
        }
        files
    }

    /// How to run the scaffold's own tests, for the message after `new`.
    fn test_command(self, root: &Path) -> String {
        let r = root.display();
        match self {
            Lang::Rust => format!("cargo test --manifest-path {r}/connector/Cargo.toml"),
            Lang::Python => format!("pip install componentize-py pytest && pytest {r}/connector"),
            Lang::Typescript => format!("cd {r}/connector && npm ci && npm test"),
        }
    }
}

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

/// `text` (a path or a file of the scaffold) with its placeholders filled;
/// a placeholder svc has no value for means svc was built inconsistently
/// (`every_placeholder_is_known` keeps that from being released).
fn fill(path: &str, text: &str, vars: &[(&str, String)]) -> Result<String, Diagnostic> {
    Placeholders::new(vars).fill(text).map_err(|what| {
        Diagnostic::error(
            &SCAFFOLD_TEMPLATE,
            format!("the scaffold file `{path}` has {what}"),
        )
        .hint("svc was built inconsistently: report it to its authors")
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
                &SDK_NOT_FOUND,
                format!("the svc backend SDK is not at `{}`", candidate.display()),
            )
            .hint("pass --sdk DIR (or set SVC_SDK_DIR) to the `backends/sdk` folder of an svc checkout")
        })
}

/// The SDK crate's path as it is written into the connector's Cargo.toml.
fn sdk_path(flag: Option<&Path>) -> Result<String, Diagnostic> {
    let sdk = sdk_dir(flag)?;
    sdk.to_str()
        .filter(|p| !p.contains(['\'', '\n', '\r']))
        .map(str::to_string)
        .ok_or_else(|| {
            Diagnostic::error(
                &SDK_NOT_FOUND,
                format!(
                    "the SDK path `{}` cannot be written into Cargo.toml",
                    sdk.display()
                ),
            )
            .hint("move the svc checkout to a path without quotes or non-UTF-8 names")
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
            &svc_ir::codes::INVALID_NAME,
            format!("invalid pack name {:?}", args.name),
        )
        .hint("use lowercase letters, digits and single dashes, starting with a letter (optionally `owner/name`)"));
    }
    // Only a Rust connector links the SDK crate by path.
    let sdk = if args.lang == Lang::Rust {
        sdk_path(args.sdk.as_deref())?
    } else {
        String::new()
    };
    let vars = [
        ("NAME", name.clone()),
        ("ID", id),
        ("SNAKE", name.replace('-', "_")),
        ("CAMEL", camel(&name)),
        ("SDK", sdk),
    ];
    let files = args
        .lang
        .files()
        .iter()
        .map(|(path, text)| {
            Ok(ProjectFile {
                path: fill(path, path, &vars)?,
                contents: fill(path, text, &vars)?.into_bytes(),
                executable: false,
            })
        })
        .collect::<Result<Vec<ProjectFile>, Diagnostic>>()?;
    let target = args.dir.join(&name);
    svc_compile::write::write_project(&target, &files, args.force)?;
    Ok(target)
}

pub fn run(args: &PluginNewArgs) -> ExitCode {
    match scaffold(args) {
        Ok(target) => {
            println!(
                "created pack project {}\n  test:  {}\n  pack:  svc pack --root {}",
                target.display(),
                args.lang.test_command(&target),
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

svc_ir::diagnostic_codes! {
    /// `svc plugin new` cannot find the svc backend SDK the new crate depends on.
    ///
    /// A scaffolded connector crate depends on `backends/sdk` of an svc checkout by path. It is looked for at `--sdk DIR`, then `$SVC_SDK_DIR`, then the checkout svc was built from; the folder must contain `Cargo.toml`, and its path must be writable into `Cargo.toml` (no quotes, line breaks or non-UTF-8 names).
    ///
    /// Pass `--sdk DIR` (or set `SVC_SDK_DIR`) to the `backends/sdk` folder of an svc checkout.
    ///
    /// # Example
    ///
    /// ```sh
    /// svc plugin new acme/slack   # svc installed from a release, no checkout
    /// ```
    ///
    /// # Fix
    ///
    /// ```sh
    /// svc plugin new acme/slack --sdk ~/src/svc/backends/sdk
    /// ```
    pub SDK_NOT_FOUND = "sdk-not-found", group "cli";

    /// A file of the `svc plugin new` scaffold has a placeholder svc has no value for.
    ///
    /// `svc plugin new` writes the files of `host/cli/plugin-template/` with their `__SVC_NAME__` placeholders filled (the pack name, the connector id, its snake_case and CamelCase forms, the SDK path). A placeholder without a value means this build of svc is inconsistent; the project would not build, so nothing is written.
    ///
    /// No option fixes this: report it to svc's authors, and use another build of svc meanwhile.
    ///
    /// # Example
    ///
    /// A scaffold file `connector/src/lib.rs` holding `pub const OWNER: &str = "__SVC_OWNER__";`, which svc does not fill.
    ///
    /// # Fix
    ///
    /// ```rust,ignore
    /// pub const ID: &str = "__SVC_ID__";
    /// ```
    pub SCAFFOLD_TEMPLATE = "scaffold-template", group "cli";
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_become_identifiers() {
        assert_eq!(camel("kv-cache"), "KvCache");
        assert_eq!(camel("demo"), "Demo");
        let vars = [("SNAKE", "kv_cache".to_string())];
        assert_eq!(
            fill("p", "app/__SVC_SNAKE__.py", &vars).unwrap(),
            "app/kv_cache.py"
        );
        let err = fill("p", "__SVC_OWNER__", &vars).unwrap_err();
        assert_eq!(err.code, "scaffold-template");
    }

    #[test]
    fn every_placeholder_is_known() {
        let vars: Vec<(&str, String)> = ["NAME", "ID", "SNAKE", "CAMEL", "SDK"]
            .into_iter()
            .map(|k| (k, String::new()))
            .collect();
        for (path, text) in [Lang::Rust, Lang::Python, Lang::Typescript]
            .iter()
            .flat_map(|l| l.files())
        {
            for piece in [path, text] {
                if let Err(e) = fill(path, piece, &vars) {
                    panic!("{}", e.message);
                }
            }
        }
    }
}
