//! A connector's config, declared once: a Rust type deriving serde's
//! `Deserialize` and schemars' `JsonSchema`, its fields documented (the
//! designer shows each doc comment beside its field, the host gives it as
//! the hint of a value that breaks it; the type's own doc comment is not
//! shown, so keep it for developers). [`schema`] is what `info()`
//! publishes; the host checks every node's config against it, svc's formats
//! included (`svc_ir::config_formats`, through [`FieldName`], [`Template`],
//! [`Url`] and [`Headers`]), before it calls `render`, which [`read`]s the
//! config as the type. Those types also hold to their format when they are
//! read, by the same check, for a host older than the formats (it skips
//! formats it does not know).

use schemars::generate::SchemaSettings;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::Diagnostic;

/// The JSON Schema (draft 2020-12) of the config type `T`. An `Option`
/// field may be left out, not set to `null`.
pub fn schema<T: JsonSchema>() -> Value {
    let mut settings = SchemaSettings::draft2020_12();
    // One object, no `$ref`: the host and the designer read a value's
    // schema (its description, its format) where the value is.
    settings.inline_subschemas = true;
    let mut schema = settings
        .into_generator()
        .into_root_schema_for::<T>()
        .to_value();
    drop_null(&mut schema);
    schema
}

/// JSON Schema's `integer` takes `5000.0` (a number whose fraction is
/// zero) and the host accepts it; serde's integers do not, so such numbers
/// become integers before the config is read.
fn whole_numbers(value: &mut Value) {
    match value {
        Value::Number(n) if n.is_f64() => {
            let f = n.as_f64().unwrap_or(f64::NAN);
            // Within ±2^53 an f64 holds the integer exactly.
            if f.fract() == 0.0 && f.abs() <= 9_007_199_254_740_992.0 {
                #[allow(clippy::cast_possible_truncation)] // whole and in range
                let i = f as i64;
                *value = Value::from(i);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(whole_numbers),
        Value::Object(map) => map.values_mut().for_each(whole_numbers),
        _ => {}
    }
}

/// schemars lets an `Option` be `null`; a config leaves it out instead
/// (one way to say "not set"), so `null` goes from every schema's types.
fn drop_null(schema: &mut Value) {
    match schema {
        Value::Object(map) => {
            if let Some(Value::Array(types)) = map.get_mut("type") {
                types.retain(|t| t != "null");
                if let [only] = types.as_slice() {
                    let only = only.clone();
                    map.insert("type".into(), only);
                }
            }
            if let Some(Value::Array(any)) = map.get_mut("anyOf") {
                any.retain(|s| {
                    s.get("type").is_none_or(|t| t != "null")
                        || s.as_object().is_some_and(|o| o.len() > 1)
                });
                if let [only] = any.as_slice() {
                    let only = only.clone();
                    map.remove("anyOf");
                    if let Value::Object(inner) = only {
                        for (k, v) in inner {
                            map.entry(k).or_insert(v);
                        }
                    }
                }
            }
            map.values_mut().for_each(drop_null);
        }
        Value::Array(items) => items.iter_mut().for_each(drop_null),
        _ => {}
    }
}

/// A node's config as `T`. The host has checked it against [`schema`], so
/// this fails only for a caller that skipped the host (a test calling
/// `render` directly).
pub fn read<T: DeserializeOwned>(config: &Value) -> Result<T, Vec<Diagnostic>> {
    let mut config = config.clone();
    whole_numbers(&mut config);
    T::deserialize(&config).map_err(|e| {
        vec![Diagnostic::error(
            &crate::codes::INVALID_CONFIG,
            format!("the node's config does not match the connector's config schema: {e}"),
        )
        .at("")
        .hint(
            "compile with svc, which checks the config against the schema and names each problem",
        )]
    })
}

/// A string field whose schema names one of svc's formats; the host has
/// checked the value against it, and reading it checks again only for a
/// host that did not know the format.
macro_rules! formatted {
    ($(#[$doc:meta])* $name:ident, $format:expr) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Eq)]
        pub struct $name(pub String);

        impl std::ops::Deref for $name {
            type Target = str;
            fn deref(&self) -> &str {
                &self.0
            }
        }

        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let text = String::deserialize(d)?;
                formatted(&text, $format)?;
                Ok($name(text))
            }
        }

        impl JsonSchema for $name {
            fn inline_schema() -> bool {
                true
            }
            fn schema_name() -> std::borrow::Cow<'static, str> {
                stringify!($name).into()
            }
            fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
                schemars::json_schema!({ "type": "string", "format": $format })
            }
        }
    };
}

/// `text` holds to the svc format `format`, or the error says why.
fn formatted<E: serde::de::Error>(text: &str, format: &str) -> Result<(), E> {
    match svc_ir::config_formats::check(format, text) {
        Some(problem) => Err(E::custom(format!(
            "{}: {}",
            problem.code.name, problem.message
        ))),
        None => Ok(()),
    }
}

