//! The `svc` and `svc-java` command lines.
//!
//! Exit codes: 0 success, 1 diagnostics (the input or a plugin is at
//! fault, and the output says where), 2 usage (clap reports it).

pub(crate) mod backends;
mod capabilities;
pub mod codes;
mod compile;
pub mod design;
mod launch;
mod output;
mod packs;
pub(crate) mod plugin_new;
mod sdk;
pub(crate) mod test_cases;
mod test_plugin;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand, ValueEnum};

use backends::EngineArgs;
use output::Format;

#[derive(Debug, Parser)]
#[command(
    name = "svc",
    version,
    about = "Compile an agent-workflow graph (IR v2) into a runnable service",
    propagate_version = true
)]
struct SvcCli {
    #[command(subcommand)]
    command: SvcCommand,
}

#[derive(Debug, Subcommand)]
enum SvcCommand {
    /// Compile DOC.graph.json into a project directory; without a document,
    /// precompile application.yaml into application.json.
    Compile(CompileArgs),
    /// Scaffold a Python project on the svc SDK (the same files as `python -m svc new`).
    New(sdk::NewArgs),
    /// Print a configuration value of a project as JSON.
    Get(sdk::GetArgs),
    /// Start a Python project's API server (hands over to `python -m svc run`).
    Run(ForwardArgs),
    /// List a Python project's registered components (`python -m svc info`).
    Info(ForwardArgs),
    /// Register a Python project's graph with a tracing service (`python -m svc register`).
    Register(ForwardArgs),
    /// Serve a Python project's MCP servers and exposed graph over stdio (`python -m svc mcp`).
    Mcp(ForwardArgs),
    /// Connector plugin projects.
    #[command(subcommand)]
    Plugin(PluginCommand),
    /// Build, check and write a connector pack (NAME-VERSION.svc-pack.zip).
    Pack(packs::PackArgs),
    /// Run every check of `svc pack` without writing a pack.
    ValidatePack(packs::ValidatePackArgs),
    /// Print what each backend supports, as the backends themselves report it.
    Capabilities(CapabilitiesArgs),
    /// Edit a graph document in the visual designer, served on 127.0.0.1
    Design(design::DesignArgs),
    /// Run the test cases of DOC (NAME.tests.json beside it) against the
    /// compiled service on each target.
    Test(test_cases::TestArgs),
    /// Run a backend component against the shared fixtures.
    TestPlugin(test_plugin::TestPluginArgs),
    /// Print the version of svc and of its built-in backends.
    Version,
    /// Stops the process groups `svc design` or `svc test` started when it
    /// dies: started by them, never by hand (launch::guardian).
    #[command(name = "guardian", hide = true)]
    Guardian,
}

#[derive(Debug, Subcommand)]
enum PluginCommand {
    /// Scaffold a pack project: svc.project.json, a connector crate,
    /// templates for every platform, an example graph and tests.
    New(plugin_new::PluginNewArgs),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Platform {
    #[value(name = "python-svc")]
    PythonSvc,
    #[value(name = "java-svc")]
    JavaSvc,
    #[value(name = "go")]
    Go,
}

impl Platform {
    fn as_str(self) -> &'static str {
        match self {
            Platform::PythonSvc => "python-svc",
            Platform::JavaSvc => "java-svc",
            Platform::Go => "go",
        }
    }
}

/// `svc compile --sdk`: the emit option `sdk` of python-svc.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum SdkSource {
    Vendor,
    Index,
}

impl SdkSource {
    fn as_str(self) -> &'static str {
        match self {
            SdkSource::Vendor => "vendor",
            SdkSource::Index => "index",
        }
    }
}

#[derive(Debug, Args)]
struct ForwardArgs {
    /// Arguments for `python -m svc <command>` (e.g. --root, --host, --port).
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    args: Vec<String>,
}

