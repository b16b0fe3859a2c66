//! `svc-config`: project configuration as the Python SDK reads it
//! (`svc.config`), behind `svc get` and `svc compile` without a document:
//! env.yaml exported first (never over an existing variable), then
//! application.json or application.yaml, `${NAME}` resolved from the
//! environment. The shared vectors in fixtures/config/ test both
//! implementations; `fuzz/` fuzzes [`Sources::load`] and [`compiled_text`].
//!
//! * [`yaml`]: the YAML subset, resolved by the SDK's scalar rules.
//! * [`json`]: JSON text byte for byte as Python's `json.dumps` writes it;
//!   `json_read` reads application.json as `json.loads` does.

pub mod json;
mod json_read;
pub mod yaml;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use yaml::Yaml;

/// A configuration problem, said plainly.
#[derive(Debug)]
pub struct ConfigError(pub String);

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// One configuration file's text and the name its errors show.
#[derive(Debug, Clone)]
pub struct Source {
    pub name: String,
    pub text: String,
}

impl Source {
    fn read(path: &Path) -> Result<Option<Self>, ConfigError> {
        if !path.is_file() {
            return Ok(None);
        }
        let text = std::fs::read_to_string(path)
            .map_err(|e| ConfigError(format!("{}: {e}", path.display())))?;
        Ok(Some(Source {
            name: path.display().to_string(),
            text,
        }))
    }

    fn yaml(&self) -> Result<Yaml, ConfigError> {
        yaml::parse(&self.text).map_err(|e| ConfigError(format!("{}: {e}", self.name)))
    }

    /// An application file's top level: a mapping, `null` read as `{}`.
    fn top_level(&self, value: Yaml) -> Result<Yaml, ConfigError> {
        match value {
            Yaml::Null => Ok(Yaml::Map(Vec::new())),
            map @ Yaml::Map(_) => Ok(map),
            _ => Err(ConfigError(format!(
                "{} must hold a mapping at the top level",
                self.name
            ))),
        }
    }
}

/// The configuration files of a project root, read but not yet understood
/// (the file system stays out of the rules, so they can be fuzzed).
#[derive(Debug, Clone, Default)]
pub struct Sources {
    pub env_yaml: Option<Source>,
    pub application_json: Option<Source>,
    pub application_yaml: Option<Source>,
}

impl Sources {
    /// Reads what [`Sources::load`] uses: application.yaml only when there
    /// is no application.json, as the SDK does (a stale or broken YAML file
    /// beside the JSON one is never opened).
    pub fn read(root: &Path) -> Result<Self, ConfigError> {
        let application_json = Source::read(&root.join("application.json"))?;
        let application_yaml = match application_json {
            Some(_) => None,
            None => Source::read(&root.join("application.yaml"))?,
        };
        Ok(Sources {
            env_yaml: Source::read(&root.join("env.yaml"))?,
            application_json,
            application_yaml,
        })
    }

    /// env.yaml's exports, then application.json (else application.yaml)
    /// with its references resolved.
    pub fn load(&self) -> Result<Loaded, ConfigError> {
        let mut exports = BTreeMap::new();
        if let Some(env_file) = &self.env_yaml {
            match env_file.yaml()? {
                Yaml::Map(entries) => {
                    let mut vars = Vec::new();
                    flatten_env(&entries, "", &mut vars);
                    for (name, value) in vars {
                        if std::env::var_os(&name).is_none() {
                            exports.insert(name, value);
                        }
                    }
                }
                Yaml::Null => {}
                _ => {
                    return Err(ConfigError(format!(
                        "{} must be a mapping of names to values",
                        env_file.name
                    )))
                }
            }
        }
        let (config, source) = if let Some(json_file) = &self.application_json {
            let value = json_read::parse(&json_file.text)
                .map_err(|e| ConfigError(format!("{}: {e}", json_file.name)))?;
            (value, json_file)
        } else if let Some(yaml_file) = &self.application_yaml {
            (yaml_file.yaml()?, yaml_file)
        } else {
            return Ok(Loaded {
                config: Yaml::Map(Vec::new()),
                exports,
            });
        };
        let config = source.top_level(config)?;
        let mut loaded = Loaded {
            config: Yaml::Null,
            exports,
        };
        loaded.config = resolve_refs(config, &loaded);
        Ok(loaded)
    }
}

