//! Reading hostile archives.
//!
//! The reader works in three steps:
//! 1. find and check the end of central directory record (entry count first);
//! 2. parse every central directory header and its local header, checking paths,
//!    file types, duplicates, sizes, ratios and overlaps, without inflating anything;
//! 3. inflate each regular file through a size-limited reader and check its CRC-32.

use std::collections::HashSet;
use std::io::Read;

use flate2::read::DeflateDecoder;

use crate::{
    path, Entry, Limits, ZipError, CENTRAL_SIG, EOCD_LEN, EOCD_SIG, HOST_UNIX, LOCAL_SIG,
    METHOD_DEFLATE, METHOD_STORED,
};

/// ZIP64 end of central directory locator signature (`PK\x06\x07`).
const ZIP64_LOCATOR_SIG: u32 = 0x0706_4b50;
/// Size of the ZIP64 end of central directory locator.
const ZIP64_LOCATOR_LEN: usize = 20;
/// Longest possible archive comment.
const MAX_COMMENT_LEN: usize = 0xFFFF;
/// The ratio limit applies only to entries whose declared size exceeds this.
const RATIO_THRESHOLD: u64 = 1 << 20;
/// General purpose flag bits meaning the entry is encrypted (traditional or strong
/// encryption, or a masked local header).
const FLAG_ENCRYPTED: u16 = 0x0001 | 0x0040 | 0x2000;
/// General purpose flag bit: sizes and CRC follow the data in a data descriptor.
const FLAG_DATA_DESCRIPTOR: u16 = 0x0008;

/// Unix file type bits of a mode.
const S_IFMT: u32 = 0o170_000;
const S_IFREG: u32 = 0o100_000;
const S_IFDIR: u32 = 0o040_000;
const S_IFLNK: u32 = 0o120_000;
const S_IFIFO: u32 = 0o010_000;
const S_IFCHR: u32 = 0o020_000;
const S_IFBLK: u32 = 0o060_000;
const S_IFSOCK: u32 = 0o140_000;

/// What the reader needs to know about one entry once its headers are checked.
struct Planned<'a> {
    /// The checked path, without a directory's trailing `/`.
    path: &'a str,
    /// The name as written in the archive, for messages.
    name: String,
    is_dir: bool,
    method: u16,
    crc: u32,
    uncompressed: u64,
    /// Offset of the local header; the entry occupies `local_start..data.end`.
    local_start: usize,
    /// Range of the compressed data in the archive.
    data: std::ops::Range<usize>,
}

pub(crate) fn read(bytes: &[u8], limits: &Limits) -> Result<Vec<Entry>, ZipError> {
    let eocd = find_eocd(bytes)?;
    let directory = check_eocd(bytes, eocd, limits)?;

    let mut planned = Vec::new();
    let mut seen = HashSet::new();
    let mut total: u64 = 0;
    let mut fields = Fields::new(directory.bytes);
    for _ in 0..directory.count {
        let header = parse_central(&mut fields)?;
        let entry = plan(
            bytes,
            &header,
            directory.offset,
            limits,
            &mut seen,
            &mut total,
        )?;
        planned.push(entry);
    }
    if fields.pos != directory.bytes.len() {
        return Err(malformed(
            None,
            format!(
                "the central directory is {} bytes long but its {} entries use {} bytes",
                directory.bytes.len(),
                directory.count,
                fields.pos
            ),
        ));
    }
    check_overlaps(&planned)?;

    let mut entries = Vec::new();
    for entry in &planned {
        if !entry.is_dir {
            entries.push(extract(bytes, entry)?);
        }
    }
    Ok(entries)
}

/// Finds the end of central directory record: the last signature from which the
/// record and its comment reach exactly the end of the input.
fn find_eocd(bytes: &[u8]) -> Result<usize, ZipError> {
    let Some(last) = bytes.len().checked_sub(EOCD_LEN) else {
        return Err(malformed(
            None,
            format!(
                "{} bytes is too short to hold an end of central directory record",
                bytes.len()
            ),
        ));
    };
    let first = last.saturating_sub(MAX_COMMENT_LEN);
    for pos in (first..=last).rev() {
        if u32_at(bytes, pos) != Some(EOCD_SIG) {
            continue;
        }
        let comment_len = u16_at(bytes, pos.saturating_add(20)).map(usize::from);
        let end = comment_len
            .and_then(|len| pos.checked_add(EOCD_LEN)?.checked_add(len))
            .unwrap_or(usize::MAX);
        if end == bytes.len() {
            return Ok(pos);
        }
    }
    Err(malformed(
        None,
        "no end of central directory record (not a ZIP archive, or truncated)".to_owned(),
    ))
}

