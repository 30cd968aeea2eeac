//! The dashboard's look: one glyph and colour per task status, and the few shared styles.

use ratatui::style::{Color, Modifier, Style};

use super::model::RowStatus;

pub fn glyph(status: RowStatus) -> &'static str {
    match status {
        RowStatus::Pending => "○",
        RowStatus::Running => "▶",
        RowStatus::Waiting => "⚠",
        RowStatus::Completed => "✔",
        RowStatus::Retryable => "↻",
        RowStatus::Failed => "✘",
        RowStatus::Cancelled => "⊘",
        RowStatus::NeedsInput => "?",
        RowStatus::Skipped => "–",
    }
}

pub fn label(status: RowStatus) -> &'static str {
    match status {
        RowStatus::Pending => "pending",
        RowStatus::Running => "running",
        RowStatus::Waiting => "waiting",
        RowStatus::Completed => "completed",
        RowStatus::Retryable => "retryable",
        RowStatus::Failed => "failed",
        RowStatus::Cancelled => "cancelled",
        RowStatus::NeedsInput => "needs input",
        RowStatus::Skipped => "skipped",
    }
}

pub fn color(status: RowStatus) -> Color {
    match status {
        // The terminal's own colour: palette 7 (grey) is pale on a light background.
        RowStatus::Pending => Color::Reset,
        RowStatus::Running => Color::Cyan,
        RowStatus::Waiting => Color::Yellow,
        RowStatus::Completed => Color::Green,
        RowStatus::Retryable => Color::Magenta,
        RowStatus::Failed => Color::Red,
        // Not bright black: Solarized Dark's background.
        RowStatus::Cancelled => Color::Reset,
        RowStatus::NeedsInput => Color::LightYellow,
        RowStatus::Skipped => Color::Reset,
    }
}

pub fn status_style(status: RowStatus) -> Style {
    let style = Style::new().fg(color(status));
    match status {
        RowStatus::Waiting | RowStatus::NeedsInput => style.add_modifier(Modifier::BOLD),
        RowStatus::Cancelled | RowStatus::Skipped => style.add_modifier(Modifier::DIM),
        _ => style,
    }
}

/// Borders of panes and boxes.
pub const BORDER: Style = Style::new().fg(Color::DarkGray);
pub const FOCUS_BORDER: Style = Style::new().fg(Color::Cyan);
pub const WAITING_BORDER: Style = Style::new().fg(Color::Yellow).add_modifier(Modifier::BOLD);
pub const TAKEOVER_BORDER: Style = Style::new()
    .fg(Color::LightGreen)
    .add_modifier(Modifier::BOLD);
/// The selected queue row: reverse video, readable on every theme and under `NO_COLOR`.
pub const SELECTED: Style = Style::new().add_modifier(Modifier::REVERSED.union(Modifier::BOLD));
/// Rows of an agent's screen that hold a waiting prompt.
pub const PROMPT_ROWS: Style = crate::term::paint::HIGHLIGHT;
/// The banner with the keys that answer a prompt.
pub const BANNER: Style = Style::new()
    .fg(Color::Black)
    .bg(Color::Yellow)
    .add_modifier(Modifier::BOLD);
pub const KEY: Style = Style::new().fg(Color::Cyan).add_modifier(Modifier::BOLD);
/// Secondary text: faint, readable on any theme (bright black is Solarized Dark's background).
pub const DIM: Style = Style::new().add_modifier(Modifier::DIM);
/// The sign on a pane's right border where its agent's screen is cut.
pub const CUT_MARK: Style = Style::new().fg(Color::Yellow).add_modifier(Modifier::BOLD);
pub const NOTE: Style = Style::new()
    .fg(Color::LightBlue)
    .add_modifier(Modifier::ITALIC);

/// `1:02:03`, `2:03` or `7s`.
pub fn duration(d: std::time::Duration) -> String {
    let secs = d.as_secs();
    let (h, m, s) = (secs / 3600, secs / 60 % 60, secs % 60);
    if h > 0 {
        format!("{h}:{m:02}:{s:02}")
    } else if m > 0 {
        format!("{m}:{s:02}")
    } else {
        format!("{s}s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn durations_read_like_clocks() {
        assert_eq!(duration(Duration::from_millis(7_900)), "7s");
        assert_eq!(duration(Duration::from_secs(123)), "2:03");
        assert_eq!(duration(Duration::from_secs(3723)), "1:02:03");
    }
}
