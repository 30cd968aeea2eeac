//! Claude Code's look (2.1.x, from the captured fixtures). Words are placed with `CSI nG` column
//! moves, as Claude Code's renderer does.

use super::super::text::{Row, truncate, width_of, wrap, wrap_isolating};
use super::claude_palette::{
    DIALOG_BLUE, DONE_GREEN, ECHO_BACKGROUND, ECHO_PROMPT, ERROR_PINK, GREY, ORANGE, RULE_GREY,
    WHITE,
};
use super::{Region, SPINNER_GLYPHS, hanging, rule};

pub(crate) use super::claude_welcome::header;

/// `⎿` and a no-break space, as Claude Code writes it.
const RESULT_PREFIX: &str = "  ⎿ \u{a0}";
/// `❯` and a no-break space: the input prompt.
const INPUT_PROMPT: &str = "❯\u{a0}";

/// The user's message: `❯ ` and the prompt, hard-wrapped on a grey band. With `isolated`, each
/// copy of that text gets a row of its own.
pub(crate) fn echo(width: usize, prompt: &str, isolated: Option<&str>) -> Vec<String> {
    let room = width.saturating_sub(2).max(1);
    let pieces = match isolated {
        Some(isolated) => wrap_isolating(prompt, isolated, room, room),
        None => wrap(prompt, room, room),
    };
    pieces
        .iter()
        .enumerate()
        .map(|(index, piece)| {
            let lead = if index == 0 { "❯ " } else { "  " };
            Row::new()
                .bg(ECHO_BACKGROUND)
                .fg(ECHO_PROMPT)
                .text(lead)
                .fg(WHITE)
                .text(piece)
                .default_fg()
                .pad_to(width + 1)
                .default_bg()
                .build()
        })
        .collect()
}

/// An assistant message: `●` then the text wrapped with a two-column hanging indent.
pub(crate) fn say(width: usize, text: &str, bullet_color: u8) -> Vec<String> {
    hanging(width, text, 2)
        .iter()
        .enumerate()
        .map(|(index, piece)| {
            let row = if index == 0 {
                Row::new().fg(bullet_color).text("●").default_fg()
            } else {
                Row::new()
            };
            row.goto(3).text(piece).build()
        })
        .collect()
}

/// `● Bash(input)` with the bullet in a state colour.
pub(crate) fn tool_call(name: &str, input: &str, bullet_color: u8) -> String {
    Row::new()
        .fg(bullet_color)
        .text("●")
        .goto(3)
        .default_fg()
        .bold()
        .text(name)
        .normal()
        .text(&format!("({input})"))
        .build()
}

/// `  ⎿  text` under a tool call, the text in a colour.
pub(crate) fn result(text: &str, color: Option<u8>) -> String {
    let row = Row::new().fg(GREY).text(RESULT_PREFIX);
    match color {
        Some(color) => row.fg(color).text(text).default_fg(),
        None => row.default_fg().text(text),
    }
    .build()
}

/// A finished tool call: the call and its result.
pub(crate) fn tool(name: &str, input: &str, outcome: &str) -> Vec<String> {
    vec![tool_call(name, input, DONE_GREEN), result(outcome, None)]
}

/// The agent's own completion line: `● MARKER`.
pub(crate) fn marker(marker: &str) -> Vec<String> {
    say(usize::MAX / 2, marker, WHITE)
}

/// `✻ Thinking… (3s · esc to interrupt)`.
pub(crate) fn spinner_status(frame: usize, text: &str, elapsed_secs: u64) -> String {
    let glyph = SPINNER_GLYPHS[frame % SPINNER_GLYPHS.len()];
    Row::new()
        .fg(ORANGE)
        .text(&glyph.to_string())
        .default_fg()
        .text(" ")
        .fg(ORANGE)
        .text(text)
        .text(" ")
        .fg(GREY)
        .text(&format!("({elapsed_secs}s · esc to interrupt)"))
        .default_fg()
        .build()
}

/// `✻ API error · Retrying in 3s · attempt 1/10`.
pub(crate) fn retry_status(
    reason: &str,
    seconds_left: u32,
    attempt: u32,
    max_attempts: u32,
) -> String {
    Row::new()
        .fg(ERROR_PINK)
        .text("✻")
        .goto(3)
        .text(reason)
        .fg(GREY)
        .text(&format!(
            " · Retrying in {seconds_left}s · attempt {attempt}/{max_attempts}"
        ))
        .default_fg()
        .build()
}

