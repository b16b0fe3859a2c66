//! The diagnostic codes this crate reports, declared beside the rules that
//! raise them (see `svc_ir::codes`), gathered for other crates and for the
//! generated pages of `docs/diagnostics/`.

/// Every code this crate declares.
pub fn all() -> Vec<&'static svc_ir::codes::Code> {
    [CODES].concat()
}

svc_ir::diagnostic_codes! {
    /// An entry could not be compressed while writing a pack.
    ///
    /// `svc pack` deflates every entry with the ZIP writer, whose compression error carries this code. The compressor failing is not expected in practice. `svc pack` reports every failure of the ZIP writer as `pack-write` (the message keeps the writer's text), so this code is not shown on its own today.
    ///
    /// Retry; report it if it persists.
    ///
    /// # Example
    ///
    /// ```sh
    /// svc pack
    /// # error[pack-write]: cannot write the archive: entry "connector.wasm": compression failed: …
    /// ```
    ///
    /// # Fix
    ///
    /// Retry `svc pack`; report the error if it repeats.
    pub ZIP_COMPRESS = "zip-compress", group "archive";

    /// A pack entry's contents do not match its CRC-32.
    ///
    /// Every entry's inflated contents are checked against the CRC-32 in the archive. A mismatch means the pack is damaged.
    ///
    /// Get the pack again from its publisher.
    ///
    /// # Example
    ///
    /// A pack with a flipped byte in `connector.wasm`:
    ///
    /// ```sh
    /// svc compile app.graph.json --out build/app --plugins ./damaged.svc-pack.zip
    /// ```
    ///
    /// # Fix
    ///
    /// Download the pack again, or rebuild it with `svc pack`.
    pub ZIP_CRC = "zip-crc", group "archive";

    /// The same path appears twice in a pack.
    ///
    /// Two entries at one path would let a pack show one file when checked and another when used, so duplicates are refused.
    ///
    /// Get the pack again, or rebuild it with `svc pack` (which never writes duplicates).
    ///
    /// # Example
    ///
    /// A hand-made ZIP with `templates/go/x.go` added twice.
    ///
    /// # Fix
    ///
    /// ```sh
    /// svc pack --root my-connector
    /// ```
    pub ZIP_DUPLICATE = "zip-duplicate", group "archive";

    /// A pack's ZIP structure is broken.
    ///
    /// Packs are read as hostile input. No end-of-central-directory record, offsets or lengths out of range, bad signatures, local and central headers that disagree, overlapping entries, or data that does not inflate to its declared size all mean the file is not a well-formed ZIP.
    ///
    /// Get the pack again from its publisher.
    ///
    /// # Example
    ///
    /// A truncated download:
    ///
    /// ```sh
    /// head -c 1000 webhook-0.1.0.svc-pack.zip > cut.svc-pack.zip
    /// svc compile app.graph.json --out build/app --plugins ./cut.svc-pack.zip
    /// ```
    ///
    /// # Fix
    ///
    /// Download the pack again.
    pub ZIP_MALFORMED = "zip-malformed", group "archive";

    /// A pack entry's compression ratio exceeds the limit (a likely ZIP bomb).
    ///
    /// For entries declared larger than 1 MiB, the ratio of uncompressed to compressed size may be at most 200. Higher ratios are the mark of decompression bombs and are refused before anything is inflated.
    ///
    /// Packs made by `svc pack` stay far below the limit; do not use this pack.
    ///
    /// # Example
    ///
    /// A pack holding 100 MiB of zeros compressed to a few kilobytes.
    ///
    /// # Fix
    ///
    /// Do not use the pack; rebuild it from its project with `svc pack`.
    pub ZIP_RATIO = "zip-ratio", group "archive";

    /// A pack entry is a symbolic link or another non-regular file.
    ///
    /// Packs may hold only regular files and directories. A link (or device, FIFO, socket) could point outside the pack when used.
    ///
    /// Get the pack again; `svc pack` never writes links.
    ///
    /// # Example
    ///
    /// ```sh
    /// ln -s /etc/passwd templates/go/passwd && zip --symlinks bad.svc-pack.zip templates/go/passwd
    /// ```
    ///
    /// # Fix
    ///
    /// ```sh
    /// svc pack --root my-connector
    /// ```
    pub ZIP_SYMLINK = "zip-symlink", group "archive";

    /// A pack file, one of its entries, or all entries together exceed the size limits.
    ///
    /// A pack file may be at most 300 MiB; inside, an entry may inflate to at most 64 MiB and all entries together to 256 MiB. The limits are checked before inflating, so a hostile pack cannot exhaust memory.
    ///
    /// A pack holds one connector component and its templates; one this large is not a pack.
    ///
    /// # Example
    ///
    /// ```sh
    /// svc compile app.graph.json --out build/app --plugins ./big.svc-pack.zip
    /// # error[zip-too-large]: pack `./big.svc-pack.zip` is 400000000 bytes, over the limit of 314572800
    /// ```
    ///
    /// # Fix
    ///
    /// Keep large assets out of the pack; ship only the component and templates.
    pub ZIP_TOO_LARGE = "zip-too-large", group "archive";

    /// A pack declares more entries than the limit (4096).
    ///
    /// The entry count is checked before anything is read, so a hostile pack cannot make svc allocate for millions of entries.
    ///
    /// Keep packs to the component, templates and example; do not use this pack.
    ///
    /// # Example
    ///
    /// A ZIP declaring 100,000 entries.
    ///
    /// # Fix
    ///
    /// Rebuild the pack from its project with `svc pack`.
    pub ZIP_TOO_MANY_ENTRIES = "zip-too-many-entries", group "archive";

    /// A pack entry's path breaks the path rules (absolute, `..`, backslashes...).
    ///
    /// Entry paths must be relative, UTF-8 and `/`-separated, with no `..` or `.` components (`..` would climb out of the folder it is extracted to, a zip-slip), no empty components, backslashes, NUL or other control characters, and no drive prefixes. The message names the rule.
    ///
    /// Get the pack again; `svc pack` writes only safe paths.
    ///
    /// # Example
    ///
    /// A ZIP with an entry named `../evil.txt`.
    ///
    /// # Fix
    ///
    /// ```sh
    /// svc pack --root my-connector
    /// ```
    pub ZIP_UNSAFE_PATH = "zip-unsafe-path", group "archive";

    /// A pack uses a ZIP feature this reader does not accept.
    ///
    /// The pack reader is deliberately small: stored and deflate entries only, no ZIP64, encryption, data descriptors or multi-disk archives. Archives made by other tools with those features are refused.
    ///
    /// Build packs with `svc pack`.
    ///
    /// # Example
    ///
    /// ```sh
    /// zip -e secret.svc-pack.zip connector.wasm svc-pack.json   # encrypted
    /// ```
    ///
    /// # Fix
    ///
    /// ```sh
    /// svc pack --root my-connector
    /// ```
    pub ZIP_UNSUPPORTED = "zip-unsupported", group "archive";
}
