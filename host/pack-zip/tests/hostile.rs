#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)]
//! Round trips of `write`/`read` and a hostile archive for every refusal of `read`.

use std::io::Write;

use flate2::write::DeflateEncoder;
use flate2::Compression;
use svc_pack_zip::{read, write, Entry, Limits, ZipError};

// ---------------------------------------------------------------------------------
// A test-only archive crafter: every field can be set freely, including to lies.
// ---------------------------------------------------------------------------------

const UNIX: u16 = 3 << 8 | 20;
const REGULAR: u32 = 0o100_644 << 16;

/// One entry as it will be written, byte by byte.
#[derive(Clone)]
struct Raw {
    name: Vec<u8>,
    /// Name in the local header, if it should differ from the central directory.
    local_name: Option<Vec<u8>>,
    made_by: u16,
    flags: u16,
    method: u16,
    local_method: Option<u16>,
    crc: u32,
    compressed: u32,
    uncompressed: u32,
    /// (compressed, uncompressed) in the local header, if they should differ.
    local_sizes: Option<(u32, u32)>,
    /// Extra field of the local header (the central one has none).
    local_extra: Vec<u8>,
    external: u32,
    /// The bytes stored after the local header.
    data: Vec<u8>,
    /// Write no local header or data; the central directory points at `offset`.
    central_only_at: Option<u32>,
}

impl Raw {
    fn stored(name: &str, content: &[u8]) -> Raw {
        Raw {
            name: name.as_bytes().to_vec(),
            local_name: None,
            made_by: UNIX,
            flags: 0,
            method: 0,
            local_method: None,
            crc: crc32fast::hash(content),
            compressed: len32(content),
            uncompressed: len32(content),
            local_sizes: None,
            local_extra: Vec::new(),
            external: REGULAR,
            data: content.to_vec(),
            central_only_at: None,
        }
    }

    fn deflated(name: &str, content: &[u8]) -> Raw {
        let data = deflate(content);
        Raw {
            method: 8,
            compressed: len32(&data),
            data,
            ..Raw::stored(name, content)
        }
    }

    fn name_bytes(mut self, name: &[u8]) -> Raw {
        self.name = name.to_vec();
        self
    }
}

/// A whole archive, with overrides for the end of central directory record.
struct Archive {
    entries: Vec<Raw>,
    /// Entry count written in the end of central directory record.
    count: Option<u16>,
    /// Put a ZIP64 end of central directory locator before the record.
    zip64_locator: bool,
}

impl Archive {
    fn new(entries: Vec<Raw>) -> Archive {
        Archive {
            entries,
            count: None,
            zip64_locator: false,
        }
    }

