//! Text for the screen: display widths, wrapping, placeholders, and [`Row`], a builder for one
//! row with colours and `CSI nG` column moves as Ink-based CLIs write them. Pure.

use unicode_width::UnicodeWidthStr;

/// The columns a plain (escape-free) text takes.
pub(super) fn width_of(text: &str) -> usize {
    UnicodeWidthStr::width(text)
}

/// Values for the `{placeholders}` in scenario texts.
#[derive(Debug, Clone, Default)]
pub(super) struct Placeholders {
    pub pairs: Vec<(&'static str, String)>,
}

impl Placeholders {
    pub(super) fn set(&mut self, name: &'static str, value: impl Into<String>) {
        let value = value.into();
        match self.pairs.iter_mut().find(|(known, _)| *known == name) {
            Some(pair) => pair.1 = value,
            None => self.pairs.push((name, value)),
        }
    }

    /// `template` with every known `{name}` replaced, in one pass (a value holding `{name}`
    /// stays as it is).
    pub(super) fn fill(&self, template: &str) -> String {
        let mut text = String::with_capacity(template.len());
        let mut rest = template;
        while let Some(open) = rest.find('{') {
            text.push_str(&rest[..open]);
            let candidate = &rest[open + 1..];
            let known = candidate.find('}').and_then(|close| {
                let name = &candidate[..close];
                self.pairs
                    .iter()
                    .find(|(known, _)| *known == name)
                    .map(|(_, value)| (value, close))
            });
            match known {
                Some((value, close)) => {
                    text.push_str(value);
                    rest = &candidate[close + 1..];
                }
                None => {
                    text.push('{');
                    rest = candidate;
                }
            }
        }
        text.push_str(rest);
        text
    }
}

/// Splits `text` into rows of at most `first_width`, then `rest_width` columns, at spaces and
/// line breaks; a word longer than a row is cut.
pub(super) fn wrap(text: &str, first_width: usize, rest_width: usize) -> Vec<String> {
    let mut rows = vec![String::new()];
    for (paragraph_index, paragraph) in text.split('\n').enumerate() {
        if paragraph_index > 0 {
            rows.push(String::new());
        }
        for word in paragraph.split(' ').filter(|word| !word.is_empty()) {
            place_word(&mut rows, word, first_width, rest_width);
        }
    }
    rows
}

fn place_word(rows: &mut Vec<String>, word: &str, first_width: usize, rest_width: usize) {
    let limit = |row_count: usize| {
        if row_count == 1 {
            first_width.max(1)
        } else {
            rest_width.max(1)
        }
    };
    let current_width = rows.last().map_or(0, |row| width_of(row));
    if current_width > 0 {
        if current_width + 1 + width_of(word) <= limit(rows.len()) {
            if let Some(row) = rows.last_mut() {
                row.push(' ');
                row.push_str(word);
            }
            return;
        }
        rows.push(String::new());
    }
    // The row is empty: the word starts here and is cut where a row is full.
    for ch in word.chars() {
        let current = rows.last().map_or(0, |row| width_of(row));
        if current > 0 && current + width_of(ch.encode_utf8(&mut [0; 4])) > limit(rows.len()) {
            rows.push(String::new());
        }
        if let Some(row) = rows.last_mut() {
            row.push(ch);
        }
    }
}

/// Like [`wrap`], but every copy of `isolated` gets a row of its own.
pub(super) fn wrap_isolating(
    text: &str,
    isolated: &str,
    first_width: usize,
    rest_width: usize,
) -> Vec<String> {
    if isolated.is_empty() || !text.contains(isolated) {
        return wrap(text, first_width, rest_width);
    }
    let mut rows: Vec<String> = Vec::new();
    let mut pieces = text.split(isolated).peekable();
    while let Some(piece) = pieces.next() {
        let piece = piece.trim();
        if !piece.is_empty() {
            let first = if rows.is_empty() {
                first_width
            } else {
                rest_width
            };
            rows.extend(wrap(piece, first, rest_width));
        }
        if pieces.peek().is_some() {
            rows.push(isolated.to_string());
        }
    }
    rows
}

/// Cuts `text` to `width` columns, ending in `…` when something was cut.
pub(super) fn truncate(text: &str, width: usize) -> String {
    if width_of(text) <= width {
        return text.to_string();
    }
    let mut kept = String::new();
    for ch in text.chars() {
        if width_of(&kept) + width_of(ch.encode_utf8(&mut [0; 4])) + 1 > width {
            break;
        }
        kept.push(ch);
    }
    kept.push('…');
    kept
}

/// One screen row being built. Tracks the column so callers can place things at absolute
/// columns (1-based, like `CSI nG`).
#[derive(Debug, Clone, Default)]
pub(super) struct Row {
    bytes: String,
    /// The 1-based column the next character lands on.
    column: usize,
}

impl Row {
    pub(super) fn new() -> Row {
        Row {
            bytes: String::new(),
            column: 1,
        }
    }

    pub(super) fn column(&self) -> usize {
        self.column
    }

