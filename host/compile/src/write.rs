//! Writing a project atomically.
//!
//! Files go to a temporary directory beside `--out`, which is then renamed
//! into place. With `--force` an existing `--out` is moved aside first and
//! removed only after the new tree is in place; on any failure the temporary
//! directory is removed and the old tree restored, so nothing half-written
//! is ever left behind.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use svc_ir::Diagnostic;

/// One file to write (paths already checked by [`crate::check`]).
#[derive(Debug, Clone)]
pub struct ProjectFile {
    pub path: String,
    pub contents: Vec<u8>,
    pub executable: bool,
}

fn io_diag(what: &str, path: &Path, e: &io::Error) -> Diagnostic {
    Diagnostic::error(
        &svc_ir::codes::IO,
        format!("{what} `{}`: {e}", path.display()),
    )
}

/// Whether `out` may be written: it must not exist, be an empty directory,
/// or (with `force`) be a directory that is safe to replace.
pub fn check_out_dir(out: &Path, force: bool) -> Result<(), Diagnostic> {
    let meta = match fs::symlink_metadata(out) {
        Ok(m) => m,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(io_diag("cannot inspect", out, &e)),
    };
    if !meta.is_dir() {
        return Err(Diagnostic::error(
            &OUT_NOT_DIRECTORY,
            format!("--out `{}` exists and is not a directory", out.display()),
        )
        .hint("choose another --out path"));
    }
    let empty = fs::read_dir(out)
        .map_err(|e| io_diag("cannot read", out, &e))?
        .next()
        .is_none();
    if empty {
        return Ok(());
    }
    if !force {
        return Err(Diagnostic::error(
            &OUT_NOT_EMPTY,
            format!("--out `{}` is not empty", out.display()),
        )
        .hint("pass --force to replace that directory, or choose an empty or new one"));
    }
    // --force replaces exactly that directory; refuse one that holds the
    // current directory (or is the file system root), where a typo would
    // wipe far more than a generated project.
    let abs = fs::canonicalize(out).map_err(|e| io_diag("cannot resolve", out, &e))?;
    let cwd = std::env::current_dir()
        .and_then(fs::canonicalize)
        .unwrap_or_default();
    if abs.parent().is_none() || cwd.starts_with(&abs) {
        return Err(Diagnostic::error(
            &OUT_UNSAFE,
            format!(
                "refusing to replace `{}`: it is the current directory, one of its parents, or the root",
                out.display()
            ),
        )
        .hint("point --out at the project directory itself, e.g. --out build/my-service"));
    }
    Ok(())
}

/// A directory name beside `out` that nothing else uses.
fn sibling(out: &Path, tag: &str) -> Result<PathBuf, Diagnostic> {
    let parent = match out.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = out
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("project");
    for i in 0..1000 {
        let candidate = parent.join(format!(".{name}.svc-{tag}-{}-{i}", std::process::id()));
        if !candidate.exists() {
            return Ok(candidate);
        }
    }
    Err(Diagnostic::error(
        &svc_ir::codes::IO,
        format!("no free temporary name beside `{}`", out.display()),
    ))
}

fn write_tree(root: &Path, files: &[ProjectFile]) -> io::Result<()> {
    fs::create_dir_all(root)?;
    let mut made = std::collections::HashSet::new();
    for f in files {
        let path = root.join(&f.path);
        if let Some(dir) = path.parent() {
            if made.insert(dir.to_path_buf()) {
                fs::create_dir_all(dir)?;
            }
        }
        let mut options = fs::OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        {
            // The mode is set at creation (the umask still applies), which
            // saves a chmod per file on large projects.
            use std::os::unix::fs::OpenOptionsExt;
            options.mode(if f.executable { 0o755 } else { 0o644 });
        }
        io::Write::write_all(&mut options.open(&path)?, &f.contents)?;
    }
    Ok(())
}

