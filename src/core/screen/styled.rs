//! A screen's visible rows as runs of cells that look the same (text with its colours and
//! attributes), for a pane drawn outside the terminal (the web view, `panes.screen` with
//! `styled`). Colours are CSS colours (`#rrggbb`); the terminal's defaults are left out.

use serde::Serialize;

/// Cells of one row that look the same.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct Run {
    pub text: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fg: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bg: Option<String>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub bold: bool,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub italic: bool,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub underline: bool,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub inverse: bool,
}

impl Run {
    fn look_of(cell: &vt100::Cell) -> Run {
        Run {
            text: String::new(),
            fg: css(cell.fgcolor()),
            bg: css(cell.bgcolor()),
            bold: cell.bold(),
            italic: cell.italic(),
            underline: cell.underline(),
            inverse: cell.inverse(),
        }
    }

    fn looks_like(&self, other: &Run) -> bool {
        (
            &self.fg,
            &self.bg,
            self.bold,
            self.italic,
            self.underline,
            self.inverse,
        ) == (
            &other.fg,
            &other.bg,
            other.bold,
            other.italic,
            other.underline,
            other.inverse,
        )
    }
}

/// The visible rows of `screen`, each as its runs; trailing blanks in the default look are
/// left out.
pub fn rows(screen: &vt100::Screen) -> Vec<Vec<Run>> {
    let (rows, cols) = screen.size();
    (0..rows.get())
        .map(|row| row_runs(screen, row, cols.get()))
        .collect()
}

fn row_runs(screen: &vt100::Screen, row: u16, cols: u16) -> Vec<Run> {
    let mut runs: Vec<Run> = Vec::new();
    for col in 0..cols {
        let Some(cell) = screen.cell(row, col) else {
            continue;
        };
        if cell.is_wide_continuation() {
            continue;
        }
        let look = Run::look_of(cell);
        let text = if cell.has_contents() {
            cell.contents()
        } else {
            " "
        };
        match runs.last_mut() {
            Some(last) if last.looks_like(&look) => last.text.push_str(text),
            _ => runs.push(Run {
                text: text.to_string(),
                ..look
            }),
        }
    }
    if let Some(last) = runs.last_mut()
        && last.looks_like(&Run::default())
    {
        last.text.truncate(last.text.trim_end().len());
    }
    runs.retain(|run| !run.text.is_empty());
    runs
}

/// xterm's 16 colours.
const BASIC: [u32; 16] = [
    0x000000, 0xcd0000, 0x00cd00, 0xcdcd00, 0x0000ee, 0xcd00cd, 0x00cdcd, 0xe5e5e5, 0x7f7f7f,
    0xff0000, 0x00ff00, 0xffff00, 0x5c5cff, 0xff00ff, 0x00ffff, 0xffffff,
];

/// A terminal colour as CSS; `None` for the terminal's default.
fn css(color: vt100::Color) -> Option<String> {
    let rgb = match color {
        vt100::Color::Default => return None,
        vt100::Color::Rgb(r, g, b) => (u32::from(r) << 16) | (u32::from(g) << 8) | u32::from(b),
        vt100::Color::Idx(i @ 0..=15) => BASIC[usize::from(i)],
        vt100::Color::Idx(i @ 16..=231) => {
            let level = |n: u8| if n == 0 { 0 } else { 55 + 40 * u32::from(n) };
            let n = i - 16;
            (level(n / 36) << 16) | (level((n / 6) % 6) << 8) | level(n % 6)
        }
        vt100::Color::Idx(i) => {
            let gray = 8 + 10 * u32::from(i - 232);
            (gray << 16) | (gray << 8) | gray
        }
    };
    Some(format!("#{rgb:06x}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn screen(bytes: &[u8]) -> vt100::Parser {
        let size = |n| std::num::NonZero::new(n).unwrap();
        let mut parser = vt100::Parser::new(size(3), size(20), 0);
        parser.process(bytes);
        parser
    }

    #[test]
    fn a_row_is_its_runs_of_one_look_each() {
        let parser = screen(b"plain \x1b[1;31mred bold\x1b[0m \x1b[38;2;1;2;3mrgb\x1b[0m");
        let rows = rows(parser.screen());
        let texts: Vec<(&str, Option<&str>, bool)> = rows[0]
            .iter()
            .map(|r| (r.text.as_str(), r.fg.as_deref(), r.bold))
            .collect();
        assert_eq!(
            texts,
            [
                ("plain ", None, false),
                ("red bold", Some("#cd0000"), true),
                (" ", None, false),
                ("rgb", Some("#010203"), false),
            ]
        );
        assert!(rows[1].is_empty(), "{:?}", rows[1]);
    }

    #[test]
    fn the_256_colours_map_to_xterms_cube_and_grays() {
        assert_eq!(css(vt100::Color::Idx(16)).as_deref(), Some("#000000"));
        assert_eq!(css(vt100::Color::Idx(196)).as_deref(), Some("#ff0000"));
        assert_eq!(css(vt100::Color::Idx(232)).as_deref(), Some("#080808"));
        assert_eq!(css(vt100::Color::Idx(255)).as_deref(), Some("#eeeeee"));
        assert_eq!(css(vt100::Color::Default), None);
    }

    #[test]
    fn inverse_and_a_background_are_kept() {
        let parser = screen(b"\x1b[7minv\x1b[0m\x1b[44mblue\x1b[0m");
        let rows = rows(parser.screen());
        assert!(rows[0][0].inverse);
        assert_eq!(rows[0][1].bg.as_deref(), Some("#0000ee"));
        let json = serde_json::to_value(&rows[0][1]).unwrap();
        assert_eq!(json, serde_json::json!({"text": "blue", "bg": "#0000ee"}));
    }
}
