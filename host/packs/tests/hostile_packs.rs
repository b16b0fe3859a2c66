#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)]
//! Every way `open_pack` refuses a pack, each with a crafted archive.

use std::collections::BTreeMap;
use std::io::Write;

use svc_packs::archive::{open_pack, write_pack};
use svc_packs::manifest::{FileEntry, PackManifest, COMPONENT_ENTRY, FORMAT_VERSION};
use svc_runtime::sha256_hex;

const REGULAR: u32 = 0o100_644 << 16;
const SYMLINK: u32 = 0o120_777 << 16;

/// One entry of a crafted archive.
struct Raw {
    name: String,
    data: Vec<u8>,
    /// Deflate the data (else stored).
    deflate: bool,
    external: u32,
    /// Declared uncompressed size, when it should lie.
    declared: Option<u32>,
}

fn raw(name: &str, data: &[u8]) -> Raw {
    Raw {
        name: name.into(),
        data: data.to_vec(),
        deflate: false,
        external: REGULAR,
        declared: None,
    }
}

/// A zip archive, written byte by byte so that it can hold anything.
fn craft(entries: &[Raw]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut central = Vec::new();
    for e in entries {
        let (method, body) = if e.deflate {
            let mut enc =
                flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::best());
            enc.write_all(&e.data).unwrap();
            (8u16, enc.finish().unwrap())
        } else {
            (0u16, e.data.clone())
        };
        let crc = crc32fast::hash(&e.data);
        let size = e.declared.unwrap_or(e.data.len() as u32);
        let offset = out.len() as u32;
        let name = e.name.as_bytes();
        let mut local = Vec::new();
        local.extend(0x0403_4b50u32.to_le_bytes());
        local.extend(20u16.to_le_bytes());
        local.extend(0u16.to_le_bytes());
        local.extend(method.to_le_bytes());
        local.extend(0u32.to_le_bytes()); // time, date
        local.extend(crc.to_le_bytes());
        local.extend((body.len() as u32).to_le_bytes());
        local.extend(size.to_le_bytes());
        local.extend((name.len() as u16).to_le_bytes());
        local.extend(0u16.to_le_bytes());
        local.extend(name);
        out.extend(local);
        out.extend(&body);
        central.extend(0x0201_4b50u32.to_le_bytes());
        central.extend((3u16 << 8 | 20).to_le_bytes());
        central.extend(20u16.to_le_bytes());
        central.extend(0u16.to_le_bytes());
        central.extend(method.to_le_bytes());
        central.extend(0u32.to_le_bytes());
        central.extend(crc.to_le_bytes());
        central.extend((body.len() as u32).to_le_bytes());
        central.extend(size.to_le_bytes());
        central.extend((name.len() as u16).to_le_bytes());
        central.extend([0u8; 8]); // extra, comment, disk, internal attrs
        central.extend(e.external.to_le_bytes());
        central.extend(offset.to_le_bytes());
        central.extend(name);
    }
    let cd_offset = out.len() as u32;
    let cd_len = central.len() as u32;
    out.extend(central);
    out.extend(0x0605_4b50u32.to_le_bytes());
    out.extend([0u8; 4]);
    out.extend((entries.len() as u16).to_le_bytes());
    out.extend((entries.len() as u16).to_le_bytes());
    out.extend(cd_len.to_le_bytes());
    out.extend(cd_offset.to_le_bytes());
    out.extend(0u16.to_le_bytes());
    out
}

fn manifest(files: &[(&str, &[u8])]) -> PackManifest {
    PackManifest {
        format_version: FORMAT_VERSION,
        name: "demo".into(),
        version: "0.1.0".into(),
        connector: "acme/demo".into(),
        description: String::new(),
        host_api: "^0.1".into(),
        platforms: vec!["go".into()],
        missing: Vec::new(),
        component: COMPONENT_ENTRY.into(),
        document: "example/demo.graph.json".into(),
        files: files
            .iter()
            .map(|(path, data)| FileEntry {
                path: (*path).into(),
                sha256: sha256_hex(data),
                size: data.len() as u64,
            })
            .collect(),
        limits: Default::default(),
    }
}

const COMPONENT: &[u8] = b"\0asm-not-really";
const DOC: &[u8] = b"{}";

/// The entries of a well-formed pack, manifest last.
fn good_entries() -> Vec<Raw> {
    let m = manifest(&[
        (COMPONENT_ENTRY, COMPONENT),
        ("example/demo.graph.json", DOC),
    ]);
    vec![
        raw(COMPONENT_ENTRY, COMPONENT),
        raw("example/demo.graph.json", DOC),
        raw(
            "svc-pack.json",
            serde_json::to_string(&m).unwrap().as_bytes(),
        ),
    ]
}

fn refusal(bytes: &[u8]) -> (String, String) {
    let d = open_pack("evil.svc-pack.zip", bytes).unwrap_err();
    assert_eq!(d.file.as_deref(), Some("evil.svc-pack.zip"));
    assert!(d.hint.is_some(), "{d:?}");
    (d.code, d.message)
}