/// Writes `files` to `out` atomically.
pub fn write_project(out: &Path, files: &[ProjectFile], force: bool) -> Result<(), Diagnostic> {
    write_project_checked(out, files, force, || Ok(())).map_err(|mut ds| ds.remove(0))
}

/// [`write_project`], asking `verdict` between writing the temporary
/// directory and moving it into place (a check still running while the
/// files were written, `crate::LateCheck`): when it fails, the temporary
/// directory is removed and `out` left as it was.
pub(crate) fn write_project_checked(
    out: &Path,
    files: &[ProjectFile],
    force: bool,
    verdict: impl FnOnce() -> Result<(), Vec<Diagnostic>>,
) -> Result<(), Vec<Diagnostic>> {
    check_out_dir(out, force).map_err(|d| vec![d])?;
    if let Some(parent) = out.parent().filter(|p| !p.as_os_str().is_empty()) {
        fs::create_dir_all(parent).map_err(|e| vec![io_diag("cannot create", parent, &e)])?;
    }
    let tmp = sibling(out, "tmp").map_err(|d| vec![d])?;
    if let Err(e) = write_tree(&tmp, files) {
        let _ = fs::remove_dir_all(&tmp);
        return Err(vec![io_diag("cannot write the project into", &tmp, &e)]);
    }
    if let Err(ds) = verdict() {
        let _ = fs::remove_dir_all(&tmp);
        return Err(ds);
    }
    let old = if out.exists() {
        let old = sibling(out, "old").map_err(|d| vec![d])?;
        if let Err(e) = fs::rename(out, &old) {
            let _ = fs::remove_dir_all(&tmp);
            return Err(vec![io_diag("cannot move aside", out, &e)]);
        }
        Some(old)
    } else {
        None
    };
    if let Err(e) = fs::rename(&tmp, out) {
        let _ = fs::remove_dir_all(&tmp);
        if let Some(old) = &old {
            let _ = fs::rename(old, out);
        }
        return Err(vec![io_diag("cannot move the project into", out, &e)]);
    }
    if let Some(old) = old {
        let _ = fs::remove_dir_all(old);
    }
    Ok(())
}

