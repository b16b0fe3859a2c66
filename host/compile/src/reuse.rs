//! Projects `svc compile` made before, kept in the cache directory by the
//! sha256 of everything they were made from, so compiling an unchanged
//! document again writes the same project without starting the engine,
//! loading a backend or emitting (the checks are functions of those inputs,
//! so their verdict is the one the kept project already passed).
//!
//! The caller names every input in the [`Key`] (the document's path and
//! text, the options, the limits, the packs, the running executable), and
//! [`crate::Compile::keep`] keeps the project. Only successful compiles are
//! kept, and only of documents that name no other file
//! ([`Generated::reads_files`]); anything else compiles every time.
//!
//! An entry is one file, `projects/<key>.project`: a line `svc-project 2`,
//! a line with the CRC-32 of the rest, one line of JSON (what `svc compile`
//! reports, and each file's path, size and mode), then the files' bytes back
//! to back, so a hit is one read and no decoding of the contents. Entries
//! are written to a temporary file and renamed. A damaged entry (cut short,
//! or blocks lost in a crash before the file system wrote them: the
//! checksum; a CRC rather than a sha256 because the cache is the user's own,
//! as trusted as the compiled components beside it, and only accidents need
//! catching) is removed and counts as a miss; so does one whose paths fail
//! the check every emitted path passes (`check::paths`). The directory keeps the 32 most
//! recently used entries of at most 8 MiB each (a 10,000-node graph's
//! project is 6 MiB); it is cut back to them once it holds 8 more, so most
//! stores read no entry's times.

use std::fs;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use svc_ir::Diagnostic;

use crate::{Generated, ProjectFile};

const MAGIC: &[u8] = b"svc-project 2\n";
const MAX_ENTRIES: usize = 32;
/// How many entries past [`MAX_ENTRIES`] wait for the next cut.
const SLACK: usize = 8;
const MAX_ENTRY_BYTES: usize = 8 * 1024 * 1024;

/// The digest of a compile's inputs, fed part by part.
pub struct Key(Sha256);

impl Default for Key {
    fn default() -> Self {
        Key(Sha256::new_with_prefix(MAGIC))
    }
}

impl Key {
    /// Adds one named input. Names and values are length-prefixed, so no two
    /// different sequences of parts give the same bytes.
    pub fn part(&mut self, name: &str, value: &[u8]) -> &mut Self {
        for bytes in [name.as_bytes(), value] {
            self.0.update((bytes.len() as u64).to_le_bytes());
            self.0.update(bytes);
        }
        self
    }

    pub fn finish(self) -> String {
        self.0
            .finalize()
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    }
}

/// What a compile made, as `svc compile` reports and writes it.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Made {
    pub platform: String,
    pub document_id: String,
    pub backend: String,
    pub backend_version: String,
    pub warnings: Vec<Diagnostic>,
    /// What the backend printed (shown with `--verbose`).
    pub plugin_output: String,
    #[serde(skip)]
    pub files: Vec<ProjectFile>,
}

impl From<Generated> for Made {
    fn from(g: Generated) -> Self {
        Made {
            platform: g.platform,
            document_id: g.document_id,
            backend: g.info.name,
            backend_version: g.info.version,
            warnings: g.warnings,
            plugin_output: g.plugin_output,
            files: g.files,
        }
    }
}

/// What [`Made`] reads back, borrowed from the project just made.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Making<'a> {
    platform: &'a str,
    document_id: &'a str,
    backend: &'a str,
    backend_version: &'a str,
    warnings: &'a [Diagnostic],
    plugin_output: &'a str,
}

/// The header line of an entry: written from a [`Making`], read back as a
/// `Made` (the files are not serialized).
#[derive(Serialize, Deserialize)]
struct Header<M> {
    made: M,
    files: Vec<FileEntry>,
}

#[derive(Serialize, Deserialize)]
struct FileEntry {
    path: String,
    size: usize,
    executable: bool,
}