/// The variables an env.yaml mapping exports: nested keys flattened to
/// UPPER_SNAKE, numbers as written, lists as compact JSON, empty skipped.
pub fn flatten_env(entries: &[(String, Yaml)], prefix: &str, out: &mut Vec<(String, String)>) {
    for (key, value) in entries {
        let name: String = key
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '_' {
                    c.to_ascii_uppercase()
                } else {
                    '_'
                }
            })
            .collect();
        let name = format!("{prefix}{name}");
        match value {
            Yaml::Map(nested) => flatten_env(nested, &format!("{name}_"), out),
            Yaml::Null => {}
            Yaml::Str(s) if s.is_empty() => {}
            Yaml::Str(s) => out.push((name, s.clone())),
            Yaml::Bool(b) => out.push((name, b.to_string())),
            Yaml::Int(text, _) | Yaml::Float(text, _) => out.push((name, text.clone())),
            list @ Yaml::List(_) => out.push((name, json::compact(list))),
        }
    }
}

/// The loaded configuration and the variables env.yaml adds.
pub struct Loaded {
    pub config: Yaml,
    pub exports: BTreeMap<String, String>,
}

impl Loaded {
    /// A variable: the process environment first, then env.yaml.
    pub fn var(&self, name: &str) -> Option<String> {
        std::env::var(name)
            .ok()
            .or_else(|| self.exports.get(name).cloned())
    }
}

/// Reads and loads the configuration of a project root.
pub fn load(root: &Path) -> Result<Loaded, ConfigError> {
    Sources::read(root)?.load()
}

/// Replaces `${NAME}` in strings; a value that is exactly `${NAME}` becomes
/// null when NAME is unset.
fn resolve_refs(v: Yaml, env: &Loaded) -> Yaml {
    match v {
        Yaml::Str(s) if s.contains("${") => {
            if let Some(name) = s
                .strip_prefix("${")
                .and_then(|r| r.strip_suffix('}'))
                .filter(|n| is_name(n))
            {
                return env.var(name).map_or(Yaml::Null, Yaml::Str);
            }
            let mut out = String::new();
            let mut rest = s.as_str();
            while let Some(start) = rest.find("${") {
                out.push_str(&rest[..start]);
                let after = &rest[start + 2..];
                match after.find('}').filter(|end| is_name(&after[..*end])) {
                    Some(end) => {
                        out.push_str(&env.var(&after[..end]).unwrap_or_default());
                        rest = &after[end + 1..];
                    }
                    None => {
                        out.push_str("${");
                        rest = after;
                    }
                }
            }
            out.push_str(rest);
            Yaml::Str(out)
        }
        Yaml::List(items) => Yaml::List(items.into_iter().map(|v| resolve_refs(v, env)).collect()),
        Yaml::Map(entries) => Yaml::Map(
            entries
                .into_iter()
                .map(|(k, v)| (k, resolve_refs(v, env)))
                .collect(),
        ),
        other => other,
    }
}

