//! One line of PTY output, terminal noise skipped, told apart as a JSON event or anything else.

use serde_json::{Map, Value};

/// What one line held.
pub(super) enum Line {
    /// Nothing but whitespace, control bytes and escape sequences.
    Blank,
    /// A JSON object with a string `"type"`.
    Event(Map<String, Value>),
    /// A JSON text that ended before it was complete.
    Truncated,
    /// Anything else: a warning, a stack trace, JSON that is not an event.
    Other,
}

/// Reads one line (without its `\n`; a trailing `\r` is fine).
pub(super) fn read(bytes: &[u8]) -> Line {
    let body = skip_noise(bytes);
    if body.is_empty() {
        return Line::Blank;
    }
    if body.first() != Some(&b'{') {
        return Line::Other;
    }
    let mut values = serde_json::Deserializer::from_slice(body).into_iter::<Value>();
    match values.next() {
        Some(Ok(Value::Object(object))) => {
            let rest = body.get(values.byte_offset()..).unwrap_or_default();
            let is_event = object.get("type").is_some_and(Value::is_string);
            if is_event && skip_noise(rest).is_empty() {
                Line::Event(object)
            } else {
                Line::Other
            }
        }
        Some(Err(error)) if error.is_eof() => Line::Truncated,
        _ => Line::Other,
    }
}

/// The line without escape sequences and control bytes (for Codex's tracing `ERROR` lines).
pub(super) fn plain_text(bytes: &[u8]) -> String {
    let mut kept = Vec::with_capacity(bytes.len());
    let mut at = 0;
    while let Some(&byte) = bytes.get(at) {
        match byte {
            0x1b => at = after_escape(bytes, at),
            0x00..=0x1f | 0x7f => at += 1,
            _ => {
                kept.push(byte);
                at += 1;
            }
        }
    }
    String::from_utf8_lossy(&kept).trim().to_string()
}

/// Whether the text after the noise starts a JSON object.
pub(super) fn starts_like_json(bytes: &[u8]) -> bool {
    skip_noise(bytes).first() == Some(&b'{')
}

/// The bytes after any leading whitespace, control bytes, escape sequences and byte-order mark.
pub(super) fn skip_noise(bytes: &[u8]) -> &[u8] {
    let mut at = 0;
    while let Some(&byte) = bytes.get(at) {
        at = match byte {
            0x1b => after_escape(bytes, at),
            0x00..=0x20 | 0x7f => at + 1,
            0xef if bytes.get(at..at + 3) == Some(b"\xef\xbb\xbf") => at + 3,
            _ => break,
        };
    }
    bytes.get(at..).unwrap_or_default()
}

/// The index after the escape sequence at `at`: to the end when cut short, before the breaking
/// byte when malformed.
fn after_escape(bytes: &[u8], at: usize) -> usize {
    let Some(&kind) = bytes.get(at + 1) else {
        return at + 1;
    };
    match kind {
        // CSI: parameter and intermediate bytes, then one final byte.
        b'[' => {
            let mut end = at + 2;
            while let Some(&byte) = bytes.get(end) {
                match byte {
                    0x20..=0x3f => end += 1,
                    0x40..=0x7e => return end + 1,
                    _ => return end,
                }
            }
            end
        }
        // OSC, DCS, SOS, PM, APC: a string up to BEL or ESC \.
        b']' | b'P' | b'X' | b'^' | b'_' => {
            let mut end = at + 2;
            while let Some(&byte) = bytes.get(end) {
                match byte {
                    0x07 => return end + 1,
                    0x1b if bytes.get(end + 1) == Some(&b'\\') => return end + 2,
                    0x1b => return end,
                    _ => end += 1,
                }
            }
            end
        }
        // Intermediate bytes, then a final byte (`ESC ( B`).
        0x20..=0x2f => {
            let mut end = at + 1;
            while bytes
                .get(end)
                .is_some_and(|byte| (0x20..=0x2f).contains(byte))
            {
                end += 1;
            }
            if bytes
                .get(end)
                .is_some_and(|byte| (0x30..=0x7e).contains(byte))
            {
                end + 1
            } else {
                end
            }
        }
        // Two-byte sequences (`ESC 7`, `ESC =`, `ESC M`).
        0x30..=0x7e => at + 2,
        _ => at + 1,
    }
}