/// `✻ Crunched for 1s`, left behind when a turn ends.
pub(crate) fn done_line(text: &str) -> String {
    Row::new()
        .fg(GREY)
        .text("✻")
        .default_fg()
        .text(" ")
        .fg(GREY)
        .text(text)
        .default_fg()
        .build()
}

/// The working state: a status line over the input box, `esc to interrupt` under it.
pub(crate) fn busy(width: usize, status: String) -> Region {
    let prompt = Row::new()
        .fg(GREY)
        .text(INPUT_PROMPT)
        .default_fg()
        .inverse()
        .text(" ")
        .no_inverse()
        .build();
    let footer = Row::new()
        .goto(3)
        .fg(GREY)
        .words("esc to interrupt")
        .default_fg()
        .build();
    Region {
        rows: vec![
            String::new(),
            status,
            String::new(),
            rule(width, RULE_GREY),
            prompt,
            rule(width, RULE_GREY),
            footer,
        ],
        cursor: Some((4, 3)),
    }
}

/// Waiting for a message: the input box with what was typed, a hint line, an optional notice.
pub(crate) fn idle(width: usize, input: &str, hint: Option<&str>, notice: Option<&str>) -> Region {
    let typed = truncate(input, width.saturating_sub(4));
    let prompt = Row::new()
        .text(INPUT_PROMPT)
        .text(&typed)
        .inverse()
        .text(" ")
        .no_inverse()
        .build();
    let mut footer = Row::new()
        .goto(3)
        .fg(GREY)
        .words(hint.unwrap_or("? for shortcuts"));
    if let Some(notice) = notice {
        let column = width
            .saturating_sub(width_of(notice))
            .max(footer.column() + 2);
        footer = footer.goto(column).fg(ERROR_PINK).words(notice);
    }
    Region {
        rows: vec![
            String::new(),
            rule(width, RULE_GREY),
            prompt,
            rule(width, RULE_GREY),
            footer.default_fg().build(),
        ],
        cursor: Some((2, 3 + width_of(&typed))),
    }
}

/// The permission dialog for a tool call, with the pending call above it.
pub(crate) fn dialog(
    width: usize,
    tool_name: &str,
    command: &str,
    description: &str,
    dont_ask: &str,
) -> Region {
    let call = truncate(command, width.saturating_sub(width_of(tool_name) + 6));
    let mut rows = vec![
        String::new(),
        tool_call(tool_name, &call, GREY),
        Row::new()
            .fg(GREY)
            .text(RESULT_PREFIX)
            .text("Waiting…")
            .default_fg()
            .build(),
        String::new(),
        rule(width, DIALOG_BLUE),
        Row::new()
            .text(" ")
            .fg(DIALOG_BLUE)
            .bold()
            .text(&format!("{tool_name} command"))
            .normal()
            .default_fg()
            .build(),
        String::new(),
    ];
    let room = width.saturating_sub(4).max(10);
    for piece in wrap(command, room, room) {
        rows.push(Row::new().goto(4).words(&piece).build());
    }
    for piece in wrap(description, room, room) {
        rows.push(
            Row::new()
                .goto(4)
                .fg(GREY)
                .words(&piece)
                .default_fg()
                .build(),
        );
    }
    rows.push(String::new());
    rows.push(Row::new().goto(2).words("Do you want to proceed?").build());
    rows.push(
        Row::new()
            .goto(2)
            .fg(DIALOG_BLUE)
            .text("❯")
            .goto(4)
            .fg(GREY)
            .text("1.")
            .goto(7)
            .fg(DIALOG_BLUE)
            .text("Yes")
            .default_fg()
            .build(),
    );
    let option_room = width.saturating_sub(7).max(10);
    rows.push(option(2, &truncate(dont_ask, option_room)));
    rows.push(option(3, "No"));
    rows.push(String::new());
    rows.push(
        Row::new()
            .goto(2)
            .fg(GREY)
            .words("Esc to cancel · Tab to amend · ctrl+e to explain")
            .default_fg()
            .build(),
    );
    Region { rows, cursor: None }
}

fn option(number: u8, text: &str) -> String {
    Row::new()
        .goto(4)
        .fg(GREY)
        .text(&format!("{number}."))
        .goto(7)
        .default_fg()
        .words(text)
        .build()
}

/// What the dialog leaves behind once answered.
pub(crate) fn answered(tool_name: &str, command: &str, accepted: bool) -> Vec<String> {
    if accepted {
        tool(tool_name, command, "Done")
    } else {
        vec![
            tool_call(tool_name, command, ERROR_PINK),
            result("User rejected the command", Some(ERROR_PINK)),
        ]
    }
}