#[derive(Debug, Args)]
struct CompileArgs {
    /// The graph document (*.graph.json); without one, application.yaml in
    /// --root is precompiled to application.json.
    document: Option<PathBuf>,
    /// The project directory to write (with a document: required).
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// The project whose application.yaml to precompile (without a document).
    #[arg(long, default_value = ".")]
    root: PathBuf,
    /// Replace --out if it is not empty (only that directory).
    #[arg(long)]
    force: bool,
    /// Compile for this platform instead of the document's target.platform.
    #[arg(long, value_enum)]
    platform: Option<Platform>,
    /// python-svc: where the project installs svc-sdk from: `vendor` writes
    /// the wheel of the SDK svc was built with into vendor/; `index` leaves
    /// it to the package index (for a published release).
    #[arg(long, value_enum, default_value_t = SdkSource::Vendor)]
    sdk: SdkSource,
    #[arg(long, value_enum, default_value_t = Format::Human)]
    format: Format,
    /// Show what the backend component printed.
    #[arg(long)]
    verbose: bool,
    /// Print where the compile's time went, phase by phase, as one JSON
    /// object on stderr (milliseconds).
    #[arg(long)]
    timings: bool,
    #[command(flatten)]
    plugins: packs::PluginArgs,
    #[command(flatten)]
    engine: EngineArgs,
}

#[derive(Debug, Args)]
struct CapabilitiesArgs {
    #[arg(long, value_enum)]
    platform: Option<Platform>,
    #[arg(long, value_enum, default_value_t = Format::Human)]
    format: Format,
    #[command(flatten)]
    engine: EngineArgs,
}

/// The emit option `testCases` that `svc compile` passes for `document`
/// (whose text is `text`) when `NAME.tests.json` is beside it: the cases
/// bundled for the project's own runner (docs/testing.md), `None` without
/// a test file. The e2e tests compile the fixtures with it.
pub fn test_cases_option(
    document: &std::path::Path,
    text: &str,
) -> Result<Option<String>, Vec<svc_ir::Diagnostic>> {
    match test_cases::read_beside(document) {
        Some(cases) => test_cases::bundle(document, text, &cases),
        None => Ok(None),
    }
}

pub fn main_svc() -> ExitCode {
    let cli = SvcCli::parse();
    match cli.command {
        SvcCommand::Compile(args) => {
            let Some(document) = &args.document else {
                return sdk::compile_config(&args.root, args.out.as_deref(), args.force);
            };
            let Some(out) = &args.out else {
                use clap::CommandFactory;
                SvcCli::command()
                    .error(
                        clap::error::ErrorKind::MissingRequiredArgument,
                        "compiling a document needs --out DIR",
                    )
                    .exit()
            };
            let platform = args.platform.map(Platform::as_str);
            compile::run(&args, document, out, platform)
        }
        SvcCommand::New(args) => sdk::new(&args),
        SvcCommand::Get(args) => sdk::get(&args),
        SvcCommand::Run(a) => sdk::forward("run", &a.args),
        SvcCommand::Info(a) => sdk::forward("info", &a.args),
        SvcCommand::Register(a) => sdk::forward("register", &a.args),
        SvcCommand::Mcp(a) => sdk::forward("mcp", &a.args),
        SvcCommand::Plugin(PluginCommand::New(args)) => plugin_new::run(&args),
        SvcCommand::Pack(args) => packs::run_pack(&args),
        SvcCommand::ValidatePack(args) => packs::run_validate(&args),
        SvcCommand::Capabilities(args) => capabilities::run(
            &args.engine,
            args.platform.map(Platform::as_str),
            args.format,
        ),
        SvcCommand::Test(args) => test_cases::run(&args),
        SvcCommand::TestPlugin(args) => test_plugin::run(&args),
        SvcCommand::Design(args) => design::run(&args),
        SvcCommand::Guardian => launch::guardian::serve(),
        SvcCommand::Version => {
            print_version("svc", svc_ir::release::SVC);
            ExitCode::SUCCESS
        }
    }
}

#[derive(Debug, Parser)]
#[command(
    name = "svc-java",
    version,
    about = "Compile an agent-workflow graph (IR v2) into a Spring Boot project (the svc host with the java-svc backend)",
    propagate_version = true
)]
struct JavaCli {
    #[command(subcommand)]
    command: JavaCommand,
}

#[derive(Debug, Subcommand)]
enum JavaCommand {
    /// Compile DOC.graph.json into a Spring Boot project.
    Compile(JavaCompileArgs),
    /// Print what the java-svc backend supports.
    Capabilities {
        #[arg(long, value_enum, default_value_t = Format::Human)]
        format: Format,
        #[command(flatten)]
        engine: EngineArgs,
    },
    /// Print the version.
    Version,
}

