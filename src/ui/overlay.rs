//! Windows over the dashboard: the help (every key), confirmations, the auto-answer switches,
//! a task's recorded attempts and the two editors (a task's prompt, a message to an agent).

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Wrap};
use ratatui_textarea::TextArea;

use super::keys::HELP;
use super::layout::centered;
use super::model::{AttemptsMenu, AutoMenu, MessageTarget, Overlay, RowStatus};
use super::status::DETACH_KEY;
use super::style;
use super::text_fit::wrap;

pub fn render(frame: &mut Frame<'_>, overlay: &Overlay<'_>) {
    let area = frame.area();
    match overlay {
        Overlay::Help {
            offset,
            background,
            web,
        } => help(frame, area, *offset, (*background, *web)),
        // Drawn by `draw`, which has the details.
        Overlay::Details { .. } => {}
        Overlay::Answers {
            task_id,
            lines,
            offset,
        } => answered_prompts(frame, area, task_id, lines, *offset),
        Overlay::ConfirmQuit { running } => {
            let text = format!(
                "{running} agent{} still running. Stop {} and quit?",
                if *running == 1 { " is" } else { "s are" },
                if *running == 1 { "it" } else { "them" },
            );
            let note = "Their tasks go back to retryable; the next run picks them up.";
            confirm(frame, area, " Quit ", &text, note);
        }
        Overlay::ConfirmLeave { running } => leave(frame, area, *running),
        Overlay::ConfirmCancel { task_id } => {
            let text = format!("Cancel {task_id}? Its agent is ended now.");
            confirm(
                frame,
                area,
                " Cancel task ",
                &text,
                "r (retry now) brings it back.",
            );
        }
        Overlay::Auto(menu) => auto(frame, area, menu),
        Overlay::Attempts(menu) => attempts(frame, area, menu),
        Overlay::Diff(view) => {
            frame.render_widget(ratatui::widgets::Clear, area);
            super::diff_view::draw(view, area, frame.buffer_mut());
        }
        Overlay::EditPrompt { task_id, editor } => {
            let title = format!(" Prompt of {task_id} · used from its next attempt ");
            let keys = " Ctrl-S save · Esc cancel ";
            textarea(frame, area, &title, keys, editor);
        }
        Overlay::Message {
            task_id,
            target,
            editor,
        } => {
            let keys = " Ctrl-S send · Enter new line · Esc cancel ";
            let title = message_title(task_id, target);
            match target {
                MessageTarget::Answers { questions } => {
                    answers(frame, area, &title, keys, questions, editor);
                }
                _ => textarea(frame, area, &title, keys, editor),
            }
        }
    }
}

/// What the message editor's title says the message will do.
pub fn message_title(task_id: &str, target: &MessageTarget) -> String {
    match target {
        MessageTarget::Running => format!(" Message to {task_id} "),
        MessageTarget::Answers { .. } => format!(" Answer {task_id}'s questions "),
        MessageTarget::Session { id } => format!(" Message to {task_id}'s session {id} "),
        MessageTarget::FreshAttempt => {
            format!(" Message to {task_id} (no session: starts a fresh attempt) ")
        }
    }
}

fn boxed(title: &str, keys: &str) -> Block<'static> {
    Block::new()
        .borders(Borders::ALL)
        .border_style(Style::new().fg(Color::Cyan))
        .title(Span::styled(
            title.to_string(),
            Style::new().add_modifier(Modifier::BOLD),
        ))
        .title_bottom(Line::from(Span::styled(keys.to_string(), style::KEY)).right_aligned())
}

/// `run`: whether the run is in the background, and where its web view listens.
fn help(frame: &mut Frame<'_>, area: Rect, offset: usize, run: (bool, Option<&str>)) {
    let width = area.width.min(100);
    let lines = help_lines(usize::from(width.saturating_sub(2)), run);
    scrolled_window(frame, area, width, " herd · keys ", lines, offset);
}