/// The central directory as declared by the end of central directory record.
struct Directory<'a> {
    bytes: &'a [u8],
    offset: usize,
    count: usize,
}

/// Checks the end of central directory record at `pos` and returns the central
/// directory it points to. The entry count is checked against the limit first.
fn check_eocd<'a>(bytes: &'a [u8], pos: usize, limits: &Limits) -> Result<Directory<'a>, ZipError> {
    let record = bytes.get(pos..).unwrap_or_default();
    let mut fields = Fields::new(record);
    let fixed = (|| {
        fields.u32()?; // signature, already checked
        Some((
            fields.u16()?,
            fields.u16()?,
            fields.u16()?,
            fields.u16()?,
            fields.u32()?,
            fields.u32()?,
        ))
    })();
    let Some((disk, directory_disk, disk_entries, total_entries, size, offset)) = fixed else {
        return Err(malformed(
            None,
            "truncated end of central directory record".to_owned(),
        ));
    };

    let has_locator = pos
        .checked_sub(ZIP64_LOCATOR_LEN)
        .and_then(|locator| u32_at(bytes, locator))
        == Some(ZIP64_LOCATOR_SIG);
    if has_locator
        || disk_entries == u16::MAX
        || total_entries == u16::MAX
        || size == u32::MAX
        || offset == u32::MAX
    {
        return Err(unsupported(
            None,
            "ZIP64 is not supported (the archive has ZIP64 records or 0xFFFF/0xFFFFFFFF markers)"
                .to_owned(),
        ));
    }
    if disk != 0 || directory_disk != 0 || disk_entries != total_entries {
        return Err(unsupported(
            None,
            "multi-disk (split) archives are not supported".to_owned(),
        ));
    }
    let count = usize::from(total_entries);
    if count > limits.max_entries {
        return Err(ZipError::TooManyEntries {
            count: u64::from(total_entries),
            max: limits.max_entries,
        });
    }

    let start = to_usize(offset);
    let end = start.checked_add(to_usize(size));
    if end != Some(pos) {
        return Err(malformed(
            None,
            format!(
                "the central directory (offset {offset}, {size} bytes) does not end where \
                 the end of central directory record starts (offset {pos})"
            ),
        ));
    }
    let Some(directory) = bytes.get(start..pos) else {
        return Err(malformed(
            None,
            format!("the central directory offset {offset} is out of range"),
        ));
    };
    Ok(Directory {
        bytes: directory,
        offset: start,
        count,
    })
}

/// The fields of a central directory file header that the reader uses.
struct Central<'a> {
    name: &'a [u8],
    made_by: u16,
    flags: u16,
    method: u16,
    crc: u32,
    compressed: u32,
    uncompressed: u32,
    external_attributes: u32,
    local_offset: u32,
}

fn parse_central<'a>(fields: &mut Fields<'a>) -> Result<Central<'a>, ZipError> {
    let at = fields.pos;
    let parsed = (|| {
        let signature = fields.u32()?;
        let made_by = fields.u16()?;
        let _version_needed = fields.u16()?;
        let flags = fields.u16()?;
        let method = fields.u16()?;
        let _time = fields.u16()?;
        let _date = fields.u16()?;
        let crc = fields.u32()?;
        let compressed = fields.u32()?;
        let uncompressed = fields.u32()?;
        let name_len = fields.u16()?;
        let extra_len = fields.u16()?;
        let comment_len = fields.u16()?;
        let _disk = fields.u16()?;
        let _internal_attributes = fields.u16()?;
        let external_attributes = fields.u32()?;
        let local_offset = fields.u32()?;
        let name = fields.take(usize::from(name_len))?;
        fields.take(usize::from(extra_len))?;
        fields.take(usize::from(comment_len))?;
        Some((
            signature,
            Central {
                name,
                made_by,
                flags,
                method,
                crc,
                compressed,
                uncompressed,
                external_attributes,
                local_offset,
            },
        ))
    })();
    match parsed {
        Some((CENTRAL_SIG, header)) => Ok(header),
        Some((signature, _)) => Err(malformed(
            None,
            format!(
                "bad central directory header signature {signature:#010x} at offset {at} of \
                 the central directory"
            ),
        )),
        None => Err(malformed(
            None,
            format!(
                "central directory header at offset {at} of the central directory is truncated"
            ),
        )),
    }
}