    fn build(&self) -> Vec<u8> {
        let mut out = Vec::new();
        let mut central = Vec::new();
        for raw in &self.entries {
            let offset = raw.central_only_at.unwrap_or(len32(&out));
            let local_name = raw.local_name.as_ref().unwrap_or(&raw.name);
            let (local_compressed, local_uncompressed) = raw
                .local_sizes
                .unwrap_or((raw.compressed, raw.uncompressed));
            let mut local = Vec::new();
            local.extend_from_slice(&0x0403_4b50u32.to_le_bytes());
            local.extend_from_slice(&20u16.to_le_bytes());
            local.extend_from_slice(&raw.flags.to_le_bytes());
            local.extend_from_slice(&raw.local_method.unwrap_or(raw.method).to_le_bytes());
            local.extend_from_slice(&0u16.to_le_bytes());
            local.extend_from_slice(&0x21u16.to_le_bytes());
            local.extend_from_slice(&raw.crc.to_le_bytes());
            local.extend_from_slice(&local_compressed.to_le_bytes());
            local.extend_from_slice(&local_uncompressed.to_le_bytes());
            local.extend_from_slice(&len16(local_name).to_le_bytes());
            local.extend_from_slice(&len16(&raw.local_extra).to_le_bytes());
            local.extend_from_slice(local_name);
            local.extend_from_slice(&raw.local_extra);
            local.extend_from_slice(&raw.data);
            if raw.central_only_at.is_none() {
                out.extend_from_slice(&local);
            }

            central.extend_from_slice(&0x0201_4b50u32.to_le_bytes());
            central.extend_from_slice(&raw.made_by.to_le_bytes());
            central.extend_from_slice(&20u16.to_le_bytes());
            central.extend_from_slice(&raw.flags.to_le_bytes());
            central.extend_from_slice(&raw.method.to_le_bytes());
            central.extend_from_slice(&0u16.to_le_bytes());
            central.extend_from_slice(&0x21u16.to_le_bytes());
            central.extend_from_slice(&raw.crc.to_le_bytes());
            central.extend_from_slice(&raw.compressed.to_le_bytes());
            central.extend_from_slice(&raw.uncompressed.to_le_bytes());
            central.extend_from_slice(&len16(&raw.name).to_le_bytes());
            central.extend_from_slice(&[0; 8]); // extra, comment, disk, internal attributes
            central.extend_from_slice(&raw.external.to_le_bytes());
            central.extend_from_slice(&offset.to_le_bytes());
            central.extend_from_slice(&raw.name);
        }
        let directory_offset = len32(&out);
        let directory_size = len32(&central);
        out.extend_from_slice(&central);
        if self.zip64_locator {
            out.extend_from_slice(&0x0706_4b50u32.to_le_bytes());
            out.extend_from_slice(&[0; 16]);
        }
        let count = self.count.unwrap_or(len16(&self.entries));
        out.extend_from_slice(&0x0605_4b50u32.to_le_bytes());
        out.extend_from_slice(&[0; 4]);
        out.extend_from_slice(&count.to_le_bytes());
        out.extend_from_slice(&count.to_le_bytes());
        out.extend_from_slice(&directory_size.to_le_bytes());
        out.extend_from_slice(&directory_offset.to_le_bytes());
        out.extend_from_slice(&0u16.to_le_bytes());
        out
    }
}

fn craft(entries: Vec<Raw>) -> Vec<u8> {
    Archive::new(entries).build()
}

fn len32<T>(items: &[T]) -> u32 {
    u32::try_from(items.len()).unwrap()
}

fn len16<T>(items: &[T]) -> u16 {
    u16::try_from(items.len()).unwrap()
}

fn deflate(content: &[u8]) -> Vec<u8> {
    let mut encoder = DeflateEncoder::new(Vec::new(), Compression::best());
    encoder.write_all(content).unwrap();
    encoder.finish().unwrap()
}

fn entry(path: &str, data: &[u8]) -> Entry {
    Entry {
        path: path.to_owned(),
        data: data.to_vec(),
    }
}

/// Reads with default limits and expects the error `code`; returns the message.
fn refused(bytes: &[u8], code: &str) -> String {
    refused_with(bytes, &Limits::default(), code)
}

fn refused_with(bytes: &[u8], limits: &Limits, code: &str) -> String {
    match read(bytes, limits) {
        Ok(entries) => panic!(
            "expected {code}, read {} entries: {:?}",
            entries.len(),
            entries.iter().map(|e| &e.path).collect::<Vec<_>>()
        ),
        Err(err) => {
            let message = err.to_string();
            assert_eq!(err.code().name, code, "{message}");
            message
        }
    }
}

/// Deterministic pseudo-random bytes (xorshift), so failures reproduce.
fn noise(seed: u64, len: usize) -> Vec<u8> {
    let mut state = seed | 1;
    (0..len)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state.to_le_bytes()[0]
        })
        .collect()
}