/// The answered prompts of a task, scrolled like the help.
fn answered_prompts(
    frame: &mut Frame<'_>,
    area: Rect,
    task_id: &str,
    lines: &[String],
    offset: usize,
) {
    let width = area.width.min(120);
    let text_width = usize::from(width.saturating_sub(2)).max(10);
    let rows: Vec<Line<'static>> = lines
        .iter()
        .flat_map(|line| {
            let header = !line.starts_with(' ');
            let style = if header {
                Style::new().add_modifier(Modifier::BOLD)
            } else {
                Style::new()
            };
            let indent = if header { 1 } else { 13 };
            // Room for the deepest indent, so no row runs past the border.
            wrap_words(line, text_width.saturating_sub(indent + 1))
                .into_iter()
                .enumerate()
                .map(move |(i, part)| {
                    let lead = if i == 0 { 1 } else { indent };
                    Line::from(Span::styled(format!("{}{part}", " ".repeat(lead)), style))
                })
                .collect::<Vec<_>>()
        })
        .collect();
    let title = format!(" Answers · {task_id} ");
    scrolled_window(frame, area, width, &title, rows, offset);
}

/// A centred window `width` wide showing `lines` from `offset`, its footer saying where it
/// stands when they do not all fit.
fn scrolled_window(
    frame: &mut Frame<'_>,
    area: Rect,
    width: u16,
    title: &str,
    lines: Vec<Line<'static>>,
    offset: usize,
) {
    let height = (lines.len() as u16 + 2).min(area.height);
    let inner = usize::from(height.saturating_sub(2));
    let last_start = lines.len().saturating_sub(inner);
    let offset = offset.min(last_start);
    let keys = if last_start == 0 {
        " Esc or q closes ".to_string()
    } else {
        let more = if offset < last_start { " ↓ more" } else { "" };
        format!(
            " {}-{} of {}{more} · ↑↓ j k PgUp PgDn Space scroll · Esc or q closes ",
            offset + 1,
            (offset + inner).min(lines.len()),
            lines.len()
        )
    };
    let shown: Vec<Line<'static>> = lines.into_iter().skip(offset).take(inner).collect();
    let popup = centered(area, width, height);
    frame.render_widget(Clear, popup);
    frame.render_widget(Paragraph::new(shown).block(boxed(title, &keys)), popup);
}

/// The help's rows: in a background run, `q` says what it does there and the detach key follows.
fn help_rows(background: bool) -> Vec<(&'static str, &'static str)> {
    let mut rows = HELP.to_vec();
    if background && let Some(last) = rows.last_mut() {
        *last = (
            "q  Ctrl-C",
            "asks: detach this terminal (d) or stop the batch (s)",
        );
        rows.push((
            DETACH_KEY,
            "detach this terminal (herd attach's key); the batch runs on in the background",
        ));
    }
    rows
}

fn help_lines(width: usize, (background, web): (bool, Option<&str>)) -> Vec<Line<'static>> {
    let rows = help_rows(background);
    let key_width = rows
        .iter()
        .map(|(k, _)| k.chars().count())
        .max()
        .unwrap_or(0);
    let indent = key_width + 3;
    let text_width = width.saturating_sub(indent).max(10);
    let mut lines: Vec<Line<'static>> = Vec::new();
    for (key, what) in rows {
        for (i, part) in wrap_words(what, text_width).into_iter().enumerate() {
            let lead = if i == 0 {
                Span::styled(format!(" {key:<key_width$}  "), style::KEY)
            } else {
                Span::raw(" ".repeat(indent))
            };
            lines.push(Line::from(vec![lead, Span::raw(part)]));
        }
    }
    lines.push(Line::raw(""));
    if let Some(url) = web {
        let text =
            format!("Web view: {url} (`herd web --tasks FILE` prints its sign-in address again)");
        for part in wrap_words(&text, width.saturating_sub(2).max(10)) {
            lines.push(Line::from(Span::styled(format!(" {part}"), style::KEY)));
        }
        lines.push(Line::raw(""));
    }
    let glyphs = [
        "Glyphs: ○ pending  ▶ running  ⚠ a prompt waits for you  ? questions for you (m answers)",
        "✔ completed  ↻ retryable  ✘ failed  ⊘ cancelled  – skipped (disabled, or not --only)",
    ];
    for text in glyphs {
        for part in wrap_words(text, width.saturating_sub(2).max(10)) {
            lines.push(Line::from(Span::styled(format!(" {part}"), style::DIM)));
        }
    }
    lines
}