/// Checks one entry's central and local headers without inflating anything.
fn plan<'a>(
    bytes: &[u8],
    header: &Central<'a>,
    directory_offset: usize,
    limits: &Limits,
    seen: &mut HashSet<&'a str>,
    total: &mut u64,
) -> Result<Planned<'a>, ZipError> {
    let name = String::from_utf8_lossy(header.name).into_owned();
    let named = || Some(name.clone());

    if header.compressed == u32::MAX
        || header.uncompressed == u32::MAX
        || header.local_offset == u32::MAX
    {
        return Err(unsupported(
            named(),
            "ZIP64 is not supported (0xFFFFFFFF size or offset marker)".to_owned(),
        ));
    }
    if header.flags & FLAG_ENCRYPTED != 0 {
        return Err(unsupported(
            named(),
            "encrypted entries are not supported".to_owned(),
        ));
    }
    if header.flags & FLAG_DATA_DESCRIPTOR != 0 {
        return Err(unsupported(
            named(),
            "data descriptors (general purpose flag bit 3) are not supported".to_owned(),
        ));
    }
    if header.method != METHOD_STORED && header.method != METHOD_DEFLATE {
        return Err(unsupported(
            named(),
            format!(
                "compression method {} ({}) is not supported, only stored (0) and deflate (8)",
                header.method,
                method_name(header.method)
            ),
        ));
    }

    let (stripped, slash) = match header.name.strip_suffix(b"/") {
        Some(stripped) => (stripped, true),
        None => (header.name, false),
    };
    let path = path::check(stripped).map_err(|rule| ZipError::UnsafePath {
        entry: name.clone(),
        rule,
    })?;

    let mode_is_dir = match unix_file_type(header) {
        // No type bits recorded is treated as a regular file.
        None | Some(0) | Some(S_IFREG) => false,
        Some(S_IFDIR) => true,
        Some(kind) => {
            return Err(ZipError::Symlink {
                entry: name,
                kind: file_type_name(kind),
            })
        }
    };
    let is_dir = slash || mode_is_dir;
    let uncompressed = u64::from(header.uncompressed);
    let compressed = u64::from(header.compressed);
    if is_dir && uncompressed != 0 {
        return Err(malformed(
            named(),
            format!("directory entry declares {uncompressed} bytes of data"),
        ));
    }

    if !seen.insert(path) {
        return Err(ZipError::Duplicate { entry: name });
    }

    if uncompressed > limits.max_entry_bytes {
        return Err(ZipError::TooLarge {
            entry: name,
            reason: format!(
                "declares {uncompressed} bytes uncompressed, more than the limit of {} per entry",
                limits.max_entry_bytes
            ),
        });
    }
    *total = total.saturating_add(uncompressed);
    if *total > limits.max_total_bytes {
        return Err(ZipError::TooLarge {
            entry: name,
            reason: format!(
                "takes the archive to {} bytes uncompressed, more than the limit of {} in total",
                *total, limits.max_total_bytes
            ),
        });
    }
    if header.method == METHOD_STORED && compressed != uncompressed {
        return Err(malformed(
            named(),
            format!(
                "stored entry has compressed size {compressed} but uncompressed size {uncompressed}"
            ),
        ));
    }
    if uncompressed > RATIO_THRESHOLD && uncompressed > compressed.saturating_mul(limits.max_ratio)
    {
        return Err(ZipError::Ratio {
            entry: name,
            compressed,
            uncompressed,
            max: limits.max_ratio,
        });
    }

    let (local_start, data) = check_local(bytes, header, directory_offset)
        .map_err(|reason| malformed(named(), reason))?;
    Ok(Planned {
        path,
        name,
        is_dir,
        method: header.method,
        crc: header.crc,
        uncompressed,
        local_start,
        data,
    })
}

