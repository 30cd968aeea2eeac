//! Drawing the replay view: the recorded screen in a pane (painted as the live pane is), marker
//! ticks over a timeline bar, the time, the event and marker under the cursor, the keys. Reads
//! only.

use std::time::Instant;

use ratatui::Frame;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph, Widget};

use super::cast::EventKind;
use super::timeline::{MarkerKind, Timeline};
use super::view::ReplayView;

impl<R: std::io::BufRead + std::io::Seek> ReplayView<R> {
    pub fn draw(&mut self, frame: &mut Frame<'_>, area: Rect) {
        self.draw_at(frame, area, Instant::now());
    }

    /// Draws the view at `now`; the drawing lives here so `view` never depends on it.
    pub fn draw_at(&mut self, frame: &mut Frame<'_>, area: Rect, now: Instant) {
        draw(self, frame, area, now);
        self.mark_drawn(now);
    }
}

impl<R> ReplayView<R> {
    /// Draws the view at `now`; the caller marks it drawn once the frame is out.
    pub fn render(&self, frame: &mut Frame<'_>, area: Rect, now: Instant) {
        draw(self, frame, area, now);
    }
}

/// Rows under the pane: ticks, bar, event readout, marker readout, keys.
const CONTROL_ROWS: u16 = 5;

pub(super) fn draw<R>(view: &ReplayView<R>, frame: &mut Frame<'_>, area: Rect, now: Instant) {
    let buf = frame.buffer_mut();
    let controls = CONTROL_ROWS.min(area.height.saturating_sub(3));
    // The pane keeps the whole area, so a recorded resize does not move the controls.
    let pane_area = Rect {
        height: area.height - controls,
        ..area
    };
    draw_pane(view, buf, pane_area);
    let rows: [ControlRow<R>; 5] = [ticks_row, bar_row, event_row, marker_row, keys_row];
    // On a short terminal the bottom rows go first (keys, then the marker readout).
    let below = area.y + pane_area.height..;
    for (row, y) in rows.iter().take(usize::from(controls)).zip(below) {
        let line = row(view, now, area.width);
        Paragraph::new(line).render(Rect::new(area.x, y, area.width, 1), buf);
    }
}

/// Cells of the pane outside the recorded terminal's size.
const OUTSIDE: Style = Style::new().bg(Color::Indexed(236));

/// One row under the pane, drawn from the view at a moment in a given width.
type ControlRow<R> = fn(&ReplayView<R>, Instant, u16) -> Line<'static>;

fn draw_pane<R>(view: &ReplayView<R>, buf: &mut Buffer, area: Rect) {
    let screen = view.screen();
    let (rows, cols) = screen.size();
    let (rows, cols) = (rows.get(), cols.get());
    let width = area.width;
    let height = area.height;
    let outer = area;
    let inner_height = height.saturating_sub(2);
    let mut title = format!(" {} · {cols}x{rows} ", view.name);
    if inner_height < rows || width < cols.saturating_add(2) {
        // The pane widget keeps the cursor in view: the same rows it shows.
        let cursor_row = screen.cursor_position().0;
        let first = if cursor_row >= inner_height {
            cursor_row + 1 - inner_height
        } else {
            0
        };
        let last = (first + inner_height).min(rows);
        let shown_cols = width.saturating_sub(2).min(cols);
        title.push_str(&format!(
            "· clipped: rows {}-{}, cols 1-{shown_cols} ",
            first + 1,
            last
        ));
    }
    let mut block = Block::bordered()
        .title(title)
        .border_style(Style::default().fg(Color::DarkGray));
    let index = view.playhead.index();
    if let Some(first) = index.problems.first() {
        let more = match index.problem_count {
            1 => String::new(),
            n => format!(" (and {} more; --print lists them)", n - 1),
        };
        block = block.title_bottom(Line::styled(
            format!(" ⚠ {first}{more} "),
            Style::default().fg(Color::Yellow),
        ));
    }
    // The window title the program set (OSC 0/2), as a terminal would show it.
    if let Some(window) = view.window_title().filter(|t| !t.trim().is_empty()) {
        let window: String = window
            .chars()
            .filter(|c| !c.is_control())
            .take(60)
            .collect();
        block = block.title(Line::from(format!(" {window} ")).right_aligned());
    }
    let inner = block.inner(outer);
    block.render(outer, buf);
    let recorded = Rect {
        width: cols.min(inner.width),
        height: rows.min(inner.height),
        ..inner
    };
    for y in inner.top()..inner.bottom() {
        for x in inner.left()..inner.right() {
            if !recorded.contains(ratatui::layout::Position::new(x, y))
                && let Some(cell) = buf.cell_mut((x, y))
            {
                cell.set_symbol(" ").set_style(OUTSIDE);
            }
        }
    }
    if let Some(cursor) = crate::term::paint::screen(screen, recorded, buf, None)
        && let Some(cell) = buf.cell_mut(cursor)
    {
        cell.modifier.insert(Modifier::REVERSED);
    }
}

