//! `{{field}}` templates, split once so that every backend renders them the
//! same way in its own language, and the host checks connector configs
//! (`config_formats`) by the same rule.

/// One part of a template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Part<'a> {
    Text(&'a str),
    Field(&'a str),
}

/// The parts of a template; an unclosed `{{` is text.
pub fn parts(template: &str) -> Vec<Part<'_>> {
    let mut out = Vec::new();
    let mut rest = template;
    while let Some(start) = rest.find("{{") {
        let Some(end) = rest[start + 2..].find("}}") else {
            break;
        };
        if start > 0 {
            out.push(Part::Text(&rest[..start]));
        }
        out.push(Part::Field(rest[start + 2..start + 2 + end].trim()));
        rest = &rest[start + 2 + end + 2..];
    }
    if !rest.is_empty() {
        out.push(Part::Text(rest));
    }
    out
}

/// The field of a string that is one placeholder and nothing else (a tool
/// input such as `"{{customer}}"` passes the field's value as it is).
pub fn lone_field(s: &str) -> Option<&str> {
    match parts(s.trim()).as_slice() {
        [Part::Field(f)] => Some(f),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_text_and_fields() {
        assert_eq!(
            parts("Hi {{ name }}!"),
            [Part::Text("Hi "), Part::Field("name"), Part::Text("!")]
        );
        assert_eq!(parts("{{a}}{{b}}"), [Part::Field("a"), Part::Field("b")]);
        assert_eq!(parts("open {{ end"), [Part::Text("open {{ end")]);
        assert_eq!(parts(""), []);
        assert_eq!(lone_field(" {{x}} "), Some("x"));
        assert_eq!(lone_field("id {{x}}"), None);
    }
}