/// Checks the local header of `header` against it and returns where the local header
/// starts and the range of the compressed data, which must lie before the central
/// directory.
fn check_local(
    bytes: &[u8],
    header: &Central<'_>,
    directory_offset: usize,
) -> Result<(usize, std::ops::Range<usize>), String> {
    let start = to_usize(header.local_offset);
    let local = bytes
        .get(start..directory_offset)
        .ok_or_else(|| format!("local header offset {start} is out of range"))?;
    let mut fields = Fields::new(local);
    let parsed = (|| {
        let signature = fields.u32()?;
        let _version_needed = fields.u16()?;
        let flags = fields.u16()?;
        let method = fields.u16()?;
        let _time = fields.u16()?;
        let _date = fields.u16()?;
        let crc = fields.u32()?;
        let compressed = fields.u32()?;
        let uncompressed = fields.u32()?;
        let name_len = fields.u16()?;
        let extra_len = fields.u16()?;
        let name = fields.take(usize::from(name_len))?;
        fields.take(usize::from(extra_len))?;
        Some((
            signature,
            flags,
            method,
            crc,
            compressed,
            uncompressed,
            name,
        ))
    })();
    let Some((signature, flags, method, crc, compressed, uncompressed, name)) = parsed else {
        return Err(format!("local header at offset {start} is truncated"));
    };
    if signature != LOCAL_SIG {
        return Err(format!(
            "bad local header signature {signature:#010x} at offset {start}"
        ));
    }
    if name != header.name {
        return Err(format!(
            "local header name {:?} differs from the central directory",
            String::from_utf8_lossy(name)
        ));
    }
    if flags & (FLAG_ENCRYPTED | FLAG_DATA_DESCRIPTOR) != 0 {
        return Err(format!(
            "local header flags {flags:#06x} differ from the central directory"
        ));
    }
    if method != header.method {
        return Err(format!(
            "local header says compression method {method}, the central directory says {}",
            header.method
        ));
    }
    if (crc, compressed, uncompressed) != (header.crc, header.compressed, header.uncompressed) {
        return Err(format!(
            "local header (CRC {crc:#010x}, {compressed} compressed, {uncompressed} uncompressed \
             bytes) disagrees with the central directory (CRC {:#010x}, {} compressed, {} \
             uncompressed bytes)",
            header.crc, header.compressed, header.uncompressed
        ));
    }
    let data_start = start.checked_add(fields.pos);
    let data_end = data_start.and_then(|s| s.checked_add(to_usize(compressed)));
    match (data_start, data_end) {
        (Some(data_start), Some(data_end)) if data_end <= directory_offset => {
            Ok((start, data_start..data_end))
        }
        _ => Err(format!(
            "{compressed} bytes of compressed data at offset {} run past the start of the \
             central directory",
            data_start.unwrap_or(usize::MAX)
        )),
    }
}