/// `m:ss.s`, or `h:mm:ss` from an hour on.
pub fn fmt_time(secs: f64) -> String {
    let secs = if secs.is_finite() { secs.max(0.0) } else { 0.0 };
    let tenths = (secs * 10.0).floor() as u64;
    let (h, m, s, t) = (
        tenths / 36_000,
        tenths / 600 % 60,
        tenths / 10 % 60,
        tenths % 10,
    );
    if h > 0 {
        format!("{h}:{m:02}:{s:02}")
    } else {
        format!("{m}:{s:02}.{t}")
    }
}

fn marker_color(kind: MarkerKind) -> Color {
    match kind {
        MarkerKind::Prompt | MarkerKind::Waiting => Color::Yellow,
        MarkerKind::AutoAnswer => Color::Green,
        MarkerKind::OperatorAnswer => Color::Cyan,
        MarkerKind::CompletionSeen | MarkerKind::Verdict { completed: true } => Color::LightGreen,
        MarkerKind::Verdict { completed: false } => Color::LightRed,
        MarkerKind::Ending | MarkerKind::Bell | MarkerKind::Other => Color::Gray,
    }
}

/// Columns of the bar: the labels left and right of it take fixed widths.
struct BarGeometry {
    start: u16,
    width: u16,
}

const BAR_LEFT: u16 = 11;
const BAR_RIGHT: u16 = 24;

fn bar_geometry(width: u16) -> BarGeometry {
    BarGeometry {
        start: BAR_LEFT,
        width: width.saturating_sub(BAR_LEFT + BAR_RIGHT).max(1),
    }
}

fn column(shown: f64, duration: f64, width: u16) -> usize {
    if duration <= 0.0 {
        return 0;
    }
    let last = f64::from(width.saturating_sub(1));
    ((shown / duration).clamp(0.0, 1.0) * last).round() as usize
}

fn ticks_row<R>(view: &ReplayView<R>, _now: Instant, width: u16) -> Line<'static> {
    let bar = bar_geometry(width);
    let duration = view.player.duration();
    let mut slots: Vec<Option<MarkerKind>> = vec![None; usize::from(bar.width)];
    for (marker, &shown) in view.timeline.markers().iter().zip(view.marks()) {
        let slot = &mut slots[column(shown, duration, bar.width)];
        if slot.is_none_or(|k| marker.kind.rank() > k.rank()) {
            *slot = Some(marker.kind);
        }
    }
    let mut spans = vec![Span::raw(" ".repeat(usize::from(bar.start)))];
    spans.extend(slots.into_iter().map(|slot| {
        match slot {
            Some(kind) => Span::styled(
                kind.glyph().to_string(),
                Style::default()
                    .fg(marker_color(kind))
                    .add_modifier(Modifier::BOLD),
            ),
            None => Span::raw(" "),
        }
    }));
    Line::from(spans)
}

fn bar_row<R>(view: &ReplayView<R>, now: Instant, width: u16) -> Line<'static> {
    let bar = bar_geometry(width);
    let player = &view.player;
    let here = player.position(now);
    let head = column(here, player.duration(), bar.width);
    let state = if player.playing() { "▶" } else { "⏸" };
    let speed = if player.fastest() {
        "max".to_string()
    } else {
        format!("{}x", player.speed())
    };
    let idle = match view.timeline.idle_limit() {
        Some(limit) => format!(" idle≤{limit}s"),
        None => String::new(),
    };
    let left = format!(" {state} {:>7} ", fmt_time(here));
    let right = format!(" {:<7} {speed}{idle}", fmt_time(player.duration()));
    let done = Style::default().fg(Color::Cyan);
    let rest = Style::default().fg(Color::DarkGray);
    Line::from(vec![
        Span::styled(
            fit(&left, bar.start),
            Style::default().add_modifier(Modifier::BOLD),
        ),
        Span::styled("━".repeat(head), done),
        Span::styled("●", done.add_modifier(Modifier::BOLD)),
        Span::styled(
            "─".repeat(usize::from(bar.width).saturating_sub(head + 1)),
            rest,
        ),
        Span::raw(right),
    ])
}

