//! `svc-compiler`: the compiler the SDK's `svc` and `svc-java` commands hand
//! over to; it is `svc-java` when started under that name (argv[0]).
fn main() -> std::process::ExitCode {
    let java = std::env::args_os()
        .next()
        .map(std::path::PathBuf::from)
        .and_then(|p| p.file_stem().map(|s| s == "svc-java"))
        .unwrap_or(false);
    if java {
        svc_cli::main_svc_java()
    } else {
        svc_cli::main_svc()
    }
}