/// `text` broken at spaces into lines of at most `width` columns (a longer word gets its own).
fn wrap_words(text: &str, width: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line = String::new();
    for word in text.split(' ').filter(|w| !w.is_empty()) {
        let needed = line.chars().count() + usize::from(!line.is_empty()) + word.chars().count();
        if !line.is_empty() && needed > width {
            lines.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    if !line.is_empty() || lines.is_empty() {
        lines.push(line);
    }
    lines
}

fn confirm(frame: &mut Frame<'_>, area: Rect, title: &str, text: &str, note: &str) {
    let lines = vec![
        Line::raw(""),
        Line::from(Span::styled(
            format!(" {text}"),
            Style::new().add_modifier(Modifier::BOLD),
        )),
        Line::from(Span::styled(format!(" {note}"), style::DIM)),
        Line::raw(""),
        Line::from(vec![
            Span::styled(" y ", style::BANNER),
            Span::raw(" yes   "),
            Span::styled(" n ", style::BANNER),
            Span::raw(" no"),
        ]),
    ];
    popup(frame, centered(area, 70, 8), lines, boxed(title, ""));
}

/// `lines` wrapped in `block`, drawn over whatever is at `area`.
fn popup(frame: &mut Frame<'_>, area: Rect, lines: Vec<Line<'_>>, block: Block<'_>) {
    frame.render_widget(Clear, area);
    let text = Paragraph::new(lines)
        .block(block)
        .wrap(Wrap { trim: false });
    frame.render_widget(text, area);
}

/// `q` in a background run: detach this terminal (the batch runs on), or stop the batch.
fn leave(frame: &mut Frame<'_>, area: Rect, running: usize) {
    let stop = match running {
        0 => "Stopping ends the background herd (no agent runs).".to_string(),
        1 => "Stopping ends the running agent; its task goes back to retryable.".to_string(),
        n => format!("Stopping ends {n} running agents; their tasks go back to retryable."),
    };
    let lines = vec![
        Line::raw(""),
        Line::from(Span::styled(
            " Detach this terminal, or stop the batch?",
            Style::new().add_modifier(Modifier::BOLD),
        )),
        Line::from(Span::styled(
            " Detached, the batch runs on: herd attach shows it again.",
            style::DIM,
        )),
        Line::from(Span::styled(format!(" {stop}"), style::DIM)),
        Line::raw(""),
        Line::from(vec![
            Span::styled(" d ", style::BANNER),
            Span::raw(" detach   "),
            Span::styled(" s ", style::BANNER),
            Span::raw(" stop the batch   "),
            Span::styled(" Esc ", style::BANNER),
            Span::raw(" back"),
        ]),
    ];
    popup(frame, centered(area, 70, 8), lines, boxed(" Leave ", ""));
}

fn auto(frame: &mut Frame<'_>, area: Rect, menu: &AutoMenu) {
    let mut lines = vec![Line::raw("")];
    if menu.rules.is_empty() {
        lines.push(Line::from(Span::styled(
            " This task's agent profile has no prompt rules.",
            style::DIM,
        )));
    }
    for rule in &menu.rules {
        let (mark, mark_style) = if rule.on {
            ("✔ auto", Style::new().fg(Color::Green))
        } else {
            ("· ask ", style::DIM)
        };
        lines.push(Line::from(vec![
            Span::styled(format!(" [{}] ", rule.key), style::KEY),
            Span::styled(mark, mark_style),
            Span::raw(format!("  {}", rule.name)),
            Span::styled(format!("  {}", rule.label), style::DIM),
        ]));
    }
    lines.push(Line::raw(""));
    lines.push(Line::from(Span::styled(
        " Saved in the task's permission_policy; the running agent follows at once.",
        style::DIM,
    )));
    let title = format!(" Auto-answer · {} ", menu.task_id);
    let block = boxed(&title, " [key] switches its rule · Esc close ");
    popup(
        frame,
        centered(area, 76, lines.len() as u16 + 2),
        lines,
        block,
    );
}

fn attempts(frame: &mut Frame<'_>, area: Rect, menu: &AttemptsMenu) {
    let mut lines = vec![Line::raw("")];
    if menu.rows.is_empty() {
        lines.push(Line::from(Span::styled(
            " No recorded attempt yet: the task has not run.",
            style::DIM,
        )));
    }
    // Room for the border, the blank rows and the note.
    let shown = usize::from(area.height.saturating_sub(8)).max(1);
    let first = menu.selected.saturating_sub(shown - 1);
    for (i, (number, summary)) in menu.rows.iter().enumerate().skip(first).take(shown) {
        let chosen = i == menu.selected;
        let marker = if chosen { " ▸ " } else { "   " };
        let row_style = if chosen {
            Style::new().add_modifier(Modifier::REVERSED)
        } else {
            Style::new()
        };
        lines.push(Line::from(vec![
            Span::styled(marker, style::KEY),
            Span::styled(format!("attempt {number:<3} "), row_style),
            Span::styled(format!("  {summary}"), style::DIM),
        ]));
    }
    lines.push(Line::raw(""));
    lines.push(Line::from(Span::styled(
        " Replayed over the panes; the run goes on meanwhile. q or Esc comes back.",
        style::DIM,
    )));
    let title = format!(" Recorded attempts · {} ", menu.task_id);
    let block = boxed(&title, " ↑↓ choose · Enter replay · Esc close ");
    popup(
        frame,
        centered(area, 80, lines.len() as u16 + 2),
        lines,
        block,
    );
}

/// The message editor under the questions it answers.
fn answers(
    frame: &mut Frame<'_>,
    area: Rect,
    title: &str,
    keys: &str,
    questions: &[String],
    editor: &TextArea<'_>,
) {
    let width = area.width.min(100).saturating_sub(2);
    let asking = style::status_style(RowStatus::NeedsInput);
    let mut lines: Vec<Line<'_>> = Vec::new();
    for (n, question) in questions.iter().enumerate() {
        let lead = format!("{}. ", n + 1);
        let indent = " ".repeat(lead.len());
        let rows = wrap(
            question,
            usize::from(width).saturating_sub(lead.len()).max(1),
        );
        for (i, row) in rows.into_iter().enumerate() {
            let lead = if i == 0 { lead.clone() } else { indent.clone() };
            lines.push(Line::from(vec![
                Span::styled(lead, style::DIM),
                Span::styled(row, asking),
            ]));
        }
    }
    if questions.is_empty() {
        lines.push(Line::from(Span::styled(
            "(the agent's questions were not kept)",
            style::DIM,
        )));
    }
    lines.push(Line::from(Span::styled(
        "─".repeat(usize::from(width)),
        style::BORDER,
    )));
    let asked = u16::try_from(lines.len()).unwrap_or(u16::MAX);
    let editor_rows = area.height.saturating_sub(6).clamp(6, 20).saturating_sub(2);
    let height = asked.saturating_add(editor_rows).saturating_add(2);
    let popup = centered(area, 100, height.min(area.height.saturating_sub(2).max(6)));
    frame.render_widget(Clear, popup);
    let block = boxed(title, keys);
    let inner = block.inner(popup);
    frame.render_widget(block, popup);
    // The editor keeps at least three rows; the questions get the rest.
    let asked = asked.min(inner.height.saturating_sub(3));
    let (top, bottom) = (
        Rect {
            height: asked,
            ..inner
        },
        Rect {
            y: inner.y + asked,
            height: inner.height - asked,
            ..inner
        },
    );
    frame.render_widget(Paragraph::new(lines), top);
    frame.render_widget(editor, bottom);
}

fn textarea(frame: &mut Frame<'_>, area: Rect, title: &str, keys: &str, editor: &TextArea<'_>) {
    let popup = centered(area, 100, area.height.saturating_sub(6).clamp(6, 20));
    frame.render_widget(Clear, popup);
    let block = boxed(title, keys);
    let inner = block.inner(popup);
    frame.render_widget(block, popup);
    frame.render_widget(editor, inner);
}
