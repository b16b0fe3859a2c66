//! A small JSON parser that remembers where every key and value starts.
//!
//! serde_json forgets positions once a document is parsed; svc needs them to
//! point every diagnostic at `file:line:col`. Values keep a byte offset;
//! [`LineIndex`] turns it into a line and column only when a diagnostic is
//! printed, so parsing stays cheap for large graphs.

use serde_json::{Map, Number, Value};

/// Deeper nesting than this is refused instead of risking the stack.
const MAX_DEPTH: usize = 128;

#[derive(Debug, Clone, PartialEq)]
pub enum Json {
    Null,
    Bool(bool),
    Number(Number),
    String(String),
    Array(Vec<Node>),
    Object(Vec<Member>),
}

/// A value and the byte offset where it starts.
#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    pub value: Json,
    pub offset: usize,
}

/// An object member: the key, where the key starts, and the value.
#[derive(Debug, Clone, PartialEq)]
pub struct Member {
    pub key: String,
    pub key_offset: usize,
    pub value: Node,
}

impl Json {
    /// A short name of the value's JSON type, for messages.
    pub fn type_name(&self) -> &'static str {
        match self {
            Json::Null => "null",
            Json::Bool(_) => "a boolean",
            Json::Number(n) if n.is_i64() || n.is_u64() => "an integer",
            Json::Number(_) => "a number",
            Json::String(_) => "a string",
            Json::Array(_) => "an array",
            Json::Object(_) => "an object",
        }
    }
}

/// The same short type name as [`Json::type_name`], for a
/// `serde_json::Value`.
pub fn value_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "an integer",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

impl Node {
    /// The same value as a `serde_json::Value` (positions dropped).
    pub fn to_value(&self) -> Value {
        match &self.value {
            Json::Null => Value::Null,
            Json::Bool(b) => Value::Bool(*b),
            Json::Number(n) => Value::Number(n.clone()),
            Json::String(s) => Value::String(s.clone()),
            Json::Array(items) => Value::Array(items.iter().map(Node::to_value).collect()),
            Json::Object(members) => {
                let mut map = Map::new();
                for m in members {
                    map.insert(m.key.clone(), m.value.to_value());
                }
                Value::Object(map)
            }
        }
    }

    /// The member `key` of an object, if this is an object that has it.
    pub fn member(&self, key: &str) -> Option<&Member> {
        match &self.value {
            Json::Object(members) => members.iter().find(|m| m.key == key),
            _ => None,
        }
    }

    /// The byte offset of what a JSON pointer names: the value, or for the
    /// deepest existing ancestor when the pointer runs past the document
    /// (a field that normalization added, say). Keys point at the key itself
    /// so an "unknown field" diagnostic lands on the name the user typed.
    pub fn offset_of(&self, pointer: &str) -> usize {
        let mut node = self;
        let mut offset = self.offset;
        for raw in pointer.split('/').skip(1) {
            let token = raw.replace("~1", "/").replace("~0", "~");
            let next = match &node.value {
                Json::Object(members) => members
                    .iter()
                    .find(|m| m.key == token)
                    .map(|m| (m.key_offset, &m.value)),
                Json::Array(items) => token
                    .parse::<usize>()
                    .ok()
                    .and_then(|i| items.get(i))
                    .map(|n| (n.offset, n)),
                _ => None,
            };
            match next {
                Some((key_offset, child)) => {
                    offset = if matches!(node.value, Json::Object(_)) {
                        key_offset
                    } else {
                        child.offset
                    };
                    node = child;
                }
                None => break,
            }
        }
        offset
    }
}

impl Node {
    /// The value a JSON pointer names, if it exists.
    pub fn find(&self, pointer: &str) -> Option<&Node> {
        let mut node = self;
        for raw in pointer.split('/').skip(1) {
            let token = raw.replace("~1", "/").replace("~0", "~");
            node = match &node.value {
                Json::Object(members) => &members.iter().find(|m| m.key == token)?.value,
                Json::Array(items) => items.get(token.parse::<usize>().ok()?)?,
                _ => return None,
            };
        }
        Some(node)
    }
}

