//! The formats a connector's config schema may name for what JSON Schema
//! cannot say by itself: state field names, `{{field}}` templates, URLs
//! and HTTP headers. The host registers each with its JSON Schema
//! validator, so a node's config is checked once, against the schema its
//! connector publishes, and a value that breaks a format is reported with
//! the code, message and hint written here (the validator only says
//! whether it matches). Connectors then read their config as a typed value
//! and check only what ties fields together.

use crate::codes::{Code, INVALID_ENDPOINT, INVALID_ENV_NAME, INVALID_HEADER, INVALID_VALUE};
use crate::template::{parts, Part};
use crate::{check_endpoint, is_identifier, placeholders};

/// Why a string breaks a format.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    pub code: &'static Code,
    pub message: String,
    pub hint: String,
}

type Check = fn(&str) -> Result<(), Problem>;

/// The format of a state field's name (`outputKey`, a list of fields to
/// send; such a list with `uniqueItems` that names one twice is a
/// `duplicate-field`).
pub const FIELD_NAME: &str = "svc-field-name";

/// Every format, by the name a schema gives in `"format"`.
pub const FORMATS: [(&str, Check); 6] = [
    (FIELD_NAME, field_name),
    // Text whose `{{field}}` placeholders name state fields.
    ("svc-template", template),
    // Text fixed when the graph compiles: no `{{field}}` in it.
    ("svc-literal", literal),
    // `env:NAME`, or an http(s) URL that may hold `{{field}}`.
    ("svc-url", url),
    // An HTTP header name a service may set.
    ("svc-header-name", header_name),
    // `env:NAME`, or one line of text that may hold `{{field}}`.
    ("svc-header-value", header_value),
];

/// The problem of `value` under the format `name`; `None` when it matches,
/// or when `name` is not one of [`FORMATS`].
pub fn check(name: &str, value: &str) -> Option<Problem> {
    let (_, check) = FORMATS.iter().find(|(n, _)| *n == name)?;
    check(value).err()
}

fn problem(code: &'static Code, message: String, hint: &str) -> Problem {
    Problem {
        code,
        message,
        hint: hint.to_string(),
    }
}

fn field_name(value: &str) -> Result<(), Problem> {
    if is_identifier(value) {
        return Ok(());
    }
    Err(problem(
        &INVALID_FIELD_NAME,
        format!("`{value}` is not a state field name"),
        "use the name of a state field: letters, digits and `_`, not starting with a digit",
    ))
}

fn template(value: &str) -> Result<(), Problem> {
    match placeholders(value).into_iter().find(|f| !is_identifier(f)) {
        Some(f) => Err(problem(
            &INVALID_FIELD_NAME,
            format!("the placeholder `{{{{{f}}}}}` does not name a state field"),
            "write `{{field}}` with the name of a state field, which is filled in when the node runs",
        )),
        None => Ok(()),
    }
}

fn literal(value: &str) -> Result<(), Problem> {
    if !placeholders(value).is_empty() {
        return Err(problem(
            &INVALID_VALUE,
            format!("`{value}` holds a `{{{{field}}}}` placeholder, but this value is fixed when the graph compiles"),
            "write it without `{{`; the connector fills `{{field}}` only where its config says so",
        ));
    }
    Ok(())
}

/// `env:NAME` with a variable's name.
fn env_reference(value: &str) -> Option<Result<(), Problem>> {
    let name = value.strip_prefix("env:")?;
    Some(if is_identifier(name) {
        Ok(())
    } else {
        Err(problem(
            &INVALID_ENV_NAME,
            format!("`{value}` does not name an environment variable"),
            "write env:NAME with a variable name (letters, digits and `_`, not starting with a digit); secrets are never written into the graph",
        ))
    })
}

fn url(value: &str) -> Result<(), Problem> {
    if let Some(reference) = env_reference(value) {
        return reference;
    }
    template(value)?;
    // Placeholders are filled when the node runs; the rest must be a URL.
    let literal: String = parts(value)
        .into_iter()
        .map(|p| match p {
            Part::Text(t) => t,
            Part::Field(_) => "x",
        })
        .collect();
    check_endpoint(&literal).map_err(|why| {
        let hint = if is_identifier(value) {
            format!("to read the URL from the variable {value}, write \"env:{value}\"")
        } else {
            "write env:NAME to read the URL from the environment when the service runs (a URL is often a secret), or an http(s) URL".to_string()
        };
        Problem {
            code: &INVALID_ENDPOINT,
            message: why.replace(&format!("`{literal}`"), &format!("`{value}`")),
            hint,
        }
    })
}

