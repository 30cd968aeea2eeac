//! How the simulated agents look: pure functions from content and width to screen rows (never
//! wider than the terminal). `claude` and `codex` imitate those CLIs; shared shapes live here.

pub(super) mod claude;
mod claude_palette;
mod claude_welcome;
pub(super) mod codex;

use super::text::{Row, width_of, wrap};

/// The live area at the bottom of the screen, erased and repainted as a whole.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct Region {
    pub rows: Vec<String>,
    /// Where the (hidden) cursor rests: row index in `rows`, 1-based column.
    pub cursor: Option<(usize, usize)>,
}

impl Region {
    pub(super) fn of(rows: Vec<String>) -> Region {
        Region { rows, cursor: None }
    }
}

/// Spinner glyphs, Claude's set.
pub(super) const SPINNER_GLYPHS: &[char] = &['·', '✢', '✳', '✶', '✻', '✽', '✻', '✶', '✳', '✢'];
/// Braille spinner glyphs, for the plain style.
pub(super) const BRAILLE_GLYPHS: &[char] = &['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

/// Text rows of a plain line, wrapped to the width, with optional colour and weight.
pub(super) fn plain_lines(
    width: usize,
    text: &str,
    color: Option<u8>,
    bold: bool,
    dim: bool,
) -> Vec<String> {
    wrap_hard(text, width)
        .into_iter()
        .map(|piece| {
            let mut row = Row::new();
            if let Some(color) = color {
                row = row.fg(color);
            }
            if bold {
                row = row.bold();
            }
            if dim {
                row = row.dim();
            }
            row = row.text(&piece);
            if bold || dim {
                row = row.normal();
            }
            if color.is_some() {
                row = row.default_fg();
            }
            row.build()
        })
        .collect()
}

/// Splits text at line breaks and cuts rows at the width, keeping spaces (indentation) as written.
pub(super) fn wrap_hard(text: &str, width: usize) -> Vec<String> {
    let width = width.max(1);
    let mut rows = Vec::new();
    for line in text.split('\n') {
        let mut row = String::new();
        for ch in line.chars() {
            if width_of(&row) + width_of(ch.encode_utf8(&mut [0; 4])) > width {
                rows.push(std::mem::take(&mut row));
            }
            row.push(ch);
        }
        rows.push(row);
    }
    rows
}

/// A full-width horizontal rule in a colour.
pub(super) fn rule(width: usize, color: u8) -> String {
    Row::new()
        .fg(color)
        .text(&"─".repeat(width))
        .default_fg()
        .build()
}

/// The plain style's spinner line: `⠋ Working… (3s)`.
pub(super) fn plain_spinner(frame: usize, text: &str, elapsed_secs: u64) -> String {
    let glyph = BRAILLE_GLYPHS[frame % BRAILLE_GLYPHS.len()];
    Row::new()
        .fg(75)
        .text(&glyph.to_string())
        .default_fg()
        .text(&format!(" {text} ({elapsed_secs}s)"))
        .build()
}

/// The plain style's input prompt: `> ` and what was typed.
pub(super) fn plain_idle(width: usize, input: &str, hint: Option<&str>) -> Region {
    let typed = super::text::truncate(input, width.saturating_sub(3));
    let mut rows = vec![
        Row::new()
            .bold()
            .text(">")
            .normal()
            .text(" ")
            .text(&typed)
            .build(),
    ];
    if let Some(hint) = hint {
        rows.push(Row::new().dim().text(hint).normal().build());
    }
    Region {
        rows,
        cursor: Some((0, 3 + width_of(&typed))),
    }
}

/// A one-line question for one key: `Press 1 to continue`.
pub(super) fn press_line(text: &str) -> Region {
    Region::of(vec![Row::new().bold().text(text).normal().build()])
}

/// Rows of wrapped text after a first-row prefix and a hanging indent, e.g. `● text`.
pub(super) fn hanging(width: usize, text: &str, indent: usize) -> Vec<String> {
    let room = width.saturating_sub(indent + 2).max(10);
    wrap(text, room, room)
}