svc_ir::diagnostic_codes! {
    /// --out names an existing file, not a directory.
    ///
    /// The project is written to the folder `--out`; an existing file there is never replaced, with or without `--force`.
    ///
    /// Choose another `--out` path.
    ///
    /// # Example
    ///
    /// ```sh
    /// svc compile app.graph.json --out README.md
    /// ```
    ///
    /// # Fix
    ///
    /// ```sh
    /// svc compile app.graph.json --out build/app
    /// ```
    pub OUT_NOT_DIRECTORY = "out-not-directory", group "cli";

    /// --out is a directory that is not empty.
    ///
    /// A compile writes a complete project and does not merge it into existing files. An empty or new folder is written directly; a non-empty one is replaced only with `--force` (atomically, and only that folder).
    ///
    /// Pass `--force`, or choose an empty or new folder.
    ///
    /// # Example
    ///
    /// ```sh
    /// svc compile app.graph.json --out build/app   # build/app holds an earlier project
    /// ```
    ///
    /// # Fix
    ///
    /// ```sh
    /// svc compile app.graph.json --out build/app --force
    /// ```
    pub OUT_NOT_EMPTY = "out-not-empty", group "cli";

    /// --force would replace the current directory, one of its parents, or the root.
    ///
    /// `--force` replaces exactly the `--out` folder. When that folder holds the current directory (`--out .`, `--out ..`) or is the file system root, a typo would wipe far more than a generated project, so it is refused.
    ///
    /// Point `--out` at the project folder itself, for example `--out build/my-service`.
    ///
    /// # Example
    ///
    /// ```sh
    /// svc compile app.graph.json --out . --force
    /// ```
    ///
    /// # Fix
    ///
    /// ```sh
    /// svc compile app.graph.json --out build/app --force
    /// ```
    pub OUT_UNSAFE = "out-unsafe", group "cli";
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(path: &str, text: &str) -> ProjectFile {
        ProjectFile {
            path: path.into(),
            contents: text.as_bytes().to_vec(),
            executable: false,
        }
    }

    fn leftovers(dir: &Path) -> Vec<String> {
        fs::read_dir(dir)
            .expect("read")
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.contains(".svc-"))
            .collect()
    }

    #[test]
    fn writes_refuses_and_replaces() {
        let base = tempfile::tempdir().expect("tempdir");
        let out = base.path().join("proj");
        write_project(&out, &[file("a/b.txt", "1")], false).expect("first write");
        assert_eq!(fs::read_to_string(out.join("a/b.txt")).expect("read"), "1");

        let err = write_project(&out, &[file("c.txt", "2")], false).expect_err("non-empty");
        assert_eq!(err.code, "out-not-empty");
        assert!(!out.join("c.txt").exists());

        write_project(&out, &[file("c.txt", "2")], true).expect("forced");
        assert!(out.join("c.txt").exists());
        assert!(
            !out.join("a").exists(),
            "--force replaces the whole directory"
        );
        assert!(
            leftovers(base.path()).is_empty(),
            "{:?}",
            leftovers(base.path())
        );
    }

    #[test]
    fn a_failed_write_leaves_nothing_and_keeps_the_old_tree() {
        let base = tempfile::tempdir().expect("tempdir");
        let out = base.path().join("proj");
        write_project(&out, &[file("keep.txt", "old")], false).expect("write");
        // A file and a directory of the same name cannot both be written.
        let bad = [file("x", "1"), file("x/y", "2")];
        assert!(write_project(&out, &bad, true).is_err());
        assert_eq!(
            fs::read_to_string(out.join("keep.txt")).expect("kept"),
            "old"
        );
        assert!(leftovers(base.path()).is_empty());

        let fresh = base.path().join("fresh");
        assert!(write_project(&fresh, &bad, false).is_err());
        assert!(!fresh.exists());
        assert!(leftovers(base.path()).is_empty());
    }

    #[test]
    fn a_failed_verdict_removes_what_was_written_and_keeps_the_old_tree() {
        let base = tempfile::tempdir().expect("tempdir");
        let out = base.path().join("proj");
        write_project(&out, &[file("keep.txt", "old")], false).expect("write");
        let refused = || {
            Err(vec![Diagnostic::error(
                &svc_ir::codes::IO,
                "the late check failed",
            )])
        };
        let mut asked = false;
        let err = write_project_checked(&out, &[file("new.txt", "new")], true, || {
            // Asked once every file is written, before anything moves.
            asked = true;
            assert!(!out.join("new.txt").exists());
            assert_eq!(leftovers(base.path()).len(), 1);
            refused()
        })
        .expect_err("refused");
        assert!(asked);
        assert_eq!(err[0].message, "the late check failed");
        assert_eq!(
            fs::read_to_string(out.join("keep.txt")).expect("kept"),
            "old"
        );
        assert!(!out.join("new.txt").exists());
        assert!(leftovers(base.path()).is_empty());

        let fresh = base.path().join("fresh");
        assert!(write_project_checked(&fresh, &[file("a.txt", "1")], false, refused).is_err());
        assert!(!fresh.exists());
        assert!(leftovers(base.path()).is_empty());
        write_project_checked(&fresh, &[file("a.txt", "1")], false, || Ok(())).expect("passed");
        assert_eq!(
            fs::read_to_string(fresh.join("a.txt")).expect("written"),
            "1"
        );
    }

    #[test]
    fn refuses_a_file_as_out_and_the_current_directory() {
        let base = tempfile::tempdir().expect("tempdir");
        let f = base.path().join("file");
        fs::write(&f, "x").expect("write");
        assert_eq!(
            check_out_dir(&f, true).expect_err("file").code,
            "out-not-directory"
        );
        let cwd = std::env::current_dir().expect("cwd");
        assert_eq!(
            check_out_dir(&cwd, true).expect_err("cwd").code,
            "out-unsafe"
        );
    }
}