/// The kept projects in one directory.
pub struct Shelf {
    dir: PathBuf,
}

impl Shelf {
    pub fn new(dir: PathBuf) -> Self {
        Shelf { dir }
    }

    fn entry(&self, key: &str) -> PathBuf {
        self.dir.join(format!("{key}.project"))
    }

    /// The project kept under `key`, if there is a sound one (and it is
    /// marked as just used).
    pub fn load(&self, key: &str) -> Option<Made> {
        let path = self.entry(key);
        let mut bytes = Vec::new();
        fs::File::open(&path).ok()?.read_to_end(&mut bytes).ok()?;
        let Some(made) = decode(&bytes) else {
            let _ = fs::remove_file(&path);
            return None;
        };
        // Least recently used goes first when the shelf is full (a cache
        // that cannot be written is still read).
        if let Ok(file) = fs::OpenOptions::new().write(true).open(&path) {
            let _ = file.set_modified(SystemTime::now());
        }
        Some(made)
    }

    /// Keeps `generated` under `key`, then drops the least recently used
    /// entries beyond the shelf's limits.
    pub fn store(&self, key: &str, generated: &Generated) -> Result<(), String> {
        let bytes = encode(generated).map_err(|e| e.to_string())?;
        if bytes.len() > MAX_ENTRY_BYTES {
            return Ok(());
        }
        fs::create_dir_all(&self.dir).map_err(|e| e.to_string())?;
        let mut tmp = tempfile::Builder::new()
            .prefix(".entry-")
            .suffix(".tmp")
            .tempfile_in(&self.dir)
            .map_err(|e| e.to_string())?;
        tmp.write_all(&bytes).map_err(|e| e.to_string())?;
        tmp.persist(self.entry(key))
            .map_err(|e| e.error.to_string())?;
        prune(&self.dir);
        Ok(())
    }
}

fn encode(generated: &Generated) -> serde_json::Result<Vec<u8>> {
    let header = Header {
        made: Making {
            platform: &generated.platform,
            document_id: &generated.document_id,
            backend: &generated.info.name,
            backend_version: &generated.info.version,
            warnings: &generated.warnings,
            plugin_output: &generated.plugin_output,
        },
        files: generated
            .files
            .iter()
            .map(|f| FileEntry {
                path: f.path.clone(),
                size: f.contents.len(),
                executable: f.executable,
            })
            .collect(),
    };
    // Compact JSON escapes every newline inside strings: the header is
    // exactly one line.
    let mut body = serde_json::to_vec(&header)?;
    body.push(b'\n');
    for f in &generated.files {
        body.extend_from_slice(&f.contents);
    }
    let mut out = MAGIC.to_vec();
    out.extend_from_slice(format!("{:08x}\n", crc32fast::hash(&body)).as_bytes());
    out.extend_from_slice(&body);
    Ok(out)
}

fn decode(bytes: &[u8]) -> Option<Made> {
    let rest = bytes.strip_prefix(MAGIC)?;
    let (crc, rest) = (rest.get(..8)?, rest.get(9..)?);
    let crc = u32::from_str_radix(std::str::from_utf8(crc).ok()?, 16).ok()?;
    if crc32fast::hash(rest) != crc {
        return None;
    }
    let end = rest.iter().position(|&b| b == b'\n')?;
    let header: Header<Made> = serde_json::from_slice(&rest[..end]).ok()?;
    let mut contents = &rest[end + 1..];
    let mut made = header.made;
    for f in header.files {
        if f.size > contents.len() {
            return None;
        }
        let (these, more) = contents.split_at(f.size);
        made.files.push(ProjectFile {
            path: f.path,
            contents: these.to_vec(),
            executable: f.executable,
        });
        contents = more;
    }
    // The emitted paths, checked as they were when emitted, and the
    // manifest the host added.
    let (manifests, emitted): (Vec<&str>, Vec<&str>) = made
        .files
        .iter()
        .map(|f| f.path.as_str())
        .partition(|p| *p == crate::check::MANIFEST);
    let sound = contents.is_empty()
        && manifests.len() <= 1
        && crate::check::paths(&made.backend, &emitted).is_empty();
    sound.then_some(made)
}