fn sample_entries() -> Vec<Entry> {
    let binary: Vec<u8> = (0..=255u8).cycle().take(3000).collect();
    let text = "plugin: example\nversion: 1\n".repeat(200);
    vec![
        entry("plugin.json", br#"{"name":"example","version":"1.0.0"}"#),
        entry("bin/backend.wasm", &binary),
        entry("random.bin", &noise(7, 1000)),
        entry("docs/README.md", text.as_bytes()),
        entry("empty", b""),
        entry("unicode/h\u{e9}llo.txt", "\u{e9}t\u{e9}".as_bytes()),
    ]
}

// ---------------------------------------------------------------------------------
// Writing
// ---------------------------------------------------------------------------------

#[test]
fn round_trip_returns_entries_sorted_by_path() {
    let entries = sample_entries();
    let bytes = write(&entries).unwrap();
    let back = read(&bytes, &Limits::default()).unwrap();
    let mut expected = entries.clone();
    expected.sort_by(|a, b| a.path.as_bytes().cmp(b.path.as_bytes()));
    assert_eq!(back, expected);
}

#[test]
fn empty_archive_round_trips() {
    let bytes = write(&[]).unwrap();
    assert_eq!(bytes.len(), 22);
    assert_eq!(read(&bytes, &Limits::default()).unwrap(), vec![]);
}

#[test]
fn write_is_deterministic_and_order_independent() {
    let entries = sample_entries();
    let first = write(&entries).unwrap();
    let second = write(&entries).unwrap();
    let mut reversed = entries.clone();
    reversed.reverse();
    let third = write(&reversed).unwrap();
    let mut rotated = entries.clone();
    rotated.rotate_left(2);
    let fourth = write(&rotated).unwrap();
    assert_eq!(first, second);
    assert_eq!(first, third);
    assert_eq!(first, fourth);
}

#[test]
fn write_fixes_time_host_attributes_and_picks_stored_when_deflate_is_not_smaller() {
    let random = noise(3, 64);
    let bytes = write(&[entry("a.bin", &random), entry("b.txt", &[b'x'; 500])]).unwrap();
    // First local header: a.bin, incompressible, so stored.
    assert_eq!(&bytes[0..4], b"PK\x03\x04");
    assert_eq!(u16::from_le_bytes([bytes[8], bytes[9]]), 0, "method stored");
    assert_eq!(&bytes[10..14], &[0, 0, 0x21, 0], "1980-01-01 00:00");
    assert_eq!(
        u16::from_le_bytes([bytes[28], bytes[29]]),
        0,
        "no extra field"
    );
    // Second local header: b.txt, deflated.
    let second = 30 + 5 + 64;
    assert_eq!(&bytes[second..second + 4], b"PK\x03\x04");
    assert_eq!(
        u16::from_le_bytes([bytes[second + 8], bytes[second + 9]]),
        8
    );
    // Central directory headers: made by Unix, mode 0100644, no extra or comment.
    let central = bytes.windows(4).position(|w| w == b"PK\x01\x02").unwrap();
    assert_eq!(bytes[central + 5], 3, "host Unix");
    assert_eq!(&bytes[central + 30..central + 34], &[0, 0, 0, 0]);
    let attributes = u32::from_le_bytes(bytes[central + 38..central + 42].try_into().unwrap());
    assert_eq!(attributes, 0o100_644 << 16);
    // No archive comment.
    assert_eq!(&bytes[bytes.len() - 2..], &[0, 0]);
}

#[test]
fn write_refuses_duplicates_and_unsafe_paths() {
    let err = write(&[entry("a.txt", b"1"), entry("b", b""), entry("a.txt", b"2")]).unwrap_err();
    assert_eq!(err.code().name, "zip-duplicate");
    assert!(err.to_string().contains("\"a.txt\""), "{err}");
    for path in [
        "../evil.txt",
        "/etc/passwd",
        "a\\b",
        "C:/x",
        "",
        "dir/",
        "a//b",
        "a\0b",
    ] {
        let err = write(&[entry(path, b"x")]).unwrap_err();
        assert_eq!(err.code().name, "zip-unsafe-path", "{path:?}: {err}");
    }
}

#[test]
fn crafted_valid_archive_is_read() {
    let bytes = craft(vec![
        Raw::stored("a.txt", b"hello"),
        Raw::deflated("b/c.txt", &b"world ".repeat(100)),
    ]);
    let entries = read(&bytes, &Limits::default()).unwrap();
    assert_eq!(
        entries,
        vec![
            entry("a.txt", b"hello"),
            entry("b/c.txt", &b"world ".repeat(100))
        ]
    );
}

// ---------------------------------------------------------------------------------
// Paths
// ---------------------------------------------------------------------------------

#[test]
fn unsafe_paths_are_refused_with_their_rule() {
    let cases: &[(&[u8], &str)] = &[
        (b"../evil.txt", "`..`"),
        (b"a/../../evil", "`..`"),
        (b"/etc/passwd", "absolute"),
        (b"..\\evil", "backslash"),
        (b"C:/x", "drive"),
        (b"a//b", "empty component"),
        (b"", "empty"),
        (b"a\0b", "NUL"),
        (b"\xff\xfe.txt", "UTF-8"),
        (b"../", "`..`"),
        (b"/", "empty"),
        (b"./a", "`.` component"),
        (b"a\tb", "control character"),
    ];
    for (name, rule) in cases {
        let bytes = craft(vec![
            Raw::stored("ok.txt", b"ok"),
            Raw::stored("x", b"evil").name_bytes(name),
        ]);
        let message = refused(&bytes, "zip-unsafe-path");
        assert!(message.contains(rule), "{name:?}: {message}");
        let shown = format!("{:?}", String::from_utf8_lossy(name));
        assert!(message.contains(&shown), "{name:?}: {message}");
    }
}

#[test]
fn directory_entries_are_skipped_but_checked() {
    let bytes = craft(vec![
        Raw::stored("dir/", b""),
        Raw {
            external: 0o040_755 << 16,
            ..Raw::stored("other", b"")
        },
        Raw::stored("dir/file.txt", b"data"),
    ]);
    let entries = read(&bytes, &Limits::default()).unwrap();
    assert_eq!(entries, vec![entry("dir/file.txt", b"data")]);

    let bytes = craft(vec![Raw::stored("../", b"")]);
    refused(&bytes, "zip-unsafe-path");
    let bytes = craft(vec![Raw::stored("dir/", b"not empty")]);
    let message = refused(&bytes, "zip-malformed");
    assert!(message.contains("directory"), "{message}");
}

// ---------------------------------------------------------------------------------
// Duplicates and file types
// ---------------------------------------------------------------------------------

#[test]
fn duplicate_entries_are_refused() {
    let bytes = craft(vec![
        Raw::stored("plugin.json", b"{}"),
        Raw::stored("other", b""),
        Raw::stored("plugin.json", b"{\"evil\":true}"),
    ]);
    let message = refused(&bytes, "zip-duplicate");
    assert!(message.contains("\"plugin.json\""), "{message}");

    // A directory and a file with the same path also collide.
    let bytes = craft(vec![Raw::stored("a/", b""), Raw::stored("a", b"x")]);
    refused(&bytes, "zip-duplicate");

    // Exact bytes only: names that differ in case are distinct.
    let bytes = craft(vec![Raw::stored("A", b"1"), Raw::stored("a", b"2")]);
    assert_eq!(read(&bytes, &Limits::default()).unwrap().len(), 2);
}

#[test]
fn symlinks_and_special_files_are_refused() {
    let cases = [
        (0o120_777, "symbolic link"),
        (0o010_644, "FIFO"),
        (0o020_644, "character device"),
        (0o060_644, "block device"),
        (0o140_644, "socket"),
    ];
    for (mode, kind) in cases {
        let bytes = craft(vec![Raw {
            external: mode << 16,
            ..Raw::stored("link", b"/etc/passwd")
        }]);
        let message = refused(&bytes, "zip-symlink");
        assert!(message.contains(kind), "{message}");
        assert!(message.contains("\"link\""), "{message}");
    }
    // The mode means nothing when the archive was not made on Unix.
    let bytes = craft(vec![Raw {
        made_by: 20,
        external: 0o120_777 << 16,
        ..Raw::stored("file", b"data")
    }]);
    assert_eq!(read(&bytes, &Limits::default()).unwrap().len(), 1);
}

// ---------------------------------------------------------------------------------
// Limits
// ---------------------------------------------------------------------------------

#[test]
fn too_many_entries_are_refused() {
    let bytes = craft(vec![
        Raw::stored("a", b""),
        Raw::stored("b", b""),
        Raw::stored("c", b""),
    ]);
    let limits = Limits {
        max_entries: 2,
        ..Limits::default()
    };
    let message = refused_with(&bytes, &limits, "zip-too-many-entries");
    assert!(message.contains('3') && message.contains('2'), "{message}");
    assert!(read(&bytes, &Limits::default()).is_ok());
}

#[test]
fn entry_count_is_checked_before_the_central_directory_is_parsed() {
    // Claims 60000 entries but has a single, broken, central directory header.
    let mut archive = Archive::new(vec![Raw::stored("a", b"")]);
    archive.count = Some(60_000);
    let mut bytes = archive.build();
    let central = bytes.windows(4).position(|w| w == b"PK\x01\x02").unwrap();
    bytes[central] = b'X';
    refused(&bytes, "zip-too-many-entries");
}

#[test]
fn too_large_declared_size_is_refused() {
    let bytes = craft(vec![Raw {
        uncompressed: 100 << 20,
        ..Raw::deflated("big", &[0; 1000])
    }]);
    let message = refused(&bytes, "zip-too-large");
    assert!(
        message.contains("\"big\"") && message.contains("per entry"),
        "{message}"
    );

    let limits = Limits {
        max_entry_bytes: 10,
        ..Limits::default()
    };
    let bytes = craft(vec![Raw::stored("eleven", b"01234567890")]);
    refused_with(&bytes, &limits, "zip-too-large");
}

#[test]
fn lying_header_whose_data_inflates_beyond_its_declared_size_is_refused() {
    // 16 MiB of zeros, declared as 1000 bytes: under every limit, so only the
    // size-limited inflater stands between it and a 16 MiB allocation.
    let bomb = deflate(&vec![0; 16 << 20]);
    let crc = crc32fast::hash(&[0; 1000]);
    let bytes = craft(vec![Raw {
        uncompressed: 1000,
        crc,
        ..Raw::deflated("liar", &[])
    }
    .with_data(bomb)]);
    let message = refused(&bytes, "zip-malformed");
    assert!(
        message.contains("\"liar\"") && message.contains("more than its declared 1000 bytes"),
        "{message}"
    );

    // And the other way round: less data than declared.
    let bytes = craft(vec![Raw {
        uncompressed: 2000,
        ..Raw::deflated("short", &[1; 1000])
    }]);
    let message = refused(&bytes, "zip-malformed");
    assert!(message.contains("inflates to 1000 bytes"), "{message}");
}

impl Raw {
    /// Replaces the stored bytes and the compressed size to match them.
    fn with_data(mut self, data: Vec<u8>) -> Raw {
        self.compressed = len32(&data);
        self.data = data;
        self
    }
}

#[test]
fn total_size_over_the_limit_is_refused() {
    let limits = Limits {
        max_total_bytes: 1500,
        ..Limits::default()
    };
    let bytes = craft(vec![
        Raw::deflated("one", &[1; 1000]),
        Raw::deflated("two", &[2; 1000]),
    ]);
    let message = refused_with(&bytes, &limits, "zip-too-large");
    assert!(
        message.contains("\"two\"") && message.contains("in total"),
        "{message}"
    );
    assert_eq!(read(&bytes, &Limits::default()).unwrap().len(), 2);
}

#[test]
fn ratio_bomb_is_refused() {
    let zeros = vec![0; 8 << 20];
    let bytes = craft(vec![Raw::deflated("bomb", &zeros)]);
    let message = refused(&bytes, "zip-ratio");
    assert!(
        message.contains("\"bomb\"") && message.contains("200"),
        "{message}"
    );

    // The same entry passes when the ratio is allowed.
    let limits = Limits {
        max_ratio: 100_000,
        ..Limits::default()
    };
    assert_eq!(read(&bytes, &limits).unwrap()[0].data.len(), 8 << 20);

    // A compressed size of 0 for a large entry is an infinite ratio.
    let bytes = craft(vec![Raw {
        uncompressed: 2 << 20,
        ..Raw::deflated("nothing", &[])
    }
    .with_data(Vec::new())]);
    refused(&bytes, "zip-ratio");

    // Small entries are not ratio-checked.
    let bytes = craft(vec![Raw::deflated("small", &vec![0; 1 << 20])]);
    assert!(read(&bytes, &Limits::default()).is_ok());
}

// ---------------------------------------------------------------------------------
// Integrity and structure
// ---------------------------------------------------------------------------------

#[test]
fn crc_mismatch_is_refused() {
    for raw in [
        Raw::stored("a.txt", b"hello"),
        Raw::deflated("b.txt", b"hello hello hello"),
    ] {
        let bytes = craft(vec![Raw {
            crc: raw.crc ^ 1,
            ..raw
        }]);
        let message = refused(&bytes, "zip-crc");
        assert!(message.contains("CRC-32"), "{message}");
    }
}

#[test]
fn truncated_archive_is_refused() {
    let bytes = write(&sample_entries()).unwrap();
    for len in [bytes.len() - 1, bytes.len() - 22, bytes.len() / 2, 10] {
        refused(&bytes[..len], "zip-malformed");
    }
}

#[test]
fn garbage_and_empty_input_are_refused() {
    refused(&[], "zip-malformed");
    refused(&noise(42, 4096), "zip-malformed");
    refused(b"PK\x05\x06", "zip-malformed");
    // An end of central directory record pointing nowhere.
    let mut bytes = noise(9, 100);
    bytes.extend_from_slice(b"PK\x05\x06\0\0\0\0\x01\0\x01\0\xff\0\0\0\x10\0\0\0\0\0");
    refused(&bytes, "zip-malformed");
}

#[test]
fn encrypted_entries_are_refused() {
    let bytes = craft(vec![Raw {
        flags: 1,
        ..Raw::stored("secret", b"data")
    }]);
    let message = refused(&bytes, "zip-unsupported");
    assert!(
        message.contains("encrypted") && message.contains("\"secret\""),
        "{message}"
    );
}

#[test]
fn data_descriptors_are_refused() {
    let bytes = craft(vec![Raw {
        flags: 8,
        ..Raw::stored("streamed", b"data")
    }]);
    let message = refused(&bytes, "zip-unsupported");
    assert!(message.contains("data descriptor"), "{message}");
}

#[test]
fn unsupported_compression_methods_are_refused() {
    for (method, name) in [(12, "bzip2"), (14, "LZMA"), (93, "zstd"), (9, "deflate64")] {
        let bytes = craft(vec![Raw {
            method,
            ..Raw::stored("packed", b"data")
        }]);
        let message = refused(&bytes, "zip-unsupported");
        assert!(message.contains(name), "{message}");
    }
}

#[test]
fn zip64_is_refused() {
    let bytes = craft(vec![Raw {
        uncompressed: u32::MAX,
        ..Raw::stored("huge", b"data")
    }]);
    let message = refused(&bytes, "zip-unsupported");
    assert!(message.contains("ZIP64 is not supported"), "{message}");

    let bytes = craft(vec![Raw {
        compressed: u32::MAX,
        ..Raw::stored("huge", b"data")
    }]);
    refused(&bytes, "zip-unsupported");

    let mut archive = Archive::new(vec![Raw::stored("a", b"data")]);
    archive.zip64_locator = true;
    let message = refused(&archive.build(), "zip-unsupported");
    assert!(message.contains("ZIP64 is not supported"), "{message}");

    let mut archive = Archive::new(vec![Raw::stored("a", b"data")]);
    archive.count = Some(u16::MAX);
    refused(&archive.build(), "zip-unsupported");
}

#[test]
fn zip64_local_header_is_refused() {
    // What Python's `zipfile` writes with `force_zip64=True`: the local header has
    // 0xFFFFFFFF sizes and a ZIP64 extra field with the real ones, the central
    // directory has the real sizes and no extra field. A reader that resolves the
    // local ZIP64 field before comparing headers accepts it; this one must not.
    let mut extra = Vec::new();
    extra.extend_from_slice(&1u16.to_le_bytes()); // ZIP64 extended information
    extra.extend_from_slice(&16u16.to_le_bytes());
    extra.extend_from_slice(&4u64.to_le_bytes()); // uncompressed
    extra.extend_from_slice(&4u64.to_le_bytes()); // compressed
    let bytes = craft(vec![Raw {
        local_sizes: Some((u32::MAX, u32::MAX)),
        local_extra: extra,
        ..Raw::stored("big.txt", b"data")
    }]);
    let err = read(&bytes, &Limits::default()).unwrap_err();
    assert!(
        matches!(err.code().name, "zip-unsupported" | "zip-malformed"),
        "{err}"
    );
    assert!(err.to_string().contains("\"big.txt\""), "{err}");
}

#[test]
fn local_and_central_headers_must_agree() {
    let bytes = craft(vec![Raw {
        local_name: Some(b"other.txt".to_vec()),
        ..Raw::stored("a.txt", b"hello")
    }]);
    let message = refused(&bytes, "zip-malformed");
    assert!(message.contains("name"), "{message}");

    let bytes = craft(vec![Raw {
        local_method: Some(0),
        ..Raw::deflated("a.txt", b"hello hello hello")
    }]);
    let message = refused(&bytes, "zip-malformed");
    assert!(message.contains("method"), "{message}");

    let bytes = craft(vec![Raw {
        local_sizes: Some((5, 6)),
        ..Raw::stored("a.txt", b"hello")
    }]);
    refused(&bytes, "zip-malformed");

    // A stored entry whose sizes differ.
    let bytes = craft(vec![Raw {
        uncompressed: 4,
        local_sizes: Some((5, 4)),
        ..Raw::stored("a.txt", b"hello")
    }]);
    refused(&bytes, "zip-malformed");
}

#[test]
fn bad_signatures_and_offsets_are_refused() {
    let bytes = write(&[entry("a.txt", b"hello")]).unwrap();

    let mut broken = bytes.clone();
    broken[0] = b'X'; // local header signature
    let message = refused(&broken, "zip-malformed");
    assert!(
        message.contains("\"a.txt\"") && message.contains("signature"),
        "{message}"
    );

    let mut broken = bytes.clone();
    let central = broken.windows(4).position(|w| w == b"PK\x01\x02").unwrap();
    broken[central + 1] = b'X';
    refused(&broken, "zip-malformed");

    // Local header offset far out of range.
    let mut broken = bytes.clone();
    broken[central + 42..central + 46].copy_from_slice(&0x7fff_0000u32.to_le_bytes());
    refused(&broken, "zip-malformed");

    // Compressed size running into the central directory.
    let mut broken = bytes.clone();
    broken[central + 20..central + 24].copy_from_slice(&1000u32.to_le_bytes());
    broken[18..22].copy_from_slice(&1000u32.to_le_bytes());
    refused(&broken, "zip-malformed");
}

#[test]
fn overlapping_entries_are_refused() {
    // "b" has a valid local header, but it lies inside the stored data of "a", so
    // the same bytes would be extracted twice (the overlapping-file zip bomb).
    let inner = craft(vec![Raw::stored("b", b"payload")]);
    let local_b = inner[..30 + 1 + 7].to_vec();
    let bytes = craft(vec![
        Raw::stored("a", &local_b),
        Raw {
            central_only_at: Some(30 + 1),
            ..Raw::stored("b", b"payload")
        },
    ]);
    let message = refused(&bytes, "zip-malformed");
    assert!(message.contains("overlap"), "{message}");
}

#[test]
fn every_error_has_a_stable_code() {
    let codes = [
        "zip-malformed",
        "zip-unsupported",
        "zip-unsafe-path",
        "zip-duplicate",
        "zip-symlink",
        "zip-too-many-entries",
        "zip-too-large",
        "zip-ratio",
        "zip-crc",
        "zip-compress",
    ];
    let samples = [
        ZipError::Malformed {
            entry: None,
            reason: String::new(),
        },
        ZipError::Unsupported {
            entry: Some("a".into()),
            reason: String::new(),
        },
        ZipError::UnsafePath {
            entry: "a".into(),
            rule: "r",
        },
        ZipError::Duplicate { entry: "a".into() },
        ZipError::Symlink {
            entry: "a".into(),
            kind: "symbolic link",
        },
        ZipError::TooManyEntries { count: 2, max: 1 },
        ZipError::TooLarge {
            entry: "a".into(),
            reason: String::new(),
        },
        ZipError::Ratio {
            entry: "a".into(),
            compressed: 1,
            uncompressed: 2,
            max: 1,
        },
        ZipError::Crc {
            entry: "a".into(),
            expected: 1,
            actual: 2,
        },
        ZipError::Compress {
            entry: "a".into(),
            reason: String::new(),
        },
    ];
    for (sample, code) in samples.iter().zip(codes) {
        assert_eq!(sample.code().name, code);
    }
}

#[test]
fn hostile_names_are_escaped_in_messages() {
    let bytes = craft(vec![Raw::stored("x", b"").name_bytes(b"\x1b[31mred\r\n")]);
    let message = refused(&bytes, "zip-unsafe-path");
    assert!(message.contains("control character"), "{message}");
    assert!(
        !message.contains('\x1b') && !message.contains('\n'),
        "{message}"
    );
}

// ---------------------------------------------------------------------------------
// Fuzz-like robustness: mutated archives never panic
// ---------------------------------------------------------------------------------

#[test]
fn truncation_at_every_length_is_refused_without_panic() {
    let bytes = write(&sample_entries()).unwrap();
    for len in 0..bytes.len() {
        assert!(
            read(&bytes[..len], &Limits::default()).is_err(),
            "len {len}"
        );
    }
    assert!(read(&bytes, &Limits::default()).is_ok());
}

#[test]
fn flipped_bytes_never_panic() {
    let bytes = write(&[
        entry("a.txt", b"hello"),
        entry("b/c.bin", &noise(5, 40)),
        entry("d.txt", &b"deflate me ".repeat(20)),
    ])
    .unwrap();
    for at in 0..bytes.len() {
        for mask in [0x01, 0x80, 0xff] {
            let mut mutated = bytes.clone();
            mutated[at] ^= mask;
            let _ = read(&mutated, &Limits::default());
        }
        for value in [0x00, 0xff] {
            let mut mutated = bytes.clone();
            mutated[at] = value;
            let _ = read(&mutated, &Limits::default());
        }
    }
}

#[test]
fn random_mutations_never_panic() {
    let bytes = write(&sample_entries()).unwrap();
    let choices = noise(1234, 20_000);
    let mut picks = choices.chunks_exact(4);
    for round in 0..2000 {
        let mut mutated = bytes.clone();
        for _ in 0..(round % 8 + 1) {
            let Some(pick) = picks.next() else {
                picks = choices.chunks_exact(4);
                continue;
            };
            let at = usize::from(u16::from_le_bytes([pick[0], pick[1]])) % mutated.len();
            mutated[at] = pick[2];
        }
        if round % 5 == 0 {
            let cut = usize::from(choices[round]) % 64;
            mutated.truncate(mutated.len().saturating_sub(cut));
        }
        let _ = read(&mutated, &Limits::default());
    }
}