/// The byte offset in `text` of (1-based) `line` and `column` of the
/// decoded value of the string literal that starts at `start` (its opening
/// quote): escapes such as `\n` and `\u00e9` are one character of the
/// value. Past the end of the value: its closing quote.
pub fn offset_in_string(text: &str, start: usize, line: usize, column: usize) -> Option<usize> {
    let body = text.get(start..)?.strip_prefix('"')?;
    let (mut at_line, mut at_column) = (1, 1);
    let mut chars = body.char_indices();
    while let Some((i, c)) = chars.next() {
        if (at_line, at_column) >= (line, column) || c == '"' {
            return Some(start + 1 + i);
        }
        let decoded = if c == '\\' {
            match chars.next() {
                Some((_, 'n')) => '\n',
                Some((_, 'u')) => {
                    // Four hex digits; a surrogate pair is one character.
                    let hex: String = chars.by_ref().take(4).map(|(_, h)| h).collect();
                    if u32::from_str_radix(&hex, 16).is_ok_and(|u| (0xD800..0xDC00).contains(&u)) {
                        chars.by_ref().take(6).count();
                    }
                    ' '
                }
                _ => ' ',
            }
        } else {
            c
        };
        if decoded == '\n' {
            at_line += 1;
            at_column = 1;
        } else {
            at_column += 1;
        }
    }
    None
}

/// A syntax error with the byte offset where it was found.
#[derive(Debug, Clone, PartialEq)]
pub struct SyntaxError {
    pub message: String,
    pub offset: usize,
}

/// Parses one JSON document. Duplicate keys in an object are an error: a graph
/// with two `outputKey`s is ambiguous and serde_json would silently keep one.
pub fn parse(text: &str) -> Result<Node, SyntaxError> {
    let mut p = Parser {
        src: text.as_bytes(),
        text,
        pos: 0,
        depth: 0,
    };
    // A UTF-8 byte order mark is harmless; skip it.
    if text.starts_with('\u{feff}') {
        p.pos = 3;
    }
    p.skip_ws();
    let node = p.value()?;
    p.skip_ws();
    if p.pos < p.src.len() {
        return Err(p.error("unexpected content after the JSON document"));
    }
    Ok(node)
}

struct Parser<'a> {
    src: &'a [u8],
    text: &'a str,
    pos: usize,
    depth: usize,
}