/// Refuses entries whose local headers and data overlap (a known way to build
/// decompression bombs that pass per-entry checks).
fn check_overlaps(planned: &[Planned<'_>]) -> Result<(), ZipError> {
    let mut spans: Vec<&Planned<'_>> = planned.iter().collect();
    spans.sort_by_key(|entry| entry.local_start);
    for pair in spans.windows(2) {
        if let [first, second] = pair {
            if second.local_start < first.data.end {
                return Err(malformed(
                    Some(second.name.clone()),
                    format!("its local header and data overlap entry {:?}", first.name),
                ));
            }
        }
    }
    Ok(())
}

/// Inflates one regular file and checks its size and CRC-32.
fn extract(bytes: &[u8], entry: &Planned<'_>) -> Result<Entry, ZipError> {
    let named = || Some(entry.name.clone());
    let Some(compressed) = bytes.get(entry.data.clone()) else {
        return Err(malformed(named(), "data out of range".to_owned()));
    };
    let data = if entry.method == METHOD_STORED {
        compressed.to_vec()
    } else {
        let mut data = Vec::new();
        let capacity = usize::try_from(entry.uncompressed).unwrap_or(usize::MAX);
        if data.try_reserve_exact(capacity).is_err() {
            return Err(ZipError::TooLarge {
                entry: entry.name.clone(),
                reason: format!("cannot allocate {} bytes", entry.uncompressed),
            });
        }
        // Read at most one byte more than declared: enough to tell that a header
        // lies, never more than the limits allow.
        let limit = entry.uncompressed.saturating_add(1);
        DeflateDecoder::new(compressed)
            .take(limit)
            .read_to_end(&mut data)
            .map_err(|err| malformed(named(), format!("invalid deflate data: {err}")))?;
        data
    };
    let actual = u64::try_from(data.len()).unwrap_or(u64::MAX);
    if actual > entry.uncompressed {
        return Err(malformed(
            named(),
            format!(
                "inflates to more than its declared {} bytes",
                entry.uncompressed
            ),
        ));
    }
    if actual < entry.uncompressed {
        return Err(malformed(
            named(),
            format!(
                "inflates to {actual} bytes, not its declared {} bytes",
                entry.uncompressed
            ),
        ));
    }
    let crc = crc32fast::hash(&data);
    if crc != entry.crc {
        return Err(ZipError::Crc {
            entry: entry.name.clone(),
            expected: entry.crc,
            actual: crc,
        });
    }
    Ok(Entry {
        path: entry.path.to_owned(),
        data,
    })
}

/// The Unix file type of an entry made on Unix that records a mode, if any.
fn unix_file_type(header: &Central<'_>) -> Option<u32> {
    let [host, _version] = header.made_by.to_be_bytes();
    let mode = header.external_attributes >> 16;
    (host == HOST_UNIX && mode != 0).then_some(mode & S_IFMT)
}

fn file_type_name(kind: u32) -> &'static str {
    match kind {
        S_IFLNK => "symbolic link",
        S_IFIFO => "FIFO (named pipe)",
        S_IFCHR => "character device",
        S_IFBLK => "block device",
        S_IFSOCK => "socket",
        _ => "file of unknown type",
    }
}

fn method_name(method: u16) -> &'static str {
    match method {
        1..=6 => "legacy shrink/reduce/implode",
        9 => "deflate64",
        12 => "bzip2",
        14 => "LZMA",
        93 => "zstd",
        95 => "xz",
        98 => "PPMd",
        99 => "AES encryption",
        _ => "unknown",
    }
}

fn malformed(entry: Option<String>, reason: String) -> ZipError {
    ZipError::Malformed { entry, reason }
}

fn unsupported(entry: Option<String>, reason: String) -> ZipError {
    ZipError::Unsupported { entry, reason }
}

/// Widens a 32-bit offset or size (saturating on 16-bit targets).
fn to_usize(value: u32) -> usize {
    usize::try_from(value).unwrap_or(usize::MAX)
}

fn u16_at(bytes: &[u8], at: usize) -> Option<u16> {
    Fields { bytes, pos: at }.u16()
}

fn u32_at(bytes: &[u8], at: usize) -> Option<u32> {
    Fields { bytes, pos: at }.u32()
}

/// Little-endian fields read one after the other; every read is bounds-checked.
struct Fields<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Fields<'a> {
    fn new(bytes: &'a [u8]) -> Self {
        Fields { bytes, pos: 0 }
    }

    fn take(&mut self, len: usize) -> Option<&'a [u8]> {
        let end = self.pos.checked_add(len)?;
        let slice = self.bytes.get(self.pos..end)?;
        self.pos = end;
        Some(slice)
    }

    fn u16(&mut self) -> Option<u16> {
        self.take(2)?.try_into().ok().map(u16::from_le_bytes)
    }

    fn u32(&mut self) -> Option<u32> {
        self.take(4)?.try_into().ok().map(u32::from_le_bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::Fields;

    #[test]
    fn fields_are_bounds_checked() {
        let mut fields = Fields::new(&[1, 0, 2, 0, 0]);
        assert_eq!(fields.u16(), Some(1));
        assert_eq!(fields.u32(), None);
        assert_eq!(fields.u16(), Some(2));
        assert_eq!(fields.take(2), None);
        assert_eq!(fields.take(1), Some(&[0][..]));
        let mut far = Fields {
            bytes: &[],
            pos: usize::MAX,
        };
        assert_eq!(far.u32(), None);
    }
}
