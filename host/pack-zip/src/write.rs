//! Writing deterministic archives.

use std::io::Write;

use flate2::write::DeflateEncoder;
use flate2::Compression;

use crate::{
    path, Entry, ZipError, CENTRAL_LEN, CENTRAL_SIG, EOCD_LEN, EOCD_SIG, HOST_UNIX, LOCAL_LEN,
    LOCAL_SIG, METHOD_DEFLATE, METHOD_STORED,
};

/// Version 2.0 of the ZIP specification: deflate, and what the reader needs.
const SPEC_VERSION: u16 = 20;
/// Version 1.0: enough to extract stored entries.
const SPEC_VERSION_STORED: u16 = 10;
/// "Version made by": Unix host, specification 2.0.
const MADE_BY: u16 = (HOST_UNIX as u16) << 8 | SPEC_VERSION;
/// General purpose flag bit 11: the name is UTF-8.
const FLAG_UTF8: u16 = 0x0800;
/// DOS time 00:00:00.
const DOS_TIME: u16 = 0;
/// DOS date 1980-01-01: year 0 since 1980, month 1, day 1.
const DOS_DATE: u16 = 1 << 5 | 1;
/// A regular file with mode 0644, in the high 16 bits.
const EXTERNAL_ATTRIBUTES: u32 = 0o100_644 << 16;

pub(crate) fn write(entries: &[Entry]) -> Result<Vec<u8>, ZipError> {
    let mut sorted: Vec<&Entry> = entries.iter().collect();
    sorted.sort_by(|a, b| a.path.as_bytes().cmp(b.path.as_bytes()));
    for entry in &sorted {
        path::check(entry.path.as_bytes()).map_err(|rule| ZipError::UnsafePath {
            entry: entry.path.clone(),
            rule,
        })?;
    }
    for pair in sorted.windows(2) {
        if let [first, second] = pair {
            if first.path == second.path {
                return Err(ZipError::Duplicate {
                    entry: second.path.clone(),
                });
            }
        }
    }
    let count = u16::try_from(sorted.len())
        .ok()
        .filter(|count| *count != u16::MAX)
        .ok_or_else(|| too_big(None, format!("{} entries need ZIP64", sorted.len())))?;

    let mut out = Vec::new();
    let mut central = Vec::new();
    for entry in sorted {
        let name = entry.path.as_bytes();
        let crc = crc32fast::hash(&entry.data);
        let deflated = deflate(entry)?;
        let (method, version, body) = if deflated.len() < entry.data.len() {
            (METHOD_DEFLATE, SPEC_VERSION, deflated.as_slice())
        } else {
            (METHOD_STORED, SPEC_VERSION_STORED, entry.data.as_slice())
        };
        let named = || Some(entry.path.clone());
        let name_len = u16::try_from(name.len())
            .map_err(|_| too_big(named(), "the name is longer than 65535 bytes".to_owned()))?;
        let compressed = fits_u32(body.len())
            .ok_or_else(|| too_big(named(), "over 4 GiB needs ZIP64".to_owned()))?;
        let uncompressed = fits_u32(entry.data.len())
            .ok_or_else(|| too_big(named(), "over 4 GiB needs ZIP64".to_owned()))?;
        let offset = fits_u32(out.len())
            .ok_or_else(|| too_big(named(), "an offset over 4 GiB needs ZIP64".to_owned()))?;

        let mut local = Vec::with_capacity(LOCAL_LEN);
        local.extend_from_slice(&LOCAL_SIG.to_le_bytes());
        local.extend_from_slice(&version.to_le_bytes());
        local.extend_from_slice(&FLAG_UTF8.to_le_bytes());
        local.extend_from_slice(&method.to_le_bytes());
        local.extend_from_slice(&DOS_TIME.to_le_bytes());
        local.extend_from_slice(&DOS_DATE.to_le_bytes());
        local.extend_from_slice(&crc.to_le_bytes());
        local.extend_from_slice(&compressed.to_le_bytes());
        local.extend_from_slice(&uncompressed.to_le_bytes());
        local.extend_from_slice(&name_len.to_le_bytes());
        local.extend_from_slice(&0u16.to_le_bytes()); // extra field length
        out.extend_from_slice(&local);
        out.extend_from_slice(name);
        out.extend_from_slice(body);

        let start = central.len();
        central.extend_from_slice(&CENTRAL_SIG.to_le_bytes());
        central.extend_from_slice(&MADE_BY.to_le_bytes());
        central.extend_from_slice(&version.to_le_bytes());
        central.extend_from_slice(&FLAG_UTF8.to_le_bytes());
        central.extend_from_slice(&method.to_le_bytes());
        central.extend_from_slice(&DOS_TIME.to_le_bytes());
        central.extend_from_slice(&DOS_DATE.to_le_bytes());
        central.extend_from_slice(&crc.to_le_bytes());
        central.extend_from_slice(&compressed.to_le_bytes());
        central.extend_from_slice(&uncompressed.to_le_bytes());
        central.extend_from_slice(&name_len.to_le_bytes());
        central.extend_from_slice(&0u16.to_le_bytes()); // extra field length
        central.extend_from_slice(&0u16.to_le_bytes()); // comment length
        central.extend_from_slice(&0u16.to_le_bytes()); // disk number
        central.extend_from_slice(&0u16.to_le_bytes()); // internal attributes
        central.extend_from_slice(&EXTERNAL_ATTRIBUTES.to_le_bytes());
        central.extend_from_slice(&offset.to_le_bytes());
        debug_assert_eq!(central.len() - start, CENTRAL_LEN);
        central.extend_from_slice(name);
    }

    let directory_offset = fits_u32(out.len())
        .ok_or_else(|| too_big(None, "an offset over 4 GiB needs ZIP64".to_owned()))?;
    let directory_size = fits_u32(central.len()).ok_or_else(|| {
        too_big(
            None,
            "a central directory over 4 GiB needs ZIP64".to_owned(),
        )
    })?;
    out.extend_from_slice(&central);

    let start = out.len();
    out.extend_from_slice(&EOCD_SIG.to_le_bytes());
    out.extend_from_slice(&0u16.to_le_bytes()); // this disk
    out.extend_from_slice(&0u16.to_le_bytes()); // disk with the central directory
    out.extend_from_slice(&count.to_le_bytes()); // entries on this disk
    out.extend_from_slice(&count.to_le_bytes()); // entries in total
    out.extend_from_slice(&directory_size.to_le_bytes());
    out.extend_from_slice(&directory_offset.to_le_bytes());
    out.extend_from_slice(&0u16.to_le_bytes()); // comment length
    debug_assert_eq!(out.len() - start, EOCD_LEN);
    Ok(out)
}

/// Raw deflate at level 9.
fn deflate(entry: &Entry) -> Result<Vec<u8>, ZipError> {
    let failed = |err: std::io::Error| ZipError::Compress {
        entry: entry.path.clone(),
        reason: err.to_string(),
    };
    let mut encoder = DeflateEncoder::new(Vec::new(), Compression::best());
    encoder.write_all(&entry.data).map_err(failed)?;
    encoder.finish().map_err(failed)
}

/// `len` as a ZIP32 size or offset; `u32::MAX` is reserved as the ZIP64 marker.
fn fits_u32(len: usize) -> Option<u32> {
    u32::try_from(len).ok().filter(|value| *value != u32::MAX)
}

fn too_big(entry: Option<String>, reason: String) -> ZipError {
    ZipError::Unsupported { entry, reason }
}
