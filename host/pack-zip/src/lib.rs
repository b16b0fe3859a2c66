//! Reading and writing `.svc-pack.zip` plugin packs.
//!
//! Packs come from third parties, so [`read`] treats its input as hostile: every
//! offset and length is checked, sizes and compression ratios are limited before
//! anything is inflated, paths are validated, and nothing the input controls can make
//! it panic. [`write`] produces deterministic archives: the same entries always give
//! the same bytes.
//!
//! This is a deliberately small ZIP implementation: stored and deflate entries only,
//! no ZIP64, no encryption, no data descriptors, no multi-disk archives.
//!
//! # Why not the `zip` crate
//!
//! The reader was ported to `zip` 9.8.1 (`default-features = false`,
//! `features = ["deflate-flate2"]`) with every check here kept on top. All the tests
//! in `tests/hostile.rs` passed, but we went back to this reader for these measured
//! reasons:
//!
//! - **It lost a refusal.** Its local/central header check applies a local ZIP64
//!   extra field before comparing the two headers, and our code never sees the local
//!   header. So a ZIP64 local header (what Python's `zipfile` writes with
//!   `force_zip64=True`) was accepted. The test `zip64_local_header_is_refused` fails
//!   with the port and passes here. Keeping the refusal would mean parsing local
//!   headers by hand again.
//! - **It was not smaller.** `read.rs` went from 673 to 652 lines. The crate parses
//!   the whole central directory before it reports the entry count. It accepts ZIP64
//!   and looks for an archive behind prepended data. It collapses duplicate names
//!   into one entry and reports only `has_duplicate_names()`, and it does not say
//!   whether bytes are left over in the directory. So the port still had to parse
//!   the end record and walk the raw central directory itself, check the raw
//!   local-header signature (the crate only says "invalid local file header"), and
//!   guess from `io::ErrorKind` whether an over-long entry or corrupt data caused a
//!   read error. That means two parsers read the same hostile bytes and have to be
//!   cross-checked.
//! - **It costs a lot to build.** It added 13 crates to this crate's release build
//!   (13 → 26 units: `zip`, `indexmap`, `hashbrown`, `equivalent`, `memchr`,
//!   `typed-path`, `zeroize`, `zeroize_derive`, `syn` 2, `getrandom`, `libc`,
//!   `constant_time_eq`, `rustversion`) and 7 new packages to `Cargo.lock`. A clean
//!   `cargo build --release -p svc-pack-zip` took about 21 s of CPU instead of 7 s
//!   (2-core machine).
//! - **It was not faster.** Reading 2 MB packs built from `marketplace/` took 8.2 ms
//!   instead of 8.1 ms, a 39 MB pack 184 ms instead of 183 ms, and 2000 small entries
//!   11.9 ms instead of 10.6 ms.
//!
//! The port did refuse some things this reader accepts: local and central DOS times
//! that differ, malformed extended-timestamp extra fields, and Info-ZIP Unicode Path
//! extra fields (0x7075), which give an entry a second name. This reader ignores
//! extra fields and uses the header name.

pub mod codes;

use codes::{
    ZIP_COMPRESS, ZIP_CRC, ZIP_DUPLICATE, ZIP_MALFORMED, ZIP_RATIO, ZIP_SYMLINK, ZIP_TOO_LARGE,
    ZIP_TOO_MANY_ENTRIES, ZIP_UNSAFE_PATH, ZIP_UNSUPPORTED,
};
mod path;
pub use path::{check_path, MAX_PATH_BYTES};
mod read;
mod write;

