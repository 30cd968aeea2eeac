//! The status bar: counts, retries, cost, clock, the queue's state, the last result and the keys
//! that matter now. Both lines are laid out by priority for their width, never cut mid-word.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;
use unicode_width::UnicodeWidthStr;

use super::model::StatusView;
use super::numbers::cost_short;
use super::style;

pub fn render(status: &StatusView, area: Rect, buf: &mut Buffer) {
    if area.height == 0 {
        return;
    }
    // No background: a dark bar is unreadable on a light theme.
    let top = Rect { height: 1, ..area };
    let right = right_side(status);
    let right_width = line_width(&right);
    let left_width = top.width.saturating_sub(right_width + 1);
    left_side(status, left_width).render(
        Rect {
            width: left_width,
            ..top
        },
        buf,
    );
    right.right_aligned().render(top, buf);
    if area.height >= 2 {
        hints(status, area.width).render(
            Rect {
                y: area.y + 1,
                height: 1,
                ..area
            },
            buf,
        );
    }
}

fn line_width(line: &Line<'_>) -> u16 {
    let width: usize = line.spans.iter().map(|s| s.content.width()).sum();
    u16::try_from(width).unwrap_or(u16::MAX)
}

fn spans_width(spans: &[Span<'_>]) -> usize {
    spans.iter().map(|s| s.content.width()).sum()
}

/// Counts, then failure classes, then the retry queue, in as much of `width` as there is.
fn left_side(status: &StatusView, width: u16) -> Line<'static> {
    let width = usize::from(width);
    let counts = |labelled: bool| -> Vec<Span<'static>> {
        let mut spans = vec![Span::raw(" ")];
        for (row_status, count) in &status.counts {
            let text = if labelled {
                format!(
                    "{} {count} {}",
                    style::glyph(*row_status),
                    style::label(*row_status)
                )
            } else {
                format!("{} {count}", style::glyph(*row_status))
            };
            spans.push(Span::styled(text, style::status_style(*row_status)));
            spans.push(Span::raw(if labelled { "  " } else { " " }));
        }
        spans
    };
    let mut spans = counts(true);
    if spans_width(&spans) > width {
        spans = counts(false);
    }
    if !status.failures.is_empty() {
        let parts: Vec<String> = status
            .failures
            .iter()
            .map(|(f, n)| format!("{} {n}", f.short()))
            .collect();
        let room = width.saturating_sub(spans_width(&spans) + "│ ".width() + 2);
        // A bare "+N" says no more than the failed count beside it: then nothing is shown.
        if let Some(text) = fold(&parts, " · ", room).filter(|t| !t.starts_with('+')) {
            spans.push(Span::styled("│ ", style::DIM));
            spans.push(Span::styled(text, Style::new().fg(Color::Red)));
            spans.push(Span::raw("  "));
        }
    }
    if !status.retries.is_empty() {
        let parts: Vec<String> = status
            .retries
            .iter()
            .map(|r| format!("{} {}", r.task_id, r.when))
            .collect();
        let room = width.saturating_sub(spans_width(&spans) + "│ ↻ ".width());
        // The retryable count is beside it already: shown only with at least one name.
        if let Some(text) = fold(&parts[..parts.len().min(3)], ", ", room)
            .filter(|t| !t.starts_with('+'))
            .map(|shown| with_more(shown, &parts, 3))
            .filter(|text| text.width() <= room)
        {
            spans.push(Span::styled("│ ↻ ", style::DIM));
            spans.push(Span::styled(text, Style::new().fg(Color::Magenta)));
        }
    }
    Line::from(spans)
}

/// "a, b +3" when fewer than all of `all` are in `shown`.
fn with_more(shown: String, all: &[String], limit: usize) -> String {
    let count = shown.split(", ").count().min(limit);
    let more = all.len().saturating_sub(count);
    if more > 0 {
        format!("{shown} +{more}")
    } else {
        shown
    }
}

/// As many of `parts` as fit in `room`, the rest folded into " +N"; `None` when not even that fits.
fn fold(parts: &[String], sep: &str, room: usize) -> Option<String> {
    for shown in (0..=parts.len()).rev() {
        let mut text = parts[..shown].join(sep);
        let hidden = parts.len() - shown;
        if hidden > 0 {
            if !text.is_empty() {
                text.push(' ');
            }
            text.push_str(&format!("+{hidden}"));
        }
        if text.width() <= room {
            return Some(text);
        }
    }
    None
}