#[test]
fn a_crafted_good_pack_opens_and_so_does_a_written_one() {
    let pack = open_pack("good", &craft(&good_entries())).unwrap();
    assert_eq!(pack.component(), COMPONENT);
    let mut files = BTreeMap::new();
    files.insert(COMPONENT_ENTRY.to_string(), COMPONENT.to_vec());
    files.insert("example/demo.graph.json".to_string(), DOC.to_vec());
    let bytes = write_pack(manifest(&[]), files.clone()).unwrap();
    assert_eq!(
        bytes,
        write_pack(manifest(&[]), files).unwrap(),
        "packing is deterministic"
    );
    let pack = open_pack("written", &bytes).unwrap();
    assert_eq!(pack.manifest.files.len(), 2);
}

#[test]
fn zip_slip_is_refused() {
    let mut e = good_entries();
    e.insert(0, raw("../evil.sh", b"#!/bin/sh"));
    assert_eq!(refusal(&craft(&e)).0, "zip-unsafe-path");
    let mut e = good_entries();
    e.insert(0, raw("templates/../../evil.sh", b"x"));
    assert_eq!(refusal(&craft(&e)).0, "zip-unsafe-path");
}

#[test]
fn absolute_paths_are_refused() {
    let mut e = good_entries();
    e.insert(0, raw("/etc/passwd", b"x"));
    let (code, message) = refusal(&craft(&e));
    assert_eq!(code, "zip-unsafe-path");
    assert!(message.contains("/etc/passwd"), "{message}");
}

#[test]
fn duplicate_entries_are_refused() {
    let mut e = good_entries();
    e.push(raw(COMPONENT_ENTRY, b"a second component"));
    assert_eq!(refusal(&craft(&e)).0, "zip-duplicate");
}

#[test]
fn symlinks_are_refused() {
    let mut e = good_entries();
    let mut link = raw("templates/go/link", b"/etc/passwd");
    link.external = SYMLINK;
    e.insert(0, link);
    assert_eq!(refusal(&craft(&e)).0, "zip-symlink");
}

#[test]
fn a_hash_mismatch_is_refused() {
    let mut e = good_entries();
    e[0].data = b"\0asm-tampered!!".to_vec(); // same size, other bytes
    let (code, message) = refusal(&craft(&e));
    assert_eq!(code, "pack-hash-mismatch");
    assert!(message.contains(COMPONENT_ENTRY), "{message}");
}

#[test]
fn unlisted_and_missing_entries_are_refused() {
    let mut e = good_entries();
    e.insert(0, raw("extra.txt", b"smuggled"));
    assert_eq!(refusal(&craft(&e)).0, "pack-unlisted-entry");
    let mut e = good_entries();
    e.remove(1);
    assert_eq!(refusal(&craft(&e)).0, "pack-missing-entry");
}

#[test]
fn too_many_entries_are_refused() {
    let mut e: Vec<Raw> = (0..4100).map(|i| raw(&format!("f/{i}"), b"")).collect();
    e.extend(good_entries());
    assert_eq!(refusal(&craft(&e)).0, "zip-too-many-entries");
}

#[test]
fn oversized_entries_are_refused() {
    let mut e = good_entries();
    let mut big = raw("templates/go/big.go", b"small really");
    big.declared = Some(100 << 20);
    e.insert(0, big);
    assert_eq!(refusal(&craft(&e)).0, "zip-too-large");
}

#[test]
fn compression_bombs_are_refused() {
    let mut e = good_entries();
    let mut bomb = raw("templates/go/bomb.go", &vec![0u8; 8 << 20]);
    bomb.deflate = true;
    e.insert(0, bomb);
    assert_eq!(refusal(&craft(&e)).0, "zip-ratio");
}

#[test]
fn a_pack_without_manifest_or_for_another_host_is_refused() {
    let mut e = good_entries();
    e.pop();
    assert_eq!(refusal(&craft(&e)).0, "pack-manifest");

    let mut m = manifest(&[
        (COMPONENT_ENTRY, COMPONENT),
        ("example/demo.graph.json", DOC),
    ]);
    m.host_api = "^2".into();
    let mut e = good_entries();
    e[2].data = serde_json::to_vec(&m).unwrap();
    assert_eq!(refusal(&craft(&e)).0, "host-api");

    m.host_api = "^0.1".into();
    m.format_version = 9;
    e[2].data = serde_json::to_vec(&m).unwrap();
    assert_eq!(refusal(&craft(&e)).0, "pack-format");
}

#[test]
fn a_pack_asking_for_limits_over_the_host_maximum_is_refused() {
    let mut m = manifest(&[
        (COMPONENT_ENTRY, COMPONENT),
        ("example/demo.graph.json", DOC),
    ]);
    let mut e = good_entries();
    m.limits.memory_mib = Some(512);
    e[2].data = serde_json::to_vec(&m).unwrap();
    let pack = open_pack("within", &craft(&e)).unwrap();
    assert_eq!(pack.manifest.limits.memory_mib, Some(512));

    m.limits.timeout_ms = Some(3_600_000);
    e[2].data = serde_json::to_vec(&m).unwrap();
    let (code, message) = refusal(&craft(&e));
    assert_eq!(code, "pack-manifest");
    assert!(message.contains("limits.timeoutMs"), "{message}");
}

#[test]
fn garbage_is_refused() {
    assert_eq!(refusal(b"PK\x03\x04 not a zip at all").0, "zip-malformed");
}
