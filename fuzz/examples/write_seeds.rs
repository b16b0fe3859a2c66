//! Writes the seed corpus of every fuzz target, `<DIR>/<target>/<seed>`, and
//! its libFuzzer dictionary when it has one, `<DIR>/<target>.dict`.
//! `fuzz/run.sh` calls it before `cargo fuzz run`.

use std::process::ExitCode;

fn main() -> ExitCode {
    let Some(dir) = std::env::args_os().nth(1).map(std::path::PathBuf::from) else {
        eprintln!("usage: write_seeds DIR");
        return ExitCode::from(2);
    };
    for (target, _) in svc_fuzz::TARGETS {
        let seeds = match svc_fuzz::seeds::seeds(target) {
            Ok(s) => s,
            Err(e) => {
                eprintln!("error: seeds of {target}: {e}");
                return ExitCode::FAILURE;
            }
        };
        let out = dir.join(target);
        if let Err(e) = std::fs::create_dir_all(&out) {
            eprintln!("error: {}: {e}", out.display());
            return ExitCode::FAILURE;
        }
        let words = match svc_fuzz::seeds::dictionary(target) {
            Ok(w) => w,
            Err(e) => {
                eprintln!("error: dictionary of {target}: {e}");
                return ExitCode::FAILURE;
            }
        };
        if !words.is_empty() {
            let path = dir.join(format!("{target}.dict"));
            if let Err(e) = std::fs::write(&path, words.join("\n") + "\n") {
                eprintln!("error: {}: {e}", path.display());
                return ExitCode::FAILURE;
            }
        }
        for seed in seeds {
            let path = out.join(&seed.name);
            if let Err(e) = std::fs::write(&path, &seed.bytes) {
                eprintln!("error: {}: {e}", path.display());
                return ExitCode::FAILURE;
            }
        }
    }
    ExitCode::SUCCESS
}
