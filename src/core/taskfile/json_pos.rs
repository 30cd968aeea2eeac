//! Where each value of a JSON text starts, by JSON pointer, as a 1-based line and character
//! column, so problems found on a parsed `Value` point at the user's text. Never panics or loops:
//! on text that is not JSON it stops with what it found.

use std::collections::HashMap;
use std::fmt;

/// A 1-based line and column; columns count characters, not bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Location {
    pub line: usize,
    pub column: usize,
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.line, self.column)
    }
}

/// Where one value is: its first character, and for an object member the opening quote of its key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry {
    pub value: Location,
    pub key: Option<Location>,
}

/// A key written twice in one object: serde_json keeps the last, so the first is lost on rewrite.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DuplicateKey {
    /// The member's JSON pointer, e.g. `/tasks/0/agent`.
    pub pointer: String,
    /// Key positions of the first and of the repeated occurrence.
    pub first: Location,
    pub repeat: Location,
}

/// Positions of every value of a document, by JSON pointer (RFC 6901; the root is `""`).
#[derive(Debug, Clone, Default)]
pub struct PositionIndex {
    entries: HashMap<String, Entry>,
    duplicates: Vec<DuplicateKey>,
}

impl PositionIndex {
    pub fn get(&self, pointer: &str) -> Option<Entry> {
        self.entries.get(pointer).copied()
    }

    /// Where the value at `pointer` starts (`{`, `[`, `"`, a digit, `-`, `t`, `f` or `n`).
    pub fn value(&self, pointer: &str) -> Option<Location> {
        self.get(pointer).map(|e| e.value)
    }

    /// Where the key of the member at `pointer` starts (its opening quote).
    pub fn key(&self, pointer: &str) -> Option<Location> {
        self.get(pointer).and_then(|e| e.key)
    }