    /// Plain text at the current column.
    pub(super) fn text(mut self, text: &str) -> Row {
        self.bytes.push_str(text);
        self.column += width_of(text);
        self
    }

    /// Words separated by cursor moves instead of spaces, as Claude Code draws them.
    pub(super) fn words(mut self, text: &str) -> Row {
        let mut skipped_spaces = false;
        for (index, word) in text.split(' ').enumerate() {
            if index > 0 {
                self.column += 1;
                skipped_spaces = true;
            }
            if word.is_empty() {
                continue;
            }
            if skipped_spaces {
                let column = self.column;
                self = self.goto(column);
                skipped_spaces = false;
            }
            self = self.text(word);
        }
        if skipped_spaces {
            let column = self.column;
            self = self.goto(column);
        }
        self
    }

    /// Moves to a 1-based column with `CSI nG`.
    pub(super) fn goto(mut self, column: usize) -> Row {
        self.bytes.push_str(&format!("\x1b[{column}G"));
        self.column = column;
        self
    }

    /// Spaces up to (not including) the 1-based `column`.
    pub(super) fn pad_to(self, column: usize) -> Row {
        let spaces = column.saturating_sub(self.column);
        self.text(&" ".repeat(spaces))
    }

    pub(super) fn fg(mut self, color: u8) -> Row {
        self.bytes.push_str(&format!("\x1b[38;5;{color}m"));
        self
    }

    pub(super) fn bg(mut self, color: u8) -> Row {
        self.bytes.push_str(&format!("\x1b[48;5;{color}m"));
        self
    }

    pub(super) fn default_fg(mut self) -> Row {
        self.bytes.push_str("\x1b[39m");
        self
    }

    pub(super) fn default_bg(mut self) -> Row {
        self.bytes.push_str("\x1b[49m");
        self
    }

    pub(super) fn bold(mut self) -> Row {
        self.bytes.push_str("\x1b[1m");
        self
    }

    pub(super) fn dim(mut self) -> Row {
        self.bytes.push_str("\x1b[2m");
        self
    }

    /// Ends bold and dim.
    pub(super) fn normal(mut self) -> Row {
        self.bytes.push_str("\x1b[22m");
        self
    }

    pub(super) fn inverse(mut self) -> Row {
        self.bytes.push_str("\x1b[7m");
        self
    }

    pub(super) fn no_inverse(mut self) -> Row {
        self.bytes.push_str("\x1b[27m");
        self
    }

    pub(super) fn italic(mut self) -> Row {
        self.bytes.push_str("\x1b[3m");
        self
    }

    pub(super) fn reset(mut self) -> Row {
        self.bytes.push_str("\x1b[0m");
        self
    }

    /// The finished row's bytes.
    pub(super) fn build(self) -> String {
        self.bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrap_breaks_at_spaces_and_cuts_long_words() {
        assert_eq!(wrap("aa bb cc", 5, 5), vec!["aa bb", "cc"]);
        assert_eq!(wrap("aa bb cc", 2, 8), vec!["aa", "bb cc"]);
        assert_eq!(wrap("abcdefg", 3, 3), vec!["abc", "def", "g"]);
        assert_eq!(wrap("a\nb c", 10, 10), vec!["a", "b c"]);
        assert_eq!(wrap("", 10, 10), vec![""]);
    }

    #[test]
    fn isolating_puts_the_marker_on_its_own_row() {
        let rows = wrap_isolating("Do X. Print exactly: DONE:1 then stop.", "DONE:1", 40, 40);
        assert_eq!(rows, vec!["Do X. Print exactly:", "DONE:1", "then stop."]);
        let at_end = wrap_isolating("Print exactly: DONE:1", "DONE:1", 40, 40);
        assert_eq!(at_end, vec!["Print exactly:", "DONE:1"]);
    }

    #[test]
    fn truncate_ends_with_an_ellipsis() {
        assert_eq!(truncate("abcdef", 4), "abc…");
        assert_eq!(truncate("abc", 4), "abc");
    }

    #[test]
    fn words_use_column_moves() {
        let row = Row::new().goto(5).words("Do you  want").build();
        assert_eq!(row, "\x1b[5GDo\x1b[8Gyou\x1b[13Gwant");
        let padded = Row::new().words(" a ");
        assert_eq!(padded.column(), 4);
        assert_eq!(padded.build(), "\x1b[2Ga\x1b[4G");
    }

    #[test]
    fn placeholders_fill_known_names_only() {
        let mut values = Placeholders::default();
        values.set("marker", "TASK_COMPLETE:t1");
        values.set("marker", "TASK_COMPLETE:t2");
        assert_eq!(
            values.fill("● {marker} {other}"),
            "● TASK_COMPLETE:t2 {other}"
        );
        assert_eq!(values.fill("{{marker}} {"), "{TASK_COMPLETE:t2} {");
    }

    #[test]
    fn filled_values_are_not_filled_again() {
        let mut values = Placeholders::default();
        values.set("prompt", "say {marker} and {prompt}");
        values.set("marker", "M");
        assert_eq!(
            values.fill("{prompt} / {marker}"),
            "say {marker} and {prompt} / M"
        );
    }
}
