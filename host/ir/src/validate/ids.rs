//! The id and name patterns of the document.

fn matches_pattern(s: &str, first: fn(u8) -> bool, rest: fn(u8) -> bool, max: usize) -> bool {
    let b = s.as_bytes();
    !b.is_empty() && b.len() <= max && first(b[0]) && b[1..].iter().all(|c| rest(*c))
}

pub fn is_doc_id(s: &str) -> bool {
    matches_pattern(
        s,
        |c| c.is_ascii_lowercase(),
        |c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'_' || c == b'-',
        63,
    )
}

pub fn is_node_id(s: &str) -> bool {
    matches_pattern(
        s,
        |c| c.is_ascii_alphabetic(),
        |c| c.is_ascii_alphanumeric() || c == b'_',
        128,
    )
}

pub fn is_identifier(s: &str) -> bool {
    matches_pattern(
        s,
        |c| c.is_ascii_alphabetic() || c == b'_',
        |c| c.is_ascii_alphanumeric() || c == b'_',
        128,
    )
}

pub fn is_connector_id(s: &str) -> bool {
    let seg = |p: &str| {
        matches_pattern(
            p,
            |c| c.is_ascii_lowercase() || c.is_ascii_digit(),
            |c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'_' || c == b'-',
            64,
        )
    };
    matches!(s.split_once('/'), Some((a, b)) if seg(a) && seg(b))
}
