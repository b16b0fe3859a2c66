//! application.json read the way Python's `json.loads` reads it: integers of
//! any size stay exact (serde_json alone would turn one past 64 bits into a
//! float), a key written twice keeps its first place and takes the last
//! value, and mappings keep their order. serde_json does the parsing; each
//! value is visited as its raw text, so a number's digits are never lost.

use serde::de::{Deserialize, Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;

use crate::yaml::Yaml;

/// Parses one JSON document into the configuration value.
pub fn parse(text: &str) -> Result<Yaml, serde_json::Error> {
    let raw: &RawValue = serde_json::from_str(text)?;
    value(raw)
}

fn value(raw: &RawValue) -> Result<Yaml, serde_json::Error> {
    let text = raw.get();
    Ok(match text.as_bytes().first() {
        Some(b'{') => {
            let Entries(entries) = serde_json::from_str(text)?;
            let mut map: Vec<(String, Yaml)> = Vec::with_capacity(entries.len());
            for (key, raw) in entries {
                crate::yaml::insert(&mut map, key, value(raw)?);
            }
            Yaml::Map(map)
        }
        Some(b'[') => {
            let items: Vec<&RawValue> = serde_json::from_str(text)?;
            Yaml::List(items.into_iter().map(value).collect::<Result<_, _>>()?)
        }
        Some(b'"') => Yaml::Str(serde_json::from_str(text)?),
        Some(b't' | b'f') => Yaml::Bool(serde_json::from_str(text)?),
        Some(b'n') => Yaml::Null,
        // A number, already checked by serde_json: kept as written.
        _ if text.contains(['.', 'e', 'E']) => {
            let v: f64 = text.parse().unwrap_or(f64::NAN);
            Yaml::Float(text.to_string(), v)
        }
        _ => Yaml::Int(text.to_string(), text.parse::<i128>().ok()),
    })
}

/// An object's members in order, duplicates included.
struct Entries<'a>(Vec<(String, &'a RawValue)>);

impl<'de: 'a, 'a> Deserialize<'de> for Entries<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Members;
        impl<'de> Visitor<'de> for Members {
            type Value = Entries<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Entries<'de>, A::Error> {
                let mut out = Vec::new();
                while let Some(entry) = map.next_entry::<String, &'de RawValue>()? {
                    out.push(entry);
                }
                Ok(Entries(out))
            }
        }
        d.deserialize_map(Members)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_stay_as_written() {
        let big = "123456789012345678901234567890123456789012345678901234567890";
        let v = parse(&format!(
            r#"{{"a": [{big}, -7, 2.50, 1e400], "b": {{"x": 1}}, "a": 3}}"#
        ))
        .expect("json");
        let Yaml::Map(entries) = &v else {
            panic!("not a map: {v:?}")
        };
        assert_eq!(entries[0], ("a".into(), Yaml::Int("3".into(), Some(3))));
        let v = parse(&format!("[{big}, 2.50, 1e400]")).expect("json");
        assert_eq!(
            v,
            Yaml::List(vec![
                Yaml::Int(big.into(), None),
                Yaml::Float("2.50".into(), 2.5),
                Yaml::Float("1e400".into(), f64::INFINITY),
            ])
        );
        assert!(parse("{a: 1}").is_err());
        assert!(parse(r#"{"a": 1} x"#).is_err());
    }
}