impl Parser<'_> {
    fn error(&self, message: impl Into<String>) -> SyntaxError {
        SyntaxError {
            message: message.into(),
            offset: self.pos,
        }
    }

    fn peek(&self) -> Option<u8> {
        self.src.get(self.pos).copied()
    }

    fn skip_ws(&mut self) {
        while let Some(b' ' | b'\n' | b'\r' | b'\t') = self.peek() {
            self.pos += 1;
        }
    }

    fn expect(&mut self, byte: u8, what: &str) -> Result<(), SyntaxError> {
        if self.peek() == Some(byte) {
            self.pos += 1;
            Ok(())
        } else {
            Err(self.error(format!("expected {what}, found {}", self.found())))
        }
    }

    fn found(&self) -> String {
        match self.text.get(self.pos..).and_then(|s| s.chars().next()) {
            None => "the end of the file".to_string(),
            Some(c) => format!("`{c}`"),
        }
    }

    fn value(&mut self) -> Result<Node, SyntaxError> {
        let offset = self.pos;
        let value = match self.peek() {
            Some(b'{') => self.object()?,
            Some(b'[') => self.array()?,
            Some(b'"') => Json::String(self.string()?),
            Some(b't') => self.literal("true", Json::Bool(true))?,
            Some(b'f') => self.literal("false", Json::Bool(false))?,
            Some(b'n') => self.literal("null", Json::Null)?,
            Some(b'-' | b'0'..=b'9') => Json::Number(self.number()?),
            _ => return Err(self.error(format!("expected a JSON value, found {}", self.found()))),
        };
        Ok(Node { value, offset })
    }

    fn literal(&mut self, word: &str, value: Json) -> Result<Json, SyntaxError> {
        if self.src[self.pos..].starts_with(word.as_bytes()) {
            self.pos += word.len();
            Ok(value)
        } else {
            Err(self.error(format!("expected a JSON value, found {}", self.found())))
        }
    }

    fn enter(&mut self) -> Result<(), SyntaxError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(self.error(format!("nesting deeper than {MAX_DEPTH} levels")));
        }
        Ok(())
    }

    fn object(&mut self) -> Result<Json, SyntaxError> {
        self.enter()?;
        self.pos += 1;
        let mut members: Vec<Member> = Vec::new();
        self.skip_ws();
        if self.peek() == Some(b'}') {
            self.pos += 1;
            self.depth -= 1;
            return Ok(Json::Object(members));
        }
        loop {
            self.skip_ws();
            if self.peek() != Some(b'"') {
                return Err(self.error(format!("expected a quoted key, found {}", self.found())));
            }
            let key_offset = self.pos;
            let key = self.string()?;
            if members.iter().any(|m| m.key == key) {
                return Err(SyntaxError {
                    message: format!("duplicate key `{key}` in the same object"),
                    offset: key_offset,
                });
            }
            self.skip_ws();
            self.expect(b':', "`:` after the key")?;
            self.skip_ws();
            let value = self.value()?;
            members.push(Member {
                key,
                key_offset,
                value,
            });
            self.skip_ws();
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b'}') => {
                    self.pos += 1;
                    break;
                }
                _ => {
                    return Err(self.error(format!(
                        "expected `,` or `}}` in an object, found {}",
                        self.found()
                    )))
                }
            }
        }
        self.depth -= 1;
        Ok(Json::Object(members))
    }

    fn array(&mut self) -> Result<Json, SyntaxError> {
        self.enter()?;
        self.pos += 1;
        let mut items = Vec::new();
        self.skip_ws();
        if self.peek() == Some(b']') {
            self.pos += 1;
            self.depth -= 1;
            return Ok(Json::Array(items));
        }
        loop {
            self.skip_ws();
            items.push(self.value()?);
            self.skip_ws();
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b']') => {
                    self.pos += 1;
                    break;
                }
                _ => {
                    return Err(self.error(format!(
                        "expected `,` or `]` in an array, found {}",
                        self.found()
                    )))
                }
            }
        }
        self.depth -= 1;
        Ok(Json::Array(items))
    }

    fn string(&mut self) -> Result<String, SyntaxError> {
        self.pos += 1; // opening quote
        let mut out = String::new();
        loop {
            let start = self.pos;
            while let Some(b) = self.peek() {
                if b == b'"' || b == b'\\' || b < 0x20 {
                    break;
                }
                self.pos += 1;
            }
            // `text` is valid UTF-8 and we only stop on ASCII bytes.
            out.push_str(self.text.get(start..self.pos).unwrap_or_default());
            match self.peek() {
                Some(b'"') => {
                    self.pos += 1;
                    return Ok(out);
                }
                Some(b'\\') => {
                    self.pos += 1;
                    out.push(self.escape()?);
                }
                Some(_) => return Err(self.error("control character inside a string; escape it")),
                None => return Err(self.error("unterminated string")),
            }
        }
    }

    fn escape(&mut self) -> Result<char, SyntaxError> {
        let c = match self.peek() {
            Some(b'"') => '"',
            Some(b'\\') => '\\',
            Some(b'/') => '/',
            Some(b'b') => '\u{8}',
            Some(b'f') => '\u{c}',
            Some(b'n') => '\n',
            Some(b'r') => '\r',
            Some(b't') => '\t',
            Some(b'u') => {
                self.pos += 1;
                let first = self.hex4()?;
                if (0xD800..0xDC00).contains(&first) {
                    if !self.src[self.pos..].starts_with(b"\\u") {
                        return Err(self.error("unpaired surrogate in \\u escape"));
                    }
                    self.pos += 2;
                    let second = self.hex4()?;
                    if !(0xDC00..0xE000).contains(&second) {
                        return Err(self.error("invalid low surrogate in \\u escape"));
                    }
                    let code = 0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00);
                    return char::from_u32(code).ok_or_else(|| self.error("invalid \\u escape"));
                }
                return char::from_u32(first).ok_or_else(|| self.error("invalid \\u escape"));
            }
            _ => return Err(self.error(format!("invalid escape \\{}", self.found()))),
        };
        self.pos += 1;
        Ok(c)
    }

    fn hex4(&mut self) -> Result<u32, SyntaxError> {
        let digits = self
            .text
            .get(self.pos..self.pos + 4)
            .ok_or_else(|| self.error("incomplete \\u escape"))?;
        let code = u32::from_str_radix(digits, 16).map_err(|_| self.error("invalid \\u escape"))?;
        self.pos += 4;
        Ok(code)
    }

    fn number(&mut self) -> Result<Number, SyntaxError> {
        let start = self.pos;
        if self.peek() == Some(b'-') {
            self.pos += 1;
        }
        let digits = |p: &mut Self| {
            let s = p.pos;
            while let Some(b'0'..=b'9') = p.peek() {
                p.pos += 1;
            }
            p.pos - s
        };
        let int_start = self.pos;
        if digits(self) == 0 {
            return Err(self.error("expected digits in a number"));
        }
        if self.src[int_start] == b'0' && self.pos - int_start > 1 {
            return Err(SyntaxError {
                message: "numbers may not have leading zeros".into(),
                offset: int_start,
            });
        }
        if self.peek() == Some(b'.') {
            self.pos += 1;
            if digits(self) == 0 {
                return Err(self.error("expected digits after the decimal point"));
            }
        }
        if let Some(b'e' | b'E') = self.peek() {
            self.pos += 1;
            if let Some(b'+' | b'-') = self.peek() {
                self.pos += 1;
            }
            if digits(self) == 0 {
                return Err(self.error("expected digits in the exponent"));
            }
        }
        let lexeme = self.text.get(start..self.pos).unwrap_or_default();
        serde_json::from_str::<Number>(lexeme).map_err(|_| SyntaxError {
            message: format!("number `{lexeme}` is out of range"),
            offset: start,
        })
    }
}