/// The queue's state, the cost, how many agents run at once and the clock: always shown.
fn right_side(status: &StatusView) -> Line<'static> {
    let mut right = Vec::new();
    if status.stopping {
        right.push(Span::styled(" STOPPING ", style::BANNER.bg(Color::Red)));
        right.push(Span::raw(" "));
    } else if status.finished {
        right.push(Span::styled(" DONE ", style::BANNER.bg(Color::Green)));
        right.push(Span::raw(" "));
    } else if status.paused {
        right.push(Span::styled(" ⏸ PAUSED ", style::BANNER));
        right.push(Span::raw(" "));
    }
    // A host out of rotation takes its tasks elsewhere (or holds them): never hidden.
    if !status.hosts_out.is_empty() {
        let hosts: Vec<String> = status
            .hosts_out
            .iter()
            .map(|(host, secs)| format!("{host} {secs}s"))
            .collect();
        right.push(Span::styled(
            format!("⚠ host out: {} ", hosts.join(", ")),
            Style::new().fg(Color::Yellow).add_modifier(Modifier::BOLD),
        ));
    }
    if let Some(cost) = status.cost_usd {
        right.push(Span::styled(
            format!("{} ", cost_short(cost)),
            Style::new().fg(Color::Green),
        ));
    }
    right.push(Span::styled(
        format!("{} at once ", status.concurrency),
        style::DIM,
    ));
    right.push(Span::styled(
        format!("⏱ {} ", style::duration(status.clock)),
        Style::new().add_modifier(Modifier::BOLD),
    ));
    Line::from(right)
}

/// Keys that stay on the key line whatever its width (help, leaving, detach).
fn essential(key: &str) -> bool {
    matches!(key, "?" | "q" | DETACH_KEY)
}

/// The attach client's detach key, as the key line names it (`model::status`).
pub const DETACH_KEY: &str = "Ctrl-\\";

/// The message and the keys that fit in `width`: general keys go first, then the mode's keys when
/// the message would get too little; `?` and `q` always stay, and the message is shortened.
fn fit_hints(
    message: Option<&str>,
    keys: &[(String, String)],
    width: usize,
) -> (Option<String>, Vec<(String, String)>) {
    /// Columns the message keeps before the mode's keys give way to it.
    const MIN_MESSAGE: usize = 16;
    let key_width = |(k, w): &(String, String)| k.width() + 1 + w.width() + 2;
    let message_width = |m: usize| if m == 0 { 0 } else { m + 4 };
    let total = |kept: &[(String, String)], message: usize| {
        1 + message_width(message) + kept.iter().map(key_width).sum::<usize>()
    };
    let full = message.map_or(0, UnicodeWidthStr::width);
    let least = full.min(MIN_MESSAGE);
    let mut kept: Vec<(String, String)> = keys.to_vec();
    while total(&kept, full) > width {
        let general = first_general(&kept);
        match kept
            .iter()
            .rposition(|(k, _)| !essential(k))
            .filter(|&i| i >= general)
        {
            Some(i) => drop(kept.remove(i)),
            None => break,
        }
    }
    while total(&kept, least) > width {
        match kept.iter().rposition(|(k, _)| !essential(k)) {
            Some(i) => drop(kept.remove(i)),
            None => break,
        }
    }
    let room = width.saturating_sub(total(&kept, 0) + 4);
    let message = message
        .map(|m| ellipsize(m, room))
        .filter(|m| !m.is_empty());
    (message, kept)
}

/// Where the general keys (`↑↓` on) start in the list: what comes before belongs to the mode.
fn first_general(keys: &[(String, String)]) -> usize {
    keys.iter()
        .position(|(k, _)| k == "↑↓")
        .unwrap_or(keys.len())
}

/// `text` cut to `room` columns with a trailing "…" when it does not fit.
fn ellipsize(text: &str, room: usize) -> String {
    if text.width() <= room {
        return text.to_string();
    }
    if room == 0 {
        return String::new();
    }
    let mut out = String::new();
    for ch in text.chars() {
        let next = format!("{out}{ch}");
        if next.width() + 1 > room {
            break;
        }
        out = next;
    }
    out.push('…');
    out
}