/// `text` padded or cut to `width` columns (the labels are ASCII but for the play glyph).
fn fit(text: &str, width: u16) -> String {
    let width = usize::from(width);
    let mut out: String = text.chars().take(width).collect();
    let len = out.chars().count();
    out.extend(std::iter::repeat_n(' ', width.saturating_sub(len)));
    out
}

fn event_row<R>(view: &ReplayView<R>, _now: Instant, _width: u16) -> Line<'static> {
    let index = view.playhead.index();
    let dim = Style::default().fg(Color::DarkGray);
    let mut spans = vec![Span::styled(
        format!(
            " rec {:.3} s ",
            view.playhead.time().min(index.timeline.duration())
        ),
        dim,
    )];
    match view.playhead.last_event() {
        None => spans.push(Span::raw(format!(
            "before the first of {} events",
            index.events
        ))),
        Some(event) => {
            // Who acted and what herd typed; the agent's raw bytes are in the .log.
            let what = match event.kind {
                EventKind::Output => "the agent drew".to_string(),
                EventKind::Input => format!("herd typed \"{}\"", event.preview),
                EventKind::Resize => format!("resized to {}", event.preview),
                EventKind::Marker => event.preview.clone(),
                EventKind::Exit => "the agent ended".to_string(),
                EventKind::Other(_) => "another event".to_string(),
            };
            spans.push(Span::raw(format!(
                "event {}/{} at {:.1} s: ",
                event.number, index.events, event.time
            )));
            spans.push(Span::styled(what, dim));
        }
    }
    Line::from(spans)
}

fn marker_row<R>(view: &ReplayView<R>, _now: Instant, width: u16) -> Line<'static> {
    let here = view.playhead.time();
    let applied = view.playhead.applied();
    let timeline = &view.timeline;
    let mut spans = vec![Span::raw(" ")];
    match timeline.last_marker_within(applied) {
        Some(m) => {
            let style = Style::default().fg(marker_color(m.kind));
            spans.push(Span::styled(
                format!("{} {}", m.kind.glyph(), m.label),
                style,
            ));
            spans.push(Span::raw(format!(" ({:.3} s)", m.time)));
        }
        None => spans.push(Span::raw("no marker yet")),
    }
    if let Some(next) = timeline.first_marker_after(applied) {
        spans.push(Span::styled(
            format!(
                "   next: {} in {:.1} s",
                next.label,
                (next.time - here).max(0.0)
            ),
            Style::default().fg(Color::DarkGray),
        ));
    }
    // What the timeline's letters mean, for the ones this recording has, when there is room.
    let used: usize = spans.iter().map(|s| s.content.chars().count()).sum();
    let legend = legend(timeline);
    if !legend.is_empty() && used + legend.chars().count() + 3 <= usize::from(width) {
        let pad = usize::from(width) - used - legend.chars().count() - 1;
        spans.push(Span::raw(" ".repeat(pad)));
        spans.push(Span::styled(legend, Style::default().fg(Color::DarkGray)));
    }
    Line::from(spans)
}

/// "? prompt  a auto answer  V completed" for the kinds of marker on `timeline`.
fn legend(timeline: &Timeline) -> String {
    let mut kinds: Vec<MarkerKind> = Vec::new();
    for marker in timeline.markers() {
        if !kinds.contains(&marker.kind) {
            kinds.push(marker.kind);
        }
    }
    kinds
        .iter()
        .map(|k| format!("{} {}", k.glyph(), k.meaning()))
        .collect::<Vec<_>>()
        .join("  ")
}

fn keys_row<R>(view: &ReplayView<R>, _now: Instant, _width: u16) -> Line<'static> {
    if let Some(message) = &view.message {
        return Line::from(Span::styled(
            format!(" {message}"),
            Style::default().fg(Color::LightRed),
        ));
    }
    let mut spans = Vec::new();
    let keys = [
        ("space", "play"),
        ("←→", "5s"),
        ("↑↓", "1min"),
        ("Home/End", ""),
        ("n/p", "marker"),
        (".", "step"),
        ("+/-", "speed"),
        ("f", "max"),
        ("i", "idle cap"),
        ("q", "quit"),
    ];
    for (key, what) in keys {
        spans.push(Span::styled(
            format!(" {key}"),
            Style::default().add_modifier(Modifier::BOLD),
        ));
        if !what.is_empty() {
            spans.push(Span::styled(
                format!(" {what}"),
                Style::default().fg(Color::DarkGray),
            ));
        }
    }
    Line::from(spans)
}
