fn main() -> std::process::ExitCode {
    svc_cli::main_svc()
}
