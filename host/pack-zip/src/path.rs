//! The one set of rules for a relative path the host writes or unpacks:
//! archive entries (reader and writer here), files a backend emits and
//! paths in a pack project (svc-compile and svc-packs call [`check_path`]).

/// The longest path accepted, in bytes.
pub const MAX_PATH_BYTES: usize = 1024;

/// Checks that `name` is a safe relative path and returns it as a string.
///
/// On failure returns the rule that is broken, worded for an error message.
pub(crate) fn check(name: &[u8]) -> Result<&str, &'static str> {
    let Ok(name) = std::str::from_utf8(name) else {
        return Err("the name is not valid UTF-8");
    };
    check_path(name).map(|()| name)
}

/// Checks that `name` is a plain relative path (`a/b.txt`): not empty, at
/// most [`MAX_PATH_BYTES`], no NUL or control characters, `/` as the only
/// separator, not absolute, no drive prefix, no empty, `.` or `..` segment.
///
/// On failure returns the rule that is broken, worded for an error message.
pub fn check_path(name: &str) -> Result<(), &'static str> {
    if name.is_empty() {
        return Err("the name is empty");
    }
    if name.len() > MAX_PATH_BYTES {
        return Err("the path is longer than 1024 bytes");
    }
    if name.contains('\0') {
        return Err("the name contains a NUL byte");
    }
    if name.chars().any(char::is_control) {
        return Err("the name contains a control character");
    }
    if name.contains('\\') {
        return Err("the name contains a backslash (only `/` separates components)");
    }
    if name.starts_with('/') {
        return Err("the path is absolute (starts with `/`)");
    }
    if has_drive_prefix(name) {
        return Err("the path starts with a Windows drive prefix such as `C:`");
    }
    for component in name.split('/') {
        match component {
            "" => return Err("the path has an empty component (`//` or a trailing `/`)"),
            ".." => {
                return Err(
                    "the path has a `..` component, which climbs out of the project (zip-slip)",
                )
            }
            "." => return Err("the path has a `.` component"),
            _ => {}
        }
    }
    Ok(())
}

/// Whether `name` starts with an ASCII letter followed by `:`, like `C:` or `c:x`.
fn has_drive_prefix(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(
        (chars.next(), chars.next()),
        (Some(letter), Some(':')) if letter.is_ascii_alphabetic()
    )
}

#[cfg(test)]
mod tests {
    use super::check;

    #[test]
    fn accepts_plain_relative_paths() {
        for name in [
            "a",
            "a/b.txt",
            "plugin.json",
            "dir/sub/file.wasm",
            "..a/b..",
            "é/ü",
        ] {
            assert_eq!(check(name.as_bytes()), Ok(name), "{name}");
        }
    }

    #[test]
    fn refuses_each_rule() {
        let cases: &[(&[u8], &str)] = &[
            (b"", "empty"),
            (b"a\0b", "NUL"),
            (b"a\xffb", "UTF-8"),
            (b"..\\evil", "backslash"),
            (b"/etc/passwd", "absolute"),
            (b"C:/x", "drive"),
            (b"c:x", "drive"),
            (b"a//b", "empty component"),
            (b"a/", "empty component"),
            (b"../evil.txt", "zip-slip"),
            (b"a/../../evil", "zip-slip"),
            (b"a/..", "zip-slip"),
            (b"./a", "`.` component"),
            (b"a\x1b[31m", "control character"),
            (b"a\nb", "control character"),
            (&[b'a'; 1025], "longer than 1024"),
        ];
        for (name, rule) in cases {
            let err = check(name).unwrap_err();
            assert!(err.contains(rule), "{name:?}: {err}");
        }
    }
}
