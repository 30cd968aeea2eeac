//! Claude Code's welcome box, as captured from Claude Code 2.1 (one column on narrow terminals).

use super::super::text::{Row, truncate, width_of};
use super::claude_palette::{GREY, ORANGE};

/// The left panel of the wide welcome box ends with a divider in this column.
const LEFT_DIVIDER_COLUMN: usize = 54;
/// Below this width the welcome box has one column.
const WIDE_BOX_MIN_WIDTH: usize = 100;

const LOGO: [&str; 3] = ["▐▛███▜▌", "▝▜█████▛▘", "▘▘ ▝▝"];

/// The welcome box: `╭─── Claude Code vX ───╮` ... `╰───╯`, full width.
pub(crate) fn header(width: usize, version: &str, model: &str, cwd: &str) -> Vec<String> {
    let width = width.max(40);
    let title = Row::new()
        .fg(ORANGE)
        .text("╭───")
        .goto(6)
        .words("Claude Code")
        .goto(18)
        .fg(GREY)
        .text(&format!("v{version}"));
    let dashes_from = title.column() + 1;
    let title = title
        .goto(dashes_from)
        .fg(ORANGE)
        .text(&"─".repeat(width.saturating_sub(dashes_from)))
        .text("╮")
        .default_fg()
        .build();
    let wide = width >= WIDE_BOX_MIN_WIDTH;
    let left_inner = if wide {
        LEFT_DIVIDER_COLUMN - 2
    } else {
        width - 2
    };
    let cwd = shorten_path(cwd, left_inner.saturating_sub(2));
    let left = [
        Panel::Blank,
        Panel::Bold("Welcome back!"),
        Panel::Blank,
        Panel::Logo(0),
        Panel::Logo(1),
        Panel::Logo(2),
        Panel::Blank,
        Panel::Grey(model),
        Panel::Grey(&cwd),
    ];
    let mut rows = vec![title];
    for (index, content) in left.into_iter().enumerate() {
        let mut row = Row::new().fg(ORANGE).text("│");
        if let Some(content_width) = content.width() {
            // An odd leftover column goes left of the grey rows, as in the captures.
            let leftover = left_inner.saturating_sub(content_width);
            let rounding = usize::from(!matches!(content, Panel::Grey(_)));
            let column = 2 + (leftover + rounding) / 2;
            row = content.draw(row.goto(column));
        }
        if wide {
            row = right_panel(row.goto(LEFT_DIVIDER_COLUMN), index, width);
        }
        rows.push(row.goto(width).fg(ORANGE).text("│").default_fg().build());
    }
    rows.push(
        Row::new()
            .fg(ORANGE)
            .text("╰")
            .text(&"─".repeat(width - 2))
            .text("╯")
            .default_fg()
            .build(),
    );
    rows
}

fn right_panel(row: Row, index: usize, width: usize) -> Row {
    let room = width.saturating_sub(LEFT_DIVIDER_COLUMN + 3);
    let row = row
        .dim()
        .fg(ORANGE)
        .text("│")
        .normal()
        .goto(LEFT_DIVIDER_COLUMN + 2);
    match index {
        0 => row
            .fg(ORANGE)
            .bold()
            .words("Tips for getting started")
            .normal(),
        1 => row.default_fg().words(&truncate(
            "Run /init to create a CLAUDE.md file with instructions for Claude",
            room,
        )),
        2 => row.default_fg().text(&"─".repeat(room)),
        3 => row.fg(ORANGE).bold().words("What's new").normal(),
        4 => row.fg(GREY).words(&truncate(
            "Check the Claude Code changelog for updates",
            room,
        )),
        _ => row,
    }
}

/// What a row of the welcome box's left panel shows, centred.
enum Panel<'a> {
    Blank,
    Bold(&'a str),
    Grey(&'a str),
    Logo(usize),
}

impl Panel<'_> {
    fn width(&self) -> Option<usize> {
        match self {
            Panel::Blank => None,
            Panel::Bold(text) | Panel::Grey(text) => Some(width_of(text)),
            Panel::Logo(index) => Some(width_of(LOGO[*index])),
        }
    }

    fn draw(&self, row: Row) -> Row {
        match self {
            Panel::Blank => row,
            Panel::Bold(text) => row.default_fg().bold().words(text).normal(),
            Panel::Grey(text) => row.fg(GREY).words(text),
            Panel::Logo(0) => row
                .fg(ORANGE)
                .text("▐")
                .bg(16)
                .text("▛███▜")
                .default_bg()
                .text("▌"),
            Panel::Logo(1) => row
                .fg(ORANGE)
                .text("▝▜")
                .bg(16)
                .text("█████")
                .default_bg()
                .text("▛▘"),
            Panel::Logo(_) => {
                let column = row.column();
                row.fg(ORANGE).text("▘▘").goto(column + 3).text("▝▝")
            }
        }
    }
}

/// Keeps the end of a long path: `/…/work/project`.
fn shorten_path(path: &str, room: usize) -> String {
    if width_of(path) <= room {
        return path.to_string();
    }
    let parts: Vec<&str> = path.split('/').collect();
    for skip in 1..parts.len() {
        let candidate = format!("/…/{}", parts[skip..].join("/"));
        if width_of(&candidate) <= room {
            return candidate;
        }
    }
    truncate(path, room)
}
