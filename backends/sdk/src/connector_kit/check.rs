//! Checks of a node's `config`, collected as diagnostics whose pointers are
//! relative to the config (`/url`), each with a hint.

use crate::template::{parts, Part};
use crate::Diagnostic;
use serde_json::{Map, Value};
use svc_ir::diag::{did_you_mean, pointer_token};
use svc_ir::is_identifier;
use svc_ir::json::value_kind;

/// Diagnostics found so far.
#[derive(Default)]
pub struct Check {
    pub diags: Vec<Diagnostic>,
}

/// The pointer of `key` inside the object at `base`.
pub fn child(base: &str, key: &str) -> String {
    format!("{base}/{}", pointer_token(key))
}

impl Check {
    pub fn push(&mut self, code: &svc_ir::codes::Code, message: String, pointer: &str, hint: &str) {
        self.diags
            .push(Diagnostic::error(code, message).at(pointer).hint(hint));
    }

    fn wrong_type(&mut self, what: &str, want: &str, v: &Value, pointer: &str, hint: &str) {
        self.push(
            &svc_ir::codes::WRONG_TYPE,
            format!("{what} must be {want}, found {}", value_kind(v)),
            pointer,
            hint,
        );
    }

    /// The config as an object, its unknown keys reported.
    pub fn object<'a>(
        &mut self,
        config: &'a Value,
        known: &[&str],
        example: &str,
    ) -> Option<&'a Map<String, Value>> {
        let Some(obj) = config.as_object() else {
            self.wrong_type("the node's `config`", "an object", config, "", example);
            return None;
        };
        for key in obj.keys() {
            if known.contains(&key.as_str()) {
                continue;
            }
            let hint = match did_you_mean(key, known.iter().copied()) {
                Some(k) => format!("did you mean `{k}`?"),
                None => format!("the fields are {}", known.join(", ")),
            };
            self.push(
                &svc_ir::codes::UNKNOWN_FIELD,
                format!("unknown config field `{key}`"),
                &child("", key),
                &hint,
            );
        }
        Some(obj)
    }

    /// A required field: reported at the config itself when absent.
    pub fn required<'a>(
        &mut self,
        obj: &'a Map<String, Value>,
        key: &str,
        hint: &str,
    ) -> Option<&'a Value> {
        let v = obj.get(key);
        if v.is_none() {
            self.push(
                &svc_ir::codes::MISSING_FIELD,
                format!("the config is missing the required field `{key}`"),
                "",
                hint,
            );
        }
        v
    }

    pub fn string<'a>(
        &mut self,
        v: &'a Value,
        what: &str,
        pointer: &str,
        hint: &str,
    ) -> Option<&'a str> {
        let s = v.as_str();
        if s.is_none() {
            self.wrong_type(what, "a string", v, pointer, hint);
        }
        s
    }

    /// An integer at least `min` and at most `max`.
    pub fn integer(
        &mut self,
        v: &Value,
        what: &str,
        pointer: &str,
        (min, max): (u64, u64),
        hint: &str,
    ) -> Option<u64> {
        let n = match v.as_i64() {
            Some(n) => n,
            None if v.is_u64() => i64::MAX,
            None => {
                self.wrong_type(what, "an integer", v, pointer, hint);
                return None;
            }
        };
        match u64::try_from(n) {
            Ok(n) if (min..=max).contains(&n) => Some(n),
            _ => {
                self.push(
                    &svc_ir::codes::OUT_OF_RANGE,
                    format!("{what} is {v}; it must be between {min} and {max}"),
                    pointer,
                    hint,
                );
                None
            }
        }
    }

    /// The name of a state field.
    pub fn field_name<'a>(&mut self, v: &'a Value, what: &str, pointer: &str) -> Option<&'a str> {
        let hint = "name a state field: a letter or `_`, then letters, digits or `_`";
        let s = self.string(v, what, pointer, hint)?;
        if !is_identifier(s) {
            self.push(
                &INVALID_FIELD_NAME,
                format!("{what} `{s}` is not a state field name"),
                pointer,
                hint,
            );
            return None;
        }
        Some(s)
    }

    /// `{{field}}` placeholders of a text must name state fields.
    pub fn placeholders(&mut self, s: &str, what: &str, pointer: &str) -> bool {
        let mut ok = true;
        for part in parts(s) {
            if let Part::Field(f) = part {
                if !is_identifier(f) {
                    self.push(
                        &INVALID_FIELD_NAME,
                        format!("{what}: the placeholder `{{{{{f}}}}}` does not name a state field"),
                        pointer,
                        "write `{{field}}` with the name of a state field, which is filled in when the node runs",
                    );
                    ok = false;
                }
            }
        }
        ok
    }

    /// `env:NAME`: the name must be an environment variable name.
    pub fn env_name(&mut self, s: &str, what: &str, pointer: &str) -> bool {
        match s.strip_prefix("env:") {
            Some(name) if !is_identifier(name) => {
                self.push(
                    &svc_ir::codes::INVALID_ENV_NAME,
                    format!("{what} `{s}` does not name an environment variable"),
                    pointer,
                    "write env:NAME with a variable name (letters, digits and `_`, not starting with a digit); secrets are never written into the graph",
                );
                false
            }
            _ => true,
        }
    }

    /// One of the `allowed` strings.
    pub fn one_of<'a>(
        &mut self,
        v: &'a Value,
        what: &str,
        pointer: &str,
        allowed: &[&str],
    ) -> Option<&'a str> {
        let hint = format!("{what} is one of {}", allowed.join(", "));
        let s = self.string(v, what, pointer, &hint)?;
        if !allowed.contains(&s) {
            self.push(
                &svc_ir::codes::INVALID_VALUE,
                format!("{what} is `{s}`"),
                pointer,
                &hint,
            );
            return None;
        }
        Some(s)
    }

    pub fn finish<T>(self, value: Option<T>) -> Result<T, Vec<Diagnostic>> {
        match value {
            Some(v) if self.diags.is_empty() => Ok(v),
            _ => Err(self.diags),
        }
    }
}

svc_ir::diagnostic_codes! {
    /// A connector config names a state field, or uses a {{placeholder}}, that is not a valid field name.
    ///
    /// Connector configs refer to state fields (`outputKey`, `fields`, `field`, `hitField`) and insert them into text with `{{field}}`. These must be identifiers (`^[A-Za-z_][A-Za-z0-9_]*$`), because they become names in the generated code.
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

    /// A connector component was asked to render for a platform it has no code for.
    ///
    /// Connectors render per platform and refuse platforms outside their own list. The host normally catches this earlier (a pack that lacks the platform reports `template-required`), so this code appears when a connector's `info()` and `render` disagree, or when it is called directly.
    ///
    /// Use a connector version that supports the platform, or compile for one it supports.
    ///
    /// # Example
    ///
    /// ```rust,ignore
    /// svc_webhook::Webhook::render("rust", &config)
    /// // error[platform-unsupported]: svc/webhook has no code for the platform `rust`
    /// ```
    ///
    /// # Fix
    ///
    /// ```rust,ignore
    /// svc_webhook::Webhook::render("go", &config)
    /// ```
    pub PLATFORM_UNSUPPORTED = "platform-unsupported", group "connector";
}
