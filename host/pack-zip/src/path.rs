//! Path rules shared by the reader and the writer.

/// Checks that `name` is a safe relative path and returns it as a string.
///
/// On failure returns the rule that is broken, worded for an error message.
pub(crate) fn check(name: &[u8]) -> Result<&str, &'static str> {
    if name.is_empty() {
        return Err("the name is empty");
    }
    if name.contains(&0) {
        return Err("the name contains a NUL byte");
    }
    let Ok(name) = std::str::from_utf8(name) else {
        return Err("the name is not valid UTF-8");
    };
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
            ".." => return Err("the path has a `..` component (zip-slip)"),
            "." => return Err("the path has a `.` component"),
            _ => {}
        }
    }
    Ok(name)
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
        ];
        for (name, rule) in cases {
            let err = check(name).unwrap_err();
            assert!(err.contains(rule), "{name:?}: {err}");
        }
    }
}
