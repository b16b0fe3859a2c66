//! String literals of the target languages, shared by the backends and
//! connector authors.

/// A JSON string literal, which is also a valid Go and Java string literal.
pub fn c_str(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "\"\"".to_string())
}

/// A Python string literal quoted the way `ruff format` normalizes it:
/// double quotes unless single quotes need fewer escapes.
pub fn py_str(s: &str) -> String {
    let doubles = s.matches('"').count();
    let singles = s.matches('\'').count();
    let q = if doubles > singles { '\'' } else { '"' };
    let mut out = String::with_capacity(s.len() + 2);
    out.push(q);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == q => {
                out.push('\\');
                out.push(c);
            }
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                out.push_str(&format!("\\x{:02x}", c as u32));
            }
            '\u{2028}' | '\u{2029}' | '\u{85}' => {
                out.push_str(&format!("\\u{:04x}", c as u32));
            }
            c => out.push(c),
        }
    }
    out.push(q);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals() {
        assert_eq!(c_str("a\"b\\c\n"), r#""a\"b\\c\n""#);
        assert_eq!(py_str("plain"), "\"plain\"");
        assert_eq!(py_str("say \"hi\""), "'say \"hi\"'");
        assert_eq!(py_str("it's \"x\" 'y'"), "\"it's \\\"x\\\" 'y'\"");
        assert_eq!(py_str("\u{1}\t\\"), "\"\\x01\\t\\\\\"");
    }
}