/// Once more than [`MAX_ENTRIES`] + [`SLACK`] entries are kept, removes the
/// least recently used beyond [`MAX_ENTRIES`]. (Names are listed first: the
/// entries' times are read only when some must go.)
fn prune(dir: &Path) {
    let Ok(listing) = fs::read_dir(dir) else {
        return;
    };
    let (entries, temporary): (Vec<PathBuf>, Vec<PathBuf>) = listing
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "project" || x == "tmp"))
        .partition(|p| p.extension().is_some_and(|x| x == "project"));
    // What a writer killed mid-store left behind (a live one is younger).
    for tmp in temporary {
        let stale = fs::metadata(&tmp)
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.elapsed().ok())
            .is_some_and(|age| age > std::time::Duration::from_secs(600));
        if stale {
            let _ = fs::remove_file(&tmp);
        }
    }
    if entries.len() <= MAX_ENTRIES + SLACK {
        return;
    }
    let mut by_use: Vec<(SystemTime, PathBuf)> = entries
        .into_iter()
        .filter_map(|p| Some((fs::metadata(&p).ok()?.modified().ok()?, p)))
        .collect();
    by_use.sort_by_key(|(used, _)| std::cmp::Reverse(*used));
    for (_, path) in by_use.iter().skip(MAX_ENTRIES) {
        let _ = fs::remove_file(path);
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // test code
    use super::*;

    fn project() -> Generated {
        Generated {
            platform: "go".into(),
            document_id: "doc".into(),
            info: svc_runtime::BackendInfo {
                platform: "go".into(),
                name: "svc-backend-go".into(),
                version: "1.0.0".into(),
                ir_versions: ">=2.0.0, <3.0.0".into(),
                capabilities: svc_runtime::Capabilities {
                    node_kinds: Vec::new(),
                    tool_kinds: Vec::new(),
                    transports: Vec::new(),
                    auth: Vec::new(),
                    features: Vec::new(),
                    reasons: Vec::new(),
                },
                commands: svc_runtime::BuildCommands {
                    setup: String::new(),
                    test: String::new(),
                    build: String::new(),
                    run: String::new(),
                },
            },
            warnings: vec![
                Diagnostic::warning(&svc_ir::codes::UNSUPPORTED, "line one\nline two")
                    .at("/logical/nodes/1")
                    .node("n1"),
            ],
            plugin_output: "printed\n".into(),
            files: vec![
                ProjectFile {
                    path: "main.go".into(),
                    contents: b"package main\n\nfunc main() {}\n".to_vec(),
                    executable: false,
                },
                ProjectFile {
                    path: crate::check::MANIFEST.into(),
                    contents: b"{}\n".to_vec(),
                    executable: false,
                },
                ProjectFile {
                    path: "empty".into(),
                    contents: Vec::new(),
                    executable: false,
                },
                ProjectFile {
                    path: "run.sh".into(),
                    contents: vec![0, 159, 146, 150, b'\n'],
                    executable: true,
                },
            ],
            reads_files: false,
            kept: None,
        }
    }

    #[test]
    fn a_kept_project_comes_back_whole() {
        let dir = tempfile::tempdir().unwrap();
        let shelf = Shelf::new(dir.path().join("projects"));
        assert!(shelf.load("k").is_none());
        shelf.store("k", &project()).unwrap();
        let back = shelf.load("k").unwrap();
        let want = project();
        assert_eq!(back.warnings, want.warnings);
        assert_eq!(back.plugin_output, want.plugin_output);
        assert_eq!(
            (
                back.platform,
                back.document_id,
                back.backend,
                back.backend_version
            ),
            (
                want.platform,
                want.document_id,
                want.info.name,
                want.info.version
            )
        );
        let files = |m: &[ProjectFile]| {
            m.iter()
                .map(|f| (f.path.clone(), f.contents.clone(), f.executable))
                .collect::<Vec<_>>()
        };
        assert_eq!(files(&back.files), files(&want.files));
    }

    #[test]
    fn a_damaged_entry_is_a_miss() {
        let dir = tempfile::tempdir().unwrap();
        let shelf = Shelf::new(dir.path().to_path_buf());
        shelf.store("k", &project()).unwrap();
        let path = shelf.entry("k");
        let whole = fs::read(&path).unwrap();
        for cut in [0, MAGIC.len(), whole.len() - 1] {
            fs::write(&path, &whole[..cut]).unwrap();
            assert!(shelf.load("k").is_none(), "cut at {cut}");
        }
        let mut longer = whole.clone();
        longer.push(b'x');
        fs::write(&path, longer).unwrap();
        assert!(shelf.load("k").is_none());
        // A block of zeros where the files were, the length unchanged.
        let mut zeroed = whole.clone();
        let n = zeroed.len();
        zeroed[n - 20..n - 4].fill(0);
        fs::write(&path, zeroed).unwrap();
        assert!(shelf.load("k").is_none());
        assert!(!path.exists(), "a damaged entry is removed");
        fs::write(&path, &whole).unwrap();
        assert!(shelf.load("k").is_some());
    }

    #[test]
    fn an_entry_whose_paths_leave_the_project_is_a_miss() {
        let dir = tempfile::tempdir().unwrap();
        let shelf = Shelf::new(dir.path().to_path_buf());
        let mut bad = project();
        bad.files[0].path = "../outside.go".into();
        shelf.store("k", &bad).unwrap();
        assert!(shelf.load("k").is_none());
    }

    #[test]
    fn keys_differ_by_name_value_and_split() {
        let key = |parts: &[(&str, &str)]| {
            let mut k = Key::default();
            for (n, v) in parts {
                k.part(n, v.as_bytes());
            }
            k.finish()
        };
        let base = key(&[("a", "bc")]);
        assert_eq!(base, key(&[("a", "bc")]));
        assert_ne!(base, key(&[("a", "bd")]));
        assert_ne!(base, key(&[("b", "bc")]));
        assert_ne!(base, key(&[("ab", "c")]));
        assert_ne!(base, key(&[("a", "b"), ("c", "")]));
    }

    #[test]
    fn the_shelf_keeps_the_most_recently_used() {
        let dir = tempfile::tempdir().unwrap();
        let shelf = Shelf::new(dir.path().to_path_buf());
        for i in 0..MAX_ENTRIES + SLACK {
            shelf.store(&format!("k{i}"), &project()).unwrap();
            // Distinct modification times, oldest first.
            let then = SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_000 + i as u64);
            fs::File::options()
                .write(true)
                .open(shelf.entry(&format!("k{i}")))
                .unwrap()
                .set_modified(then)
                .unwrap();
        }
        assert_eq!(
            fs::read_dir(dir.path()).unwrap().count(),
            MAX_ENTRIES + SLACK
        );
        // k0 is used again: it is now the most recent.
        assert!(shelf.load("k0").is_some());
        shelf.store("last", &project()).unwrap();
        let kept = fs::read_dir(dir.path()).unwrap().count();
        assert_eq!(kept, MAX_ENTRIES);
        assert!(shelf.load("k0").is_some());
        assert!(shelf.load("last").is_some());
        for gone in 1..=SLACK + 1 {
            assert!(
                shelf.load(&format!("k{gone}")).is_none(),
                "k{gone}: the least recently used go"
            );
        }
        assert!(shelf.load(&format!("k{}", SLACK + 2)).is_some());
    }
}