/// Headers the HTTP clients of every target set themselves (Java's refuses
/// them).
const CLIENT_HEADERS: [&str; 7] = [
    "connection",
    "content-length",
    "expect",
    "host",
    "te",
    "transfer-encoding",
    "upgrade",
];

fn header_name(value: &str) -> Result<(), Problem> {
    // An HTTP token (RFC 9110).
    let token = !value.is_empty()
        && value
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b));
    if !token {
        return Err(problem(
            &INVALID_HEADER,
            format!("`{value}` is not a valid header name"),
            "header names are letters, digits and !#$%&'*+-.^_`|~",
        ));
    }
    if CLIENT_HEADERS.contains(&value.to_ascii_lowercase().as_str()) {
        return Err(problem(
            &INVALID_HEADER,
            format!("header `{value}` is set by the HTTP client and cannot be configured"),
            "remove it",
        ));
    }
    Ok(())
}

fn header_value(value: &str) -> Result<(), Problem> {
    if value.contains(['\r', '\n', '\0']) {
        return Err(problem(
            &INVALID_HEADER,
            "the header's value holds a line break or NUL".to_string(),
            "write the value on one line",
        ));
    }
    env_reference(value).unwrap_or_else(|| template(value))
}

crate::diagnostic_codes! {
    /// A connector config names a state field, or uses a {{placeholder}}, that is not a valid field name.
    ///
    /// Connector configs refer to state fields (`outputKey`, `fields`, `field`, `hitField`) and insert them into text with `{{field}}`. These must be identifiers (`^[A-Za-z_][A-Za-z0-9_]*$`), because they become names in the generated code. The host checks them where a connector's config schema names the format `svc-field-name` or `svc-template`.
    ///
    /// Use the name of a state field.
    ///
    /// # Example
    ///
    /// `svc/webhook`:
    ///
    /// ```json
    /// "config": { "url": "env:HOOK", "fields": ["ok", "no-dash"] }
    /// ```
    ///
    /// # Fix
    ///
    /// ```json
    /// "config": { "url": "env:HOOK", "fields": ["ok", "no_dash"] }
    /// ```
    pub INVALID_FIELD_NAME = "invalid-field-name", group "connector";
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code(name: &str, value: &str) -> Option<&'static str> {
        check(name, value).map(|p| p.code.name)
    }

    #[test]
    fn each_format_accepts_its_values_and_names_what_breaks_it() {
        assert_eq!(code("svc-field-name", "answer_2"), None);
        assert_eq!(
            code("svc-field-name", "no-dash"),
            Some("invalid-field-name")
        );
        assert_eq!(code("svc-template", "answer:{{question}}"), None);
        assert_eq!(
            code("svc-template", "{{not a field}}"),
            Some("invalid-field-name")
        );
        assert_eq!(code("svc-url", "env:HOOK"), None);
        assert_eq!(code("svc-url", "https://x/{{id}}?q=1"), None);
        assert_eq!(code("svc-url", "env:1BAD"), Some("invalid-env-name"));
        assert_eq!(
            code("svc-url", "ftp://example.com"),
            Some("invalid-endpoint")
        );
        assert_eq!(
            code("svc-url", "https://x/{{a b}}"),
            Some("invalid-field-name")
        );
        assert_eq!(code("svc-header-name", "X-Source"), None);
        assert_eq!(code("svc-header-name", "X A"), Some("invalid-header"));
        assert_eq!(code("svc-header-name", "Host"), Some("invalid-header"));
        assert_eq!(code("svc-header-value", "env:TOKEN"), None);
        assert_eq!(code("svc-header-value", "Bearer {{token}}"), None);
        assert_eq!(code("svc-header-value", "a\nb"), Some("invalid-header"));
        assert_eq!(
            code("svc-header-value", "env:no way"),
            Some("invalid-env-name")
        );
        assert_eq!(
            code("svc-header-value", "{{1x}}"),
            Some("invalid-field-name")
        );
        // Not one of ours: the validator's own formats answer for it.
        assert_eq!(code("uri", "not a uri"), None);
    }

    #[test]
    fn a_bare_variable_name_as_url_gets_a_hint() {
        let p = check("svc-url", "WEBHOOK_URL").unwrap();
        assert_eq!(p.message, "endpoint `WEBHOOK_URL` is not an http(s) URL");
        assert_eq!(
            p.hint,
            "to read the URL from the variable WEBHOOK_URL, write \"env:WEBHOOK_URL\""
        );
    }
}