/// Local file header signature (`PK\x03\x04`).
pub(crate) const LOCAL_SIG: u32 = 0x0403_4b50;
/// Fixed size of a local file header, without name and extra field.
pub(crate) const LOCAL_LEN: usize = 30;
/// Central directory file header signature (`PK\x01\x02`).
pub(crate) const CENTRAL_SIG: u32 = 0x0201_4b50;
/// Fixed size of a central directory file header, without name, extra field and comment.
pub(crate) const CENTRAL_LEN: usize = 46;
/// End of central directory record signature (`PK\x05\x06`).
pub(crate) const EOCD_SIG: u32 = 0x0605_4b50;
/// Fixed size of the end of central directory record, without comment.
pub(crate) const EOCD_LEN: usize = 22;
/// Compression method 0: stored.
pub(crate) const METHOD_STORED: u16 = 0;
/// Compression method 8: deflate.
pub(crate) const METHOD_DEFLATE: u16 = 8;
/// "Version made by" host system number for Unix.
pub(crate) const HOST_UNIX: u8 = 3;

/// Limits applied by [`read`] to a (possibly hostile) archive.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Most entries (directories included) the end of central directory record may declare.
    pub max_entries: usize,
    /// Most uncompressed bytes all entries together may hold.
    pub max_total_bytes: u64,
    /// Most uncompressed bytes a single entry may hold.
    pub max_entry_bytes: u64,
    /// Highest uncompressed/compressed ratio allowed, checked only for entries whose
    /// declared uncompressed size exceeds 1 MiB.
    pub max_ratio: u64,
}

impl Default for Limits {
    /// 4096 entries, 256 MiB in total, 64 MiB per entry, ratio 200.
    fn default() -> Self {
        Limits {
            max_entries: 4096,
            max_total_bytes: 256 << 20,
            max_entry_bytes: 64 << 20,
            max_ratio: 200,
        }
    }
}

/// One file of an archive: a safe relative `/`-separated path and its contents.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// Relative path inside the pack, `/`-separated (see the path rules on [`read`]).
    pub path: String,
    /// Uncompressed contents.
    pub data: Vec<u8>,
}

/// Why an archive could not be read or written.
///
/// Entry names in messages are printed escaped (`{:?}`), so a hostile name cannot
/// inject control characters into a terminal.
#[derive(Debug, thiserror::Error)]
pub enum ZipError {
    /// The archive structure is broken: no end of central directory record, offsets
    /// or lengths out of range, bad signatures, headers that disagree, data that does
    /// not inflate to its declared size. Code `zip-malformed`.
    #[error("{}malformed ZIP archive: {reason}", at(.entry))]
    Malformed {
        /// The entry concerned, if the problem is specific to one.
        entry: Option<String>,
        /// What is wrong.
        reason: String,
    },
    /// A ZIP feature this reader does not accept: ZIP64, encryption, data
    /// descriptors, compression methods other than stored and deflate, multi-disk
    /// archives. Code `zip-unsupported`.
    #[error("{}unsupported ZIP feature: {reason}", at(.entry))]
    Unsupported {
        /// The entry concerned, if the problem is specific to one.
        entry: Option<String>,
        /// What is not supported.
        reason: String,
    },
    /// An entry path breaks one of the path rules. Code `zip-unsafe-path`.
    #[error("entry {entry:?}: unsafe path: {rule}")]
    UnsafePath {
        /// The path as found (lossily decoded if it is not UTF-8).
        entry: String,
        /// The rule it breaks.
        rule: &'static str,
    },
    /// The same path appears twice. Code `zip-duplicate`.
    #[error("entry {entry:?}: duplicate entry, the same path appears more than once")]
    Duplicate {
        /// The repeated path.
        entry: String,
    },
    /// A symbolic link or another non-regular file (device, FIFO, socket).
    /// Code `zip-symlink`.
    #[error("entry {entry:?}: is a {kind}; only regular files and directories are allowed")]
    Symlink {
        /// The entry path.
        entry: String,
        /// What kind of file it is, e.g. `symbolic link`.
        kind: &'static str,
    },
    /// The archive declares more entries than [`Limits::max_entries`].
    /// Code `zip-too-many-entries`.
    #[error("archive declares {count} entries, more than the limit of {max}")]
    TooManyEntries {
        /// Entries declared by the end of central directory record.
        count: u64,
        /// The limit.
        max: usize,
    },
    /// An entry, or all entries together, exceed the size limits.
    /// Code `zip-too-large`.
    #[error("entry {entry:?}: too large: {reason}")]
    TooLarge {
        /// The entry that is too large, or that takes the total over the limit.
        entry: String,
        /// Which limit is exceeded.
        reason: String,
    },
    /// An entry's compression ratio exceeds [`Limits::max_ratio`] (a likely
    /// decompression bomb). Code `zip-ratio`.
    #[error(
        "entry {entry:?}: compression ratio over the limit of {max}: \
         {uncompressed} bytes from {compressed} compressed bytes"
    )]
    Ratio {
        /// The entry path.
        entry: String,
        /// Declared compressed size.
        compressed: u64,
        /// Declared uncompressed size.
        uncompressed: u64,
        /// The limit.
        max: u64,
    },
    /// An entry's contents do not match its CRC-32. Code `zip-crc`.
    #[error(
        "entry {entry:?}: CRC-32 mismatch: header says {expected:#010x}, data has {actual:#010x}"
    )]
    Crc {
        /// The entry path.
        entry: String,
        /// CRC-32 recorded in the archive.
        expected: u32,
        /// CRC-32 of the inflated contents.
        actual: u32,
    },
    /// [`write`] could not compress an entry (not expected to happen in practice).
    /// Code `zip-compress`.
    #[error("entry {entry:?}: compression failed: {reason}")]
    Compress {
        /// The entry path.
        entry: String,
        /// The compressor's error.
        reason: String,
    },
}

