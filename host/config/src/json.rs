//! JSON text exactly as Python's `json.dumps(..., ensure_ascii=False)`
//! writes it (compact, or `indent=2`), so `svc get` and `svc compile` agree
//! byte for byte with the Python SDK.

use crate::yaml::Yaml;

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

/// An integer past 128 bits (`-0x1F...`, `000123...`), written in decimal
/// as Python's arbitrary-precision `int` prints it.
fn big_decimal(text: &str) -> String {
    let (negative, unsigned) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    let (radix, digits) = if let Some(hex) = unsigned.strip_prefix("0x") {
        (16, hex)
    } else if let Some(oct) = unsigned.strip_prefix("0o") {
        (8, oct)
    } else {
        (10, unsigned)
    };
    // Little-endian limbs of 10^9.
    let mut limbs: Vec<u64> = vec![0];
    for d in digits.chars().filter_map(|c| c.to_digit(radix)) {
        let mut carry = u64::from(d);
        for limb in &mut limbs {
            let v = *limb * u64::from(radix) + carry;
            *limb = v % 1_000_000_000;
            carry = v / 1_000_000_000;
        }
        while carry > 0 {
            limbs.push(carry % 1_000_000_000);
            carry /= 1_000_000_000;
        }
    }
    let mut out = String::new();
    if negative && limbs.iter().any(|l| *l != 0) {
        out.push('-');
    }
    let mut rev = limbs.iter().rev();
    if let Some(top) = rev.next() {
        out.push_str(&top.to_string());
    }
    for limb in rev {
        out.push_str(&format!("{limb:09}"));
    }
    out
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
            None => big_decimal(text),
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
    fn integers_past_128_bits_like_python() {
        let big = "1234567890123456789012345678901234567890123";
        assert_eq!(big_decimal(big), big);
        assert_eq!(big_decimal(&format!("+000{big}")), big);
        assert_eq!(big_decimal(&format!("-{big}")), format!("-{big}"));
        // 2^132, as Python's int("0x1" + "0" * 33, 16) prints it.
        assert_eq!(
            big_decimal(&format!("0x1{}", "0".repeat(33))),
            "5444517870735015415413993718908291383296"
        );
        assert_eq!(big_decimal("-0000"), "0");
    }

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
