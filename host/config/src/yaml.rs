//! The YAML of project configuration, read the way the Python SDK reads it:
//! the YAML 1.2 core schema on yaml-rust2's events, with plain scalars
//! resolved by the same rules as `svc.config` (fixtures/config/README.md),
//! and each number's text as written (env.yaml exports numbers verbatim).

use yaml_rust2::parser::{Event, MarkedEventReceiver, Parser};
use yaml_rust2::scanner::{Marker, TScalarStyle};

/// A parsed YAML value; mappings keep their order.
#[derive(Debug, Clone, PartialEq)]
pub enum Yaml {
    Null,
    Bool(bool),
    /// An integer, as written and as a value when it fits.
    Int(String, Option<i128>),
    /// A float, as written and as a value.
    Float(String, f64),
    Str(String),
    List(Vec<Yaml>),
    Map(Vec<(String, Yaml)>),
}

/// Adds a member to a mapping as a Python dict does: a repeated key keeps
/// its first place and takes the last value (PyYAML and `json.loads` alike).
pub(crate) fn insert(entries: &mut Vec<(String, Yaml)>, key: String, value: Yaml) {
    match entries.iter_mut().find(|(existing, _)| *existing == key) {
        Some(slot) => slot.1 = value,
        None => entries.push((key, value)),
    }
}

fn is_digits(s: &str, radix: u32) -> bool {
    !s.is_empty() && s.chars().all(|c| c.is_digit(radix))
}

fn strip_sign(s: &str) -> &str {
    s.strip_prefix(['-', '+']).unwrap_or(s)
}

/// Resolves a plain scalar (YAML 1.2 core schema).
pub fn resolve(text: &str) -> Yaml {
    match text {
        "" | "~" | "null" | "Null" | "NULL" => return Yaml::Null,
        "true" | "True" | "TRUE" => return Yaml::Bool(true),
        "false" | "False" | "FALSE" => return Yaml::Bool(false),
        _ => {}
    }
    if is_digits(strip_sign(text), 10) {
        return Yaml::Int(text.to_string(), text.parse::<i128>().ok());
    }
    if let Some(oct) = text.strip_prefix("0o").filter(|s| is_digits(s, 8)) {
        return Yaml::Int(text.to_string(), i128::from_str_radix(oct, 8).ok());
    }
    if let Some(hex) = text.strip_prefix("0x").filter(|s| is_digits(s, 16)) {
        return Yaml::Int(text.to_string(), i128::from_str_radix(hex, 16).ok());
    }
    let unsigned = strip_sign(text);
    match unsigned {
        ".inf" | ".Inf" | ".INF" => {
            let v = if text.starts_with('-') {
                f64::NEG_INFINITY
            } else {
                f64::INFINITY
            };
            return Yaml::Float(text.to_string(), v);
        }
        ".nan" | ".NaN" | ".NAN" if unsigned == text => {
            return Yaml::Float(text.to_string(), f64::NAN)
        }
        _ => {}
    }
    if is_float(unsigned) {
        if let Ok(v) = text.parse::<f64>() {
            return Yaml::Float(text.to_string(), v);
        }
    }
    Yaml::Str(text.to_string())
}

/// `(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?`
fn is_float(s: &str) -> bool {
    let (mantissa, exponent) = match s.find(['e', 'E']) {
        Some(i) => (&s[..i], Some(&s[i + 1..])),
        None => (s, None),
    };
    let mantissa_ok = match mantissa.split_once('.') {
        Some(("", frac)) => is_digits(frac, 10),
        Some((int, frac)) => is_digits(int, 10) && (frac.is_empty() || is_digits(frac, 10)),
        None => is_digits(mantissa, 10),
    };
    mantissa_ok && exponent.is_none_or(|e| is_digits(strip_sign(e), 10))
}

enum Frame {
    List(Vec<Yaml>),
    Map(Vec<(String, Yaml)>, Option<String>),
}

#[derive(Default)]
struct Builder {
    stack: Vec<Frame>,
    root: Option<Yaml>,
    error: Option<String>,
}

impl Builder {
    fn push(&mut self, value: Yaml) {
        match self.stack.last_mut() {
            None => self.root = Some(value),
            Some(Frame::List(items)) => items.push(value),
            Some(Frame::Map(entries, key)) => match key.take() {
                Some(k) => insert(entries, k, value),
                None => match value {
                    Yaml::Str(s) => *key = Some(s),
                    Yaml::Null => *key = Some("null".into()),
                    Yaml::Bool(b) => *key = Some(if b { "true".into() } else { "false".into() }),
                    Yaml::Int(t, v) => *key = Some(v.map_or(t, |v| v.to_string())),
                    Yaml::Float(t, _) => *key = Some(t),
                    _ => self.error = Some("mapping keys must be scalars".into()),
                },
            },
        }
    }
}