fn is_name(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// One step of a config path.
#[derive(Debug, PartialEq)]
pub enum Step {
    Key(String),
    Index(usize),
}

/// `a.b[0].c` → keys and indexes; `None` when malformed.
pub fn parse_path(path: &str) -> Option<Vec<Step>> {
    let mut steps = Vec::new();
    for part in path.split('.') {
        let key_end = part.find('[').unwrap_or(part.len());
        let key = &part[..key_end];
        if key.is_empty() || key.contains(']') {
            return None;
        }
        steps.push(Step::Key(key.to_string()));
        let mut rest = &part[key_end..];
        while !rest.is_empty() {
            let inner = rest.strip_prefix('[')?;
            let end = inner.find(']')?;
            let digits = &inner[..end];
            if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            steps.push(Step::Index(digits.parse().ok()?));
            rest = &inner[end + 1..];
        }
    }
    Some(steps)
}

/// The value at a path, if present.
pub fn lookup<'a>(config: &'a Yaml, steps: &[Step]) -> Option<&'a Yaml> {
    let mut value = config;
    for step in steps {
        value = match (step, value) {
            (Step::Key(k), Yaml::Map(entries)) => {
                entries.iter().find(|(key, _)| key == k).map(|(_, v)| v)?
            }
            (Step::Index(i), Yaml::List(items)) => items.get(*i)?,
            _ => return None,
        };
    }
    Some(value)
}

/// What `svc get <path>` prints (without the trailing newline).
pub fn get(root: &Path, path: &str) -> Result<String, ConfigError> {
    let steps = parse_path(path).ok_or_else(|| {
        ConfigError(format!(
            "malformed config path {path:?}: use keys and [index], like a.b[0].c"
        ))
    })?;
    let loaded = load(root)?;
    Ok(lookup(&loaded.config, &steps).map_or_else(|| "null".to_string(), json::compact))
}

/// The application.json that `svc compile` writes for an application.yaml
/// (references kept as written, never resolved).
pub fn compiled_text(src: &Source) -> Result<String, ConfigError> {
    let data = src.top_level(src.yaml()?)?;
    Ok(format!("{}\n", json::pretty(&data)))
}

/// `svc compile` without a document: application.yaml → application.json.
pub fn compile(root: &Path, out_dir: Option<&Path>, force: bool) -> Result<PathBuf, ConfigError> {
    let path = root.join("application.yaml");
    let Some(src) = Source::read(&path)? else {
        return Err(ConfigError(format!("{} does not exist", path.display())));
    };
    let text = compiled_text(&src)?;
    let out = out_dir.unwrap_or(root).join("application.json");
    if out.exists()
        && !force
        && std::fs::read_to_string(&out).ok().as_deref() != Some(text.as_str())
    {
        return Err(ConfigError(format!(
            "{} exists and differs: pass --force to replace it",
            out.display()
        )));
    }
    if let Some(parent) = out.parent() {
        std::fs::create_dir_all(parent)
            .map_err(|e| ConfigError(format!("{}: {e}", parent.display())))?;
    }
    std::fs::write(&out, text).map_err(|e| ConfigError(format!("{}: {e}", out.display())))?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn yaml_only(text: &str) -> Sources {
        Sources {
            application_yaml: Some(Source {
                name: "application.yaml".into(),
                text: text.into(),
            }),
            ..Sources::default()
        }
    }

    #[test]
    fn the_top_level_is_a_mapping() {
        let empty = yaml_only("# nothing yet\n").load().map(|l| l.config);
        assert_eq!(empty.ok(), Some(Yaml::Map(Vec::new())));
        let list = yaml_only("- a\n- b\n").load().map(|l| l.config);
        assert_eq!(
            list.err().map(|e| e.0),
            Some("application.yaml must hold a mapping at the top level".into())
        );
    }

    #[test]
    fn application_yaml_is_not_opened_beside_application_json() {
        let dir = std::env::temp_dir().join(format!("svc-config-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("application.json"), "{\"a\": 1}").unwrap();
        std::fs::write(dir.join("application.yaml"), b"a: \xff\n").unwrap();
        let got = get(&dir, "a").map_err(|e| e.0);
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(got, Ok("1".to_string()));
    }

    #[test]
    fn paths() {
        assert_eq!(
            parse_path("a.b[0][2].c"),
            Some(vec![
                Step::Key("a".into()),
                Step::Key("b".into()),
                Step::Index(0),
                Step::Index(2),
                Step::Key("c".into())
            ])
        );
        for bad in ["", "a..b", "a[x]", "[0]", "a[0", "a]"] {
            assert_eq!(parse_path(bad), None, "{bad}");
        }
    }
}