/// Turns byte offsets into 1-based line and column (columns count characters).
#[derive(Debug)]
pub struct LineIndex<'a> {
    text: &'a str,
    line_starts: Vec<usize>,
}

impl<'a> LineIndex<'a> {
    pub fn new(text: &'a str) -> Self {
        let mut line_starts = vec![0];
        line_starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        LineIndex { text, line_starts }
    }

    pub fn line_col(&self, offset: usize) -> (usize, usize) {
        let line = self.line_starts.partition_point(|&s| s <= offset).max(1);
        let start = self.line_starts[line - 1];
        let col = self
            .text
            .get(start..offset.min(self.text.len()))
            .map(|s| s.chars().count())
            .unwrap_or(0);
        (line, col + 1)
    }
}

crate::diagnostic_codes! {
    /// The file is not valid JSON, or an object repeats a key.
    ///
    /// Graph documents, `svc.project.json` and the normalized IR a backend receives are strict JSON: no comments, no trailing commas, and no key twice in one object (a repeated key would make the document mean different things to different readers). The position is that of the first error.
    ///
    /// Fix the syntax at the reported line and column.
    ///
    /// # Example
    ///
    /// `fixtures/invalid/json_syntax.graph.json` (and `duplicate_json_key.graph.json`):
    ///
    /// ```json
    /// "logical": {
    ///   "nodes": [],
    /// }
    /// ```
    ///
    /// # Fix
    ///
    /// ```json
    /// "logical": {
    ///   "nodes": []
    /// }
    /// ```
    pub JSON_SYNTAX = "json-syntax", group "document";
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_values_with_offsets() {
        let doc =
            parse("{\n  \"a\": [1, -2.5e3, true, null],\n  \"b\": \"x\\u00e9\\ud83d\\ude00\"\n}")
                .expect("valid JSON");
        assert_eq!(
            doc.to_value(),
            serde_json::json!({"a": [1, -2500.0, true, null], "b": "xé😀"})
        );
        let idx = LineIndex::new("{\n  \"a\": [1, -2.5e3, true, null],\n  \"b\": \"x\"\n}");
        assert_eq!(idx.line_col(doc.offset_of("/a")), (2, 3));
        assert_eq!(idx.line_col(doc.offset_of("/a/1")), (2, 12));
        assert_eq!(idx.line_col(doc.offset_of("/b")), (3, 3));
        // Past the end of the document: the deepest existing ancestor.
        assert_eq!(idx.line_col(doc.offset_of("/a/9/x")), (2, 3));
    }

    #[test]
    fn positions_inside_a_string_count_decoded_characters() {
        let text = r#"{"b": "x = 1\n\ty\u00e9 = (\ud83d\ude00 +"}"#;
        let start = parse(text).unwrap().find("/b").unwrap().offset;
        assert_eq!(&text[start..start + 4], "\"x =");
        let at = |line, column| offset_in_string(text, start, line, column).unwrap();
        assert_eq!(&text[at(1, 1)..at(1, 1) + 1], "x");
        // Line 2 starts after `\n`; `\t` is one character, so is `\u00e9`.
        assert_eq!(&text[at(2, 1)..at(2, 1) + 2], "\\t");
        assert_eq!(&text[at(2, 3)..at(2, 3) + 6], "\\u00e9");
        // A surrogate pair is one character too.
        assert_eq!(&text[at(2, 8)..at(2, 8) + 6], "\\ud83d");
        assert_eq!(&text[at(2, 10)..at(2, 10) + 1], "+");
        // Past the end: the closing quote.
        assert_eq!(&text[at(9, 1)..], "\"}");
    }

    #[test]
    fn rejects_bad_syntax_with_position() {
        let cases = [
            ("{\"a\": 1,}", "expected a quoted key"),
            ("{\"a\": 1, \"a\": 2}", "duplicate key `a`"),
            ("[1 2]", "expected `,` or `]`"),
            ("{\"a\": 01}", "leading zeros"),
            ("\"abc", "unterminated string"),
            ("{} x", "unexpected content"),
            ("", "expected a JSON value, found the end of the file"),
        ];
        for (text, want) in cases {
            let e = parse(text).expect_err(text);
            assert!(e.message.contains(want), "{text}: {}", e.message);
        }
        let err = parse("{\n  \"a\": tru\n}").expect_err("must fail");
        assert_eq!(
            LineIndex::new("{\n  \"a\": tru\n}").line_col(err.offset),
            (2, 8)
        );
    }

    #[test]
    fn refuses_deep_nesting_without_overflowing() {
        let text = "[".repeat(100_000);
        let err = parse(&text).expect_err("must fail");
        assert!(err.message.contains("nesting deeper"));
    }
}