fn hints(status: &StatusView, width: u16) -> Line<'static> {
    let (message, keys) = fit_hints(status.message.as_deref(), &status.keys, usize::from(width));
    let mut spans = vec![Span::raw(" ")];
    if let Some(message) = message {
        spans.push(Span::styled(
            format!(" {message} "),
            Style::new().fg(Color::Black).bg(Color::LightBlue),
        ));
        spans.push(Span::raw("  "));
    }
    for (key, what) in keys {
        spans.push(Span::styled(key, style::KEY));
        spans.push(Span::raw(format!(" {what}  ")));
    }
    Line::from(spans)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter()
            .map(|(k, w)| (k.to_string(), w.to_string()))
            .collect()
    }

    fn general() -> Vec<(String, String)> {
        keys(&[
            ("1", "Yes"),
            ("Esc", "No"),
            ("↑↓", "select"),
            ("Tab", "pane"),
            ("z", "zoom"),
            ("i", "take over"),
            ("Space", "pause"),
            ("c", "cancel"),
            ("r", "retry"),
            ("?", "help"),
            ("q", "quit"),
        ])
    }

    fn names(kept: &[(String, String)]) -> Vec<&str> {
        kept.iter().map(|(k, _)| k.as_str()).collect()
    }

    #[test]
    fn everything_fits_on_a_wide_line() {
        let (message, kept) = fit_hints(Some("queue resumed"), &general(), 200);
        assert_eq!(message.as_deref(), Some("queue resumed"));
        assert_eq!(kept, general());
    }

    #[test]
    fn general_keys_go_first_and_help_and_quit_stay() {
        let (_, kept) = fit_hints(None, &general(), 53);
        assert_eq!(names(&kept), ["1", "Esc", "↑↓", "Tab", "?", "q"]);
        let (_, kept) = fit_hints(None, &general(), 52);
        assert_eq!(names(&kept), ["1", "Esc", "↑↓", "?", "q"]);
        let (_, kept) = fit_hints(None, &general(), 32);
        assert_eq!(names(&kept), ["1", "Esc", "?", "q"]);
        let (_, kept) = fit_hints(None, &general(), 31);
        assert_eq!(names(&kept), ["1", "?", "q"]);
        let (_, kept) = fit_hints(None, &general(), 10);
        assert_eq!(names(&kept), ["?", "q"]);
    }

    #[test]
    fn the_detach_key_of_a_background_run_stays_too() {
        let mut keys = general();
        keys.insert(keys.len() - 1, (DETACH_KEY.into(), "detach".into()));
        let (_, kept) = fit_hints(None, &keys, 10);
        assert_eq!(names(&kept), ["?", DETACH_KEY, "q"]);
    }

    #[test]
    fn a_long_message_is_shortened_with_an_ellipsis_not_cut() {
        let long = "sent Enter (the highlighted option) → a-task-with-a-rather-long-name-007";
        let (message, kept) = fit_hints(Some(long), &general(), 60);
        assert!(names(&kept).ends_with(&["?", "q"]), "{kept:?}");
        let message = message.expect("some of the message is shown");
        assert!(message.ends_with('…'), "{message}");
        let total = 1
            + message.width()
            + 4
            + kept
                .iter()
                .map(|(k, w)| k.width() + w.width() + 3)
                .sum::<usize>();
        assert!(total <= 60, "{total}: {message:?} {kept:?}");
    }

    #[test]
    fn fold_keeps_what_fits_and_counts_the_rest() {
        let parts: Vec<String> = ["auth 1", "quota 2", "process 3"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert_eq!(
            fold(&parts, " · ", 100).as_deref(),
            Some("auth 1 · quota 2 · process 3")
        );
        assert_eq!(
            fold(&parts, " · ", 20).as_deref(),
            Some("auth 1 · quota 2 +1")
        );
        assert_eq!(fold(&parts, " · ", 9).as_deref(), Some("auth 1 +2"));
        assert_eq!(fold(&parts, " · ", 2).as_deref(), Some("+3"));
        assert_eq!(fold(&parts, " · ", 1), None);
    }

    #[test]
    fn hosts_out_of_rotation_are_on_the_right_side() {
        let mut status = crate::ui::frames_fixtures::status(&[("q", "quit")]);
        let plain =
            |line: Line<'_>| -> String { line.spans.iter().map(|s| s.content.as_ref()).collect() };
        assert!(!plain(right_side(&status)).contains("host out"));
        status.hosts_out = vec![("box1".into(), 42), ("box2".into(), 7)];
        let text = plain(right_side(&status));
        assert!(text.starts_with("⚠ host out: box1 42s, box2 7s "), "{text}");
    }

    /// While the tasks file does not parse, the status line says where, with the keys; a
    /// passing message shows over it while it lasts.
    #[test]
    fn the_tasks_file_problem_is_on_the_status_line_while_it_lasts() {
        use crate::ui::model::status_message;
        let problem = "tasks.json:12:5: not valid JSON: expected `,` or `}` after an object entry";
        let notice = status_message(None, Some(problem));
        assert_eq!(
            notice.as_deref(),
            Some(
                "tasks file does not parse: tasks.json:12:5: not valid JSON: expected `,` or `}` \
                 after an object entry; herd holds its changes until it does"
            )
        );
        assert_eq!(
            status_message(Some("queue paused"), Some(problem)).as_deref(),
            Some("queue paused")
        );
        assert_eq!(status_message(None, None), None);
        let mut status =
            crate::ui::frames_fixtures::status(&[("Space", "pause"), ("?", "help"), ("q", "quit")]);
        status.message = notice;
        for width in [160, 120, 80] {
            let area = Rect::new(0, 0, width, 2);
            let mut buf = Buffer::empty(area);
            render(&status, area, &mut buf);
            let rows: Vec<String> = (0..2)
                .map(|y| {
                    (0..width)
                        .map(|x| buf[(x, y)].symbol())
                        .collect::<String>()
                        .trim_end()
                        .to_string()
                })
                .collect();
            insta::assert_snapshot!(format!("tasks_file_problem_{width}"), rows.join("\n"));
        }
    }

    #[test]
    fn ellipsis_respects_the_room() {
        assert_eq!(ellipsize("abcdef", 6), "abcdef");
        assert_eq!(ellipsize("abcdef", 4), "abc…");
        assert_eq!(ellipsize("abcdef", 0), "");
    }
}
