//! JSON text exactly as Python's `json.dumps(..., ensure_ascii=False)`
//! writes it (compact, or `indent=2`), so `svc get` and `svc compile` agree
//! byte for byte with the Python SDK.

use super::yaml::Yaml;

/// Python's `repr(float)`: the shortest round-trip digits, in fixed notation
/// for exponents from -4 to 15 (with `.0` when integral), else `1e+21`.
pub fn python_float(v: f64) -> String {
    if v.is_nan() {
        return "NaN".into();
    }
    if v.is_infinite() {
        return if v > 0.0 {
            "Infinity".into()
        } else {
            "-Infinity".into()
        };
    }
    let sci = format!("{v:e}");
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let negative = mantissa.starts_with('-');
    let digits: String = mantissa.chars().filter(|c| c.is_ascii_digit()).collect();
    let sign = if negative { "-" } else { "" };
    if (-4..16).contains(&exp) {
        let point = exp + 1;
        let body = if point <= 0 {
            format!("0.{}{digits}", "0".repeat((-point) as usize))
        } else if point as usize >= digits.len() {
            format!("{digits}{}.0", "0".repeat(point as usize - digits.len()))
        } else {
            format!(
                "{}.{}",
                &digits[..point as usize],
                &digits[point as usize..]
            )
        };
        format!("{sign}{body}")
    } else {
        let (first, rest) = digits.split_at(1);
        let frac = if rest.is_empty() {
            String::new()
        } else {
            format!(".{rest}")
        };
        let esign = if exp < 0 { "-" } else { "+" };
        format!("{sign}{first}{frac}e{esign}{:02}", exp.abs())
    }
}

fn string(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_default()
}

fn scalar(v: &Yaml) -> Option<String> {
    Some(match v {
        Yaml::Null => "null".into(),
        Yaml::Bool(b) => b.to_string(),
        Yaml::Int(text, value) => match value {
            Some(i) => i.to_string(),
            None => text.trim_start_matches('+').to_string(),
        },
        Yaml::Float(_, f) => python_float(*f),
        Yaml::Str(s) => string(s),
        Yaml::List(_) | Yaml::Map(_) => return None,
    })
}

/// `json.dumps(v, separators=(",", ":"), ensure_ascii=False)`
pub fn compact(v: &Yaml) -> String {
    if let Some(s) = scalar(v) {
        return s;
    }
    match v {
        Yaml::List(items) => format!(
            "[{}]",
            items.iter().map(compact).collect::<Vec<_>>().join(",")
        ),
        Yaml::Map(entries) => format!(
            "{{{}}}",
            entries
                .iter()
                .map(|(k, v)| format!("{}:{}", string(k), compact(v)))
                .collect::<Vec<_>>()
                .join(",")
        ),
        _ => String::new(),
    }
}

/// `json.dumps(v, indent=2, ensure_ascii=False)`
pub fn pretty(v: &Yaml) -> String {
    let mut out = String::new();
    write_pretty(v, 0, &mut out);
    out
}

fn write_pretty(v: &Yaml, level: usize, out: &mut String) {
    if let Some(s) = scalar(v) {
        out.push_str(&s);
        return;
    }
    let pad = |n: usize| "  ".repeat(n);
    match v {
        Yaml::List(items) if items.is_empty() => out.push_str("[]"),
        Yaml::Map(entries) if entries.is_empty() => out.push_str("{}"),
        Yaml::List(items) => {
            out.push_str("[\n");
            for (i, item) in items.iter().enumerate() {
                out.push_str(&pad(level + 1));
                write_pretty(item, level + 1, out);
                out.push_str(if i + 1 < items.len() { ",\n" } else { "\n" });
            }
            out.push_str(&pad(level));
            out.push(']');
        }
        Yaml::Map(entries) => {
            out.push_str("{\n");
            for (i, (k, item)) in entries.iter().enumerate() {
                out.push_str(&pad(level + 1));
                out.push_str(&string(k));
                out.push_str(": ");
                write_pretty(item, level + 1, out);
                out.push_str(if i + 1 < entries.len() { ",\n" } else { "\n" });
            }
            out.push_str(&pad(level));
            out.push('}');
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_like_python() {
        for (v, want) in [
            (2.0, "2.0"),
            (0.1, "0.1"),
            (-0.25, "-0.25"),
            (1e21, "1e+21"),
            (1.5e-7, "1.5e-07"),
            (1e16, "1e+16"),
            (123456789012345.0, "123456789012345.0"),
            (0.0001, "0.0001"),
        ] {
            assert_eq!(python_float(v), want, "{v}");
        }
    }
}