impl ZipError {
    /// Stable kebab-case code for this error, e.g. `zip-unsafe-path`.
    pub fn code(&self) -> &'static svc_ir::codes::Code {
        match self {
            ZipError::Malformed { .. } => &ZIP_MALFORMED,
            ZipError::Unsupported { .. } => &ZIP_UNSUPPORTED,
            ZipError::UnsafePath { .. } => &ZIP_UNSAFE_PATH,
            ZipError::Duplicate { .. } => &ZIP_DUPLICATE,
            ZipError::Symlink { .. } => &ZIP_SYMLINK,
            ZipError::TooManyEntries { .. } => &ZIP_TOO_MANY_ENTRIES,
            ZipError::TooLarge { .. } => &ZIP_TOO_LARGE,
            ZipError::Ratio { .. } => &ZIP_RATIO,
            ZipError::Crc { .. } => &ZIP_CRC,
            ZipError::Compress { .. } => &ZIP_COMPRESS,
        }
    }
}

/// Message prefix naming the entry, if any.
fn at(entry: &Option<String>) -> String {
    match entry {
        Some(entry) => format!("entry {entry:?}: "),
        None => String::new(),
    }
}

/// Writes a deterministic archive.
///
/// Entries are sorted by path (bytewise) and deflated at level 9 (stored if deflate
/// is not smaller); DOS time and date are fixed at 1980-01-01 00:00, "version made
/// by" is Unix (3) with external attributes `0o100644 << 16`; there are no extra
/// fields, no comments and no directory entries. The same entries, in any order,
/// give byte-identical output.
///
/// Returns an error if two entries share a path, a path breaks the rules of
/// [`read`], or the archive would need ZIP64 (over 65535 entries or 4 GiB).
pub fn write(entries: &[Entry]) -> Result<Vec<u8>, ZipError> {
    write::write(entries)
}

/// Reads and fully checks an archive held in memory.
///
/// Returns the regular files in central directory order; directory entries (names
/// ending in `/`) are checked and then skipped. Paths must be relative, valid UTF-8
/// and `/`-separated, with no `..` or `.` components, empty components, backslashes,
/// NUL bytes or other control characters, or Windows drive prefixes. Symbolic links
/// and other special files, duplicate paths, ZIP64, encryption, data descriptors,
/// overlapping entries and compression methods other than stored and deflate are
/// refused, and `limits` bound the entry count, sizes and compression ratios before
/// anything is inflated. Every CRC-32 is checked.
pub fn read(bytes: &[u8], limits: &Limits) -> Result<Vec<Entry>, ZipError> {
    read::read(bytes, limits)
}