    pub fn duplicate_keys(&self) -> &[DuplicateKey] {
        &self.duplicates
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

/// Escapes one object key as a JSON pointer token (`~` → `~0`, `/` → `~1`).
pub fn pointer_token(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

/// The character column of a byte column on a line (both 1-based, as serde_json's errors give
/// them). Never less than 1.
pub fn char_column(text: &str, line: usize, byte_column: usize) -> usize {
    let Some(line_text) = text.split('\n').nth(line.saturating_sub(1)) else {
        return byte_column.max(1);
    };
    let count = line_text
        .char_indices()
        .take_while(|(i, _)| *i < byte_column)
        .count();
    count.max(1)
}

/// Deeper than serde_json's own limit (128), so pointers cannot grow without bound.
const MAX_DEPTH: usize = 256;

/// Scans `text` and returns the position of every value in it.
pub fn locate(text: &str) -> PositionIndex {
    let mut scanner = Scanner {
        chars: text.chars().collect(),
        at: 0,
        here: Location { line: 1, column: 1 },
        index: PositionIndex::default(),
    };
    scanner.run();
    scanner.index
}

enum Frame {
    Object { pointer: String },
    Array { pointer: String, next: usize },
}

struct Scanner {
    chars: Vec<char>,
    at: usize,
    here: Location,
    index: PositionIndex,
}

impl Scanner {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.at).copied()
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.at += 1;
        if c == '\n' {
            self.here.line += 1;
            self.here.column = 1;
        } else {
            self.here.column += 1;
        }
        Some(c)
    }

    fn skip_ws(&mut self) {
        while matches!(self.peek(), Some(' ' | '\t' | '\n' | '\r')) {
            self.bump();
        }
    }

    fn run(&mut self) {
        let mut stack: Vec<Frame> = Vec::new();
        let mut expected: Option<(String, Option<Location>)> = Some((String::new(), None));
        loop {
            if let Some((pointer, key)) = expected.take() {
                self.skip_ws();
                let Some(c) = self.peek() else { return };
                self.record(&pointer, key);
                match c {
                    '{' | '[' if stack.len() >= MAX_DEPTH => return,
                    '{' => {
                        self.bump();
                        self.skip_ws();
                        if self.peek() == Some('}') {
                            self.bump();
                        } else {
                            expected = Some(match self.member(&pointer) {
                                Some(next) => next,
                                None => return,
                            });
                            stack.push(Frame::Object { pointer });
                            continue;
                        }
                    }
                    '[' => {
                        self.bump();
                        self.skip_ws();
                        if self.peek() == Some(']') {
                            self.bump();
                        } else {
                            expected = Some((format!("{pointer}/0"), None));
                            stack.push(Frame::Array { pointer, next: 0 });
                            continue;
                        }
                    }
                    '"' => {
                        self.bump();
                        if self.string().is_none() {
                            return;
                        }
                    }
                    _ => {
                        if !self.scalar() {
                            return;
                        }
                    }
                }
            }
            // After a complete value: a separator or the end of its container.
            self.skip_ws();
            let next = self.peek();
            match stack.last_mut() {
                None => return,
                Some(Frame::Object { pointer }) => match next {
                    Some(',') => {
                        self.bump();
                        let pointer = pointer.clone();
                        expected = Some(match self.member(&pointer) {
                            Some(member) => member,
                            None => return,
                        });
                    }
                    Some('}') => {
                        self.bump();
                        stack.pop();
                    }
                    _ => return,
                },
                Some(Frame::Array { pointer, next: n }) => match next {
                    Some(',') => {
                        *n += 1;
                        expected = Some((format!("{pointer}/{n}"), None));
                        self.bump();
                    }
                    Some(']') => {
                        self.bump();
                        stack.pop();
                    }
                    _ => return,
                },
            }
        }
    }

    /// Reads `"key":` and returns the member's pointer and key position.
    fn member(&mut self, object: &str) -> Option<(String, Option<Location>)> {
        self.skip_ws();
        if self.peek() != Some('"') {
            return None;
        }
        let key_at = self.here;
        self.bump();
        let key = self.string()?;
        self.skip_ws();
        if self.bump() != Some(':') {
            return None;
        }
        Some((format!("{object}/{}", pointer_token(&key)), Some(key_at)))
    }

    /// Reads the rest of a string after its opening quote, decoding escapes.
    fn string(&mut self) -> Option<String> {
        let mut out = String::new();
        loop {
            match self.bump()? {
                '"' => return Some(out),
                '\\' => match self.bump()? {
                    'b' => out.push('\u{8}'),
                    'f' => out.push('\u{c}'),
                    'n' => out.push('\n'),
                    'r' => out.push('\r'),
                    't' => out.push('\t'),
                    'u' => out.push(self.unicode_escape()?),
                    other => out.push(other),
                },
                c => out.push(c),
            }
        }
    }

    /// After `\u`: four hex digits, and for a high surrogate the `\uXXXX` low half after it.
    fn unicode_escape(&mut self) -> Option<char> {
        let high = self.hex4()?;
        if !(0xD800..0xDC00).contains(&high) {
            return Some(char::from_u32(high).unwrap_or(char::REPLACEMENT_CHARACTER));
        }
        let pair_follows = self.peek() == Some('\\') && self.chars.get(self.at + 1) == Some(&'u');
        if !pair_follows {
            return Some(char::REPLACEMENT_CHARACTER);
        }
        self.bump();
        self.bump();
        let low = self.hex4()?;
        if !(0xDC00..0xE000).contains(&low) {
            return Some(char::REPLACEMENT_CHARACTER);
        }
        let code = 0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00);
        Some(char::from_u32(code).unwrap_or(char::REPLACEMENT_CHARACTER))
    }

    fn hex4(&mut self) -> Option<u32> {
        let mut value = 0;
        for _ in 0..4 {
            value = value * 16 + self.bump()?.to_digit(16)?;
        }
        Some(value)
    }

    /// A number, `true`, `false` or `null`. False when there is none here.
    fn scalar(&mut self) -> bool {
        let start = self.at;
        while matches!(self.peek(), Some(c) if c.is_ascii_alphanumeric() || matches!(c, '-' | '+' | '.'))
        {
            self.bump();
        }
        self.at > start
    }

    fn record(&mut self, pointer: &str, key: Option<Location>) {
        if let Some(repeat) = key
            && let Some(first) = self.index.entries.get(pointer).and_then(|e| e.key)
        {
            // The repeated member replaces the first one wholly, as in serde_json.
            let children = format!("{pointer}/");
            self.index.entries.retain(|p, _| !p.starts_with(&children));
            self.index
                .duplicates
                .retain(|d| !d.pointer.starts_with(&children));
            self.index.duplicates.push(DuplicateKey {
                pointer: pointer.to_string(),
                first,
                repeat,
            });
        }
        let entry = Entry {
            value: self.here,
            key,
        };
        self.index.entries.insert(pointer.to_string(), entry);
    }
}

#[cfg(test)]
mod tests;