#[derive(Debug, Args)]
struct JavaCompileArgs {
    document: PathBuf,
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
    #[arg(long)]
    force: bool,
    #[arg(long, value_enum, default_value_t = Format::Human)]
    format: Format,
    #[arg(long)]
    verbose: bool,
    #[command(flatten)]
    plugins: packs::PluginArgs,
    #[command(flatten)]
    engine: EngineArgs,
}

pub fn main_svc_java() -> ExitCode {
    let cli = JavaCli::parse();
    match cli.command {
        JavaCommand::Compile(a) => {
            let args = CompileArgs {
                document: Some(a.document.clone()),
                out: Some(a.out.clone()),
                root: PathBuf::from("."),
                force: a.force,
                platform: Some(Platform::JavaSvc),
                sdk: SdkSource::Vendor,
                format: a.format,
                verbose: a.verbose,
                timings: false,
                plugins: a.plugins,
                engine: a.engine,
            };
            compile::run(&args, &a.document, &a.out, Some("java-svc"))
        }
        JavaCommand::Capabilities { format, engine } => {
            capabilities::run(&engine, Some("java-svc"), format)
        }
        JavaCommand::Version => {
            print_version("svc-java", svc_ir::release::SVC_JAVA);
            ExitCode::SUCCESS
        }
    }
}

/// `svc version` and `svc-java version`: the release's version of the
/// command (`svc_ir::release`), then what it is built of.
fn print_version(name: &str, version: &str) {
    let mut text = format!(
        "{name} {version} (specification {}, host {}, IR 2.x, plugin interface svc:codegen@0.2.0, loads 0.1.0 components)\n",
        svc_ir::release::SPECIFICATION,
        svc_compile::HOST_VERSION
    );
    for b in svc_builtin::BACKENDS {
        text.push_str(&format!("  built-in backend {} ({})\n", b.platform, b.name));
    }
    // A reader that stops early (`svc version | head -1`) is not an error.
    let _ = std::io::Write::write_all(&mut std::io::stdout(), text.as_bytes());
}

#[cfg(test)]
mod release_tests {
    #![allow(clippy::unwrap_used)] // test code
    use svc_ir::release;

    fn read(path: &str) -> String {
        std::fs::read_to_string(format!("{}/../../{path}", env!("CARGO_MANIFEST_DIR"))).unwrap()
    }

    /// Every place that carries a version of the release carries the one
    /// `svc_ir::release` states: svc, the svc-compiler wheel (this crate's
    /// version) and the SDK with its `compiler` pin; the designer's
    /// package; the committed JSON Schema's specification version.
    #[test]
    fn every_version_is_the_release_s() {
        assert_eq!(env!("CARGO_PKG_VERSION"), release::SVC);
        assert!(
            read("host/compiler-wheel/Cargo.toml")
                .contains(&format!("\nversion = \"{}\"\n", release::SVC)),
            "host/compiler-wheel/Cargo.toml: the svc-compiler wheel's version"
        );
        let pyproject = read("sdk/python/pyproject.toml");
        assert!(
            pyproject.contains(&format!("\nversion = \"{}\"\n", release::SVC)),
            "sdk/python/pyproject.toml"
        );
        assert!(
            pyproject.contains(&format!("\"svc-compiler=={}\"", release::SVC)),
            "sdk/python/pyproject.toml: the compiler extra's pin"
        );
        let package: serde_json::Value =
            serde_json::from_str(&read("designer/package.json")).unwrap();
        assert_eq!(package["version"], release::DESIGNER);
        let lock: serde_json::Value =
            serde_json::from_str(&read("designer/package-lock.json")).unwrap();
        assert_eq!(lock["version"], release::DESIGNER);
        assert_eq!(lock["packages"][""]["version"], release::DESIGNER);
        let schema: serde_json::Value =
            serde_json::from_str(&read("fixtures/schema/ir-v2.schema.json")).unwrap();
        assert_eq!(schema["x-svc-specification"], release::SPECIFICATION);
    }
}