impl MarkedEventReceiver for Builder {
    fn on_event(&mut self, ev: Event, _mark: Marker) {
        match ev {
            Event::Scalar(text, style, _, tag) => {
                if tag.is_some() {
                    self.error = Some("YAML tags are not supported in configuration".into());
                }
                let value = if style == TScalarStyle::Plain {
                    resolve(&text)
                } else {
                    Yaml::Str(text)
                };
                self.push(value);
            }
            Event::SequenceStart(_, _) => self.stack.push(Frame::List(Vec::new())),
            Event::MappingStart(_, _) => self.stack.push(Frame::Map(Vec::new(), None)),
            Event::SequenceEnd | Event::MappingEnd => match self.stack.pop() {
                Some(Frame::List(items)) => self.push(Yaml::List(items)),
                Some(Frame::Map(entries, _)) => self.push(Yaml::Map(entries)),
                None => {}
            },
            Event::Alias(_) => {
                self.error =
                    Some("YAML anchors and aliases are not supported in configuration".into())
            }
            _ => {}
        }
    }
}

/// YAML's printable characters (PyYAML's check, which the SDK inherits);
/// yaml-rust2 would take a NUL for the end of the text.
fn printable(c: char) -> bool {
    matches!(c, '\t' | '\n' | '\r' | ' '..='~' | '\u{85}' | '\u{a0}'..='\u{d7ff}' | '\u{e000}'..='\u{fffd}')
        || c >= '\u{10000}'
}

/// Parses one YAML document; an empty document is `Null`.
pub fn parse(text: &str) -> Result<Yaml, String> {
    if let Some((line, (column, c))) = text.lines().enumerate().find_map(|(i, line)| {
        line.chars()
            .enumerate()
            .find(|(_, c)| !printable(*c))
            .map(|found| (i, found))
    }) {
        return Err(format!(
            "line {}, column {}: the character U+{:04X} is not allowed in YAML",
            line + 1,
            column + 1,
            u32::from(c)
        ));
    }
    let mut builder = Builder::default();
    Parser::new_from_str(text)
        .load(&mut builder, false)
        .map_err(|e| e.to_string())?;
    if let Some(e) = builder.error {
        return Err(e);
    }
    Ok(builder.root.unwrap_or(Yaml::Null))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolves_the_core_schema() {
        assert_eq!(resolve("~"), Yaml::Null);
        assert_eq!(resolve("True"), Yaml::Bool(true));
        assert_eq!(resolve("yes"), Yaml::Str("yes".into()));
        assert_eq!(resolve("-7"), Yaml::Int("-7".into(), Some(-7)));
        assert_eq!(resolve("0x1F"), Yaml::Int("0x1F".into(), Some(31)));
        assert_eq!(resolve("2.50"), Yaml::Float("2.50".into(), 2.5));
        assert_eq!(resolve(".5"), Yaml::Float(".5".into(), 0.5));
        assert_eq!(resolve("1e3"), Yaml::Float("1e3".into(), 1000.0));
        assert_eq!(resolve("1.2.3"), Yaml::Str("1.2.3".into()));
    }

    #[test]
    fn parses_in_order_and_refuses_aliases() {
        let y = parse("b: 1\na: [x, 'y']\n").expect("yaml");
        assert_eq!(
            y,
            Yaml::Map(vec![
                ("b".into(), Yaml::Int("1".into(), Some(1))),
                (
                    "a".into(),
                    Yaml::List(vec![Yaml::Str("x".into()), Yaml::Str("y".into())])
                ),
            ])
        );
        assert!(parse("a: &x 1\nb: *x\n").is_err());
    }

    #[test]
    fn refuses_characters_yaml_does_not_allow() {
        let e = parse("a: 1\n# note\0\nb: 2\n").expect_err("NUL");
        assert!(
            e.contains("line 2, column 7") && e.contains("U+0000"),
            "{e}"
        );
        assert!(parse("a: \"caf\u{e9} \u{1f600}\"\r\n").is_ok());
    }

    #[test]
    fn a_repeated_key_keeps_its_place_and_the_last_value() {
        let y = parse("a: 1\nb: 2\na: 3\n").expect("yaml");
        assert_eq!(
            y,
            Yaml::Map(vec![
                ("a".into(), Yaml::Int("3".into(), Some(3))),
                ("b".into(), Yaml::Int("2".into(), Some(2))),
            ])
        );
    }
}
