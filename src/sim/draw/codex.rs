//! Codex CLI's look (0.169, from the captured fixtures).

use super::super::text::{Row, truncate, width_of, wrap};
use super::{BRAILLE_GLYPHS, Region, hanging};

const BLUE: u8 = 75;
const COMPOSER_BACKGROUND: u8 = 234;
const KEY_WHITE: u8 = 252;
const HINT_GREY: u8 = 244;
const GREEN: u8 = 2;
const RED: u8 = 1;
const COMMAND_BLUE: u8 = 111;

/// `>_ OpenAI Codex (vX)` and the working folder.
pub(crate) fn header(version: &str, cwd: &str) -> Vec<String> {
    vec![
        String::new(),
        Row::new()
            .text("  ")
            .fg(BLUE)
            .text(">_ ")
            .default_fg()
            .bold()
            .text("OpenAI Codex")
            .normal()
            .dim()
            .text(&format!(" (v{version})"))
            .normal()
            .build(),
        Row::new().text("     ").dim().text(cwd).normal().build(),
        String::new(),
    ]
}

/// The user's message: `› ` and the prompt, wrapped, continuation rows indented by two.
pub(crate) fn echo(width: usize, prompt: &str, isolated: Option<&str>) -> Vec<String> {
    let room = width.saturating_sub(2).max(1);
    let pieces = match isolated {
        Some(isolated) => super::super::text::wrap_isolating(prompt, isolated, room, room),
        None => wrap(prompt, room, room),
    };
    pieces
        .iter()
        .enumerate()
        .map(|(index, piece)| {
            let lead = if index == 0 { "› " } else { "  " };
            Row::new().bold().text(lead).normal().text(piece).build()
        })
        .collect()
}

/// An agent line: `• text`, wrapped with a hanging indent.
pub(crate) fn say(width: usize, text: &str) -> Vec<String> {
    hanging(width, text, 2)
        .iter()
        .enumerate()
        .map(|(index, piece)| {
            let lead = if index == 0 { "• " } else { "  " };
            Row::new().text(lead).text(piece).build()
        })
        .collect()
}

/// `• Ran cmd` and `└ result`.
pub(crate) fn tool(input: &str, outcome: &str) -> Vec<String> {
    vec![
        Row::new()
            .text("• ")
            .bold()
            .text("Ran ")
            .normal()
            .fg(COMMAND_BLUE)
            .text(input)
            .default_fg()
            .build(),
        Row::new().text("  └ ").dim().text(outcome).normal().build(),
    ]
}

/// `• Working (3s • esc to interrupt)`.
pub(crate) fn spinner_status(frame: usize, text: &str, elapsed_secs: u64) -> String {
    let glyph = BRAILLE_GLYPHS[frame % BRAILLE_GLYPHS.len()];
    Row::new()
        .text(&format!("{glyph} "))
        .bold()
        .text(text)
        .normal()
        .dim()
        .text(&format!(" ({elapsed_secs}s • "))
        .normal()
        .bold()
        .fg(KEY_WHITE)
        .text("esc")
        .normal()
        .default_fg()
        .dim()
        .text(" to interrupt)")
        .normal()
        .build()
}

fn composer(width: usize, input: &str) -> (String, usize) {
    let typed = truncate(input, width.saturating_sub(4));
    let row = Row::new()
        .bg(COMPOSER_BACKGROUND)
        .bold()
        .text("›")
        .normal()
        .text(" ");
    let row = if typed.is_empty() {
        row.dim().text("Ask Codex to do anything").normal()
    } else {
        row.text(&typed)
    };
    (
        row.pad_to(width + 1).default_bg().build(),
        3 + width_of(&typed),
    )
}

fn band(width: usize) -> String {
    Row::new()
        .bg(COMPOSER_BACKGROUND)
        .pad_to(width + 1)
        .default_bg()
        .build()
}

/// The composer: `› Ask Codex to do anything` on a dark band, a hint line under it.
pub(crate) fn idle(width: usize, input: &str, hint: Option<&str>) -> Region {
    let (composer_row, cursor_column) = composer(width, input);
    let footer = Row::new()
        .text("  ")
        .fg(HINT_GREY)
        .text(hint.unwrap_or("? for shortcuts"))
        .default_fg()
        .build();
    Region {
        rows: vec![
            String::new(),
            band(width),
            composer_row,
            band(width),
            footer,
        ],
        cursor: Some((2, cursor_column)),
    }
}

/// The working state: a status line over the composer.
pub(crate) fn busy(width: usize, status: String) -> Region {
    let mut region = idle(width, "", None);
    region.rows.insert(1, status);
    region.cursor = region.cursor.map(|(row, column)| (row + 1, column));
    region
}

/// `Would you like to run the following command?` and its three options.
pub(crate) fn dialog(width: usize, command: &str, reason: &str) -> Region {
    let room = width.saturating_sub(6).max(10);
    let shown = truncate(command, room);
    let mut rows = vec![
        String::new(),
        Row::new()
            .text("  ")
            .bold()
            .text("Would you like to run the following command?")
            .normal()
            .build(),
        String::new(),
        Row::new()
            .text("  Reason: ")
            .italic()
            .text(&truncate(reason, room))
            .reset()
            .build(),
        String::new(),
        Row::new()
            .text("  $ ")
            .fg(COMMAND_BLUE)
            .text(&shown)
            .default_fg()
            .build(),
        String::new(),
        Row::new()
            .bold()
            .fg(232)
            .bg(BLUE)
            .text("› 1. Yes, proceed (y)")
            .pad_to(width + 1)
            .normal()
            .default_fg()
            .default_bg()
            .build(),
    ];
    let dont_ask = format!("Yes, and don't ask again for commands that start with `{command}`");
    let dont_ask = truncate(&dont_ask, width.saturating_sub(9).max(10));
    rows.push(key_option(2, &dont_ask, "p"));
    rows.push(key_option(
        3,
        "No, and tell Codex what to do differently",
        "esc",
    ));
    rows.push(String::new());
    rows.push(
        Row::new()
            .text("  ")
            .dim()
            .text("Press ")
            .normal()
            .bold()
            .text("enter")
            .normal()
            .dim()
            .text(" to confirm or ")
            .normal()
            .bold()
            .text("esc")
            .normal()
            .dim()
            .text(" to cancel")
            .normal()
            .build(),
    );
    Region { rows, cursor: None }
}

fn key_option(number: u8, text: &str, key: &str) -> String {
    Row::new()
        .goto(3)
        .text(&format!("{number}. "))
        .words(text)
        .text(" (")
        .bold()
        .text(key)
        .normal()
        .text(")")
        .build()
}

/// What the approval menu leaves behind once answered.
pub(crate) fn answered(command: &str, accepted: bool, always: bool) -> Vec<String> {
    let verdict = if !accepted {
        Row::new()
            .fg(RED)
            .text("✗ ")
            .default_fg()
            .text("You ")
            .bold()
            .text("canceled")
            .normal()
            .text(" the request to run ")
            .dim()
            .text(command)
            .normal()
            .build()
    } else {
        let how = if always {
            " codex to always run commands that start with "
        } else {
            " codex to run "
        };
        let row = Row::new()
            .fg(GREEN)
            .text("✔ ")
            .default_fg()
            .text("You ")
            .bold()
            .text("approved")
            .normal()
            .text(how)
            .dim()
            .text(command)
            .normal();
        if always {
            row
        } else {
            row.bold().text(" this time").normal()
        }
        .build()
    };
    let mut rows = vec![verdict];
    if accepted {
        rows.push(String::new());
        rows.extend(tool(command, "(no output)"));
    }
    rows
}