formatted!(
    /// A state field's name (`svc-field-name`). A list of them with
    /// `#[schemars(extend("uniqueItems" = true))]` names each once.
    FieldName,
    svc_ir::config_formats::FIELD_NAME
);
formatted!(
    /// Text whose `{{field}}` placeholders name state fields, filled when
    /// the node runs (`svc-template`).
    Template,
    "svc-template"
);
formatted!(
    /// `env:NAME`, or an http(s) URL that may hold `{{field}}` (`svc-url`).
    Url,
    "svc-url"
);

/// HTTP headers in the order written: names of the format
/// `svc-header-name`, values of `svc-header-value` (`env:NAME`, or one
/// line that may hold `{{field}}`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Headers(pub Vec<(String, String)>);

impl JsonSchema for Headers {
    fn inline_schema() -> bool {
        true
    }
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Headers".into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "type": "object",
            "propertyNames": { "format": "svc-header-name" },
            "additionalProperties": { "type": "string", "format": "svc-header-value" }
        })
    }
}

impl<'de> serde::Deserialize<'de> for Headers {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct InOrder;
        impl<'de> serde::de::Visitor<'de> for InOrder {
            type Value = Headers;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an object of header names to string values")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<Headers, A::Error> {
                let mut out = Vec::new();
                while let Some((name, value)) = map.next_entry::<String, String>()? {
                    formatted(&name, "svc-header-name")?;
                    formatted(&value, "svc-header-value")?;
                    out.push((name, value));
                }
                Ok(Headers(out))
            }
        }
        d.deserialize_map(InOrder)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // test code
    use super::*;
    use serde_json::json;

    /// A config as a connector declares one.
    #[derive(Debug, serde::Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields, rename_all = "camelCase")]
    struct Example {
        /// Where to send it.
        url: Url,
        #[schemars(extend("uniqueItems" = true))]
        fields: Option<Vec<FieldName>>,
        #[serde(default)]
        headers: Headers,
        #[serde(default = "ten")]
        #[schemars(range(min = 1))]
        timeout_ms: u64,
    }

    fn ten() -> u64 {
        10
    }

    #[test]
    fn the_schema_names_svc_formats_inline_and_no_null() {
        let s = schema::<Example>();
        assert_eq!(s["additionalProperties"], false);
        assert_eq!(s["required"], json!(["url"]));
        let p = &s["properties"];
        assert_eq!(
            p["url"],
            json!({"type": "string", "format": "svc-url", "description": "Where to send it."})
        );
        assert_eq!(p["fields"]["type"], "array");
        assert_eq!(p["fields"]["uniqueItems"], true);
        assert_eq!(
            p["fields"]["items"],
            json!({"type": "string", "format": "svc-field-name"})
        );
        assert_eq!(
            p["headers"]["propertyNames"],
            json!({"format": "svc-header-name"})
        );
        assert_eq!(p["timeoutMs"]["minimum"], 1);
        assert!(s.get("$defs").is_none(), "{s}");
    }

    #[test]
    fn a_checked_config_reads_as_the_type_headers_in_order() {
        let e: Example =
            read(&json!({"url": "env:HOOK", "headers": {"B": "2", "A": "env:X"}})).unwrap();
        assert_eq!(&*e.url, "env:HOOK");
        assert_eq!(e.fields, None);
        assert_eq!(
            e.headers.0,
            [("B".into(), "2".into()), ("A".into(), "env:X".into())]
        );
        assert_eq!(e.timeout_ms, 10);
        let d = read::<Example>(&json!({"url": 3})).unwrap_err();
        assert_eq!(d[0].code, "invalid-config");
    }

    #[test]
    fn a_whole_number_written_with_a_fraction_reads_as_an_integer() {
        let e: Example = read(&json!({"url": "env:HOOK", "timeoutMs": 5000.0})).unwrap();
        assert_eq!(e.timeout_ms, 5000);
        assert!(read::<Example>(&json!({"url": "env:HOOK", "timeoutMs": 1.5})).is_err());
    }

    /// A host older than svc's formats skips them: reading holds to them.
    #[test]
    fn reading_holds_to_the_formats_a_host_may_have_skipped() {
        for bad in [
            json!({"url": "ftp://x"}),
            json!({"url": "env:HOOK", "fields": ["no-dash"]}),
            json!({"url": "env:HOOK", "headers": {"Host": "x"}}),
            json!({"url": "env:HOOK", "headers": {"X-A": "a\nb"}}),
        ] {
            let d = read::<Example>(&bad).unwrap_err();
            assert_eq!(d[0].code, "invalid-config", "{bad}");
        }
        let d = read::<Example>(&json!({"url": "ftp://x"})).unwrap_err();
        assert!(
            d[0].message.contains("invalid-endpoint"),
            "{}",
            d[0].message
        );
    }
}
