//! What keys and pastes do: moves in the dashboard's own state, and operator actions carried
//! out through the engine (answers, keys for the agent, cancel, retry, auto-answer, edits).

use std::time::Instant;

use color_eyre::eyre::Result;
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::layout::Rect;
use ratatui_textarea::TextArea;

use super::keys::{self, Action};
use super::model::{MessageTarget, RowStatus};
use super::model::{auto_menu, live_tasks, matching, message_target, waiting_tasks};
use super::state::{Filter, Leaving, Mode, UiState};
use super::{attempts, layout, prompt, queue};
use crate::core::attempt::Event;
use crate::core::task::TaskStatus;
use crate::replay::Handled;
use crate::run::engine::Engine;

/// Handles one key press. `area` is the terminal's size (for page sizes).
pub fn on_key(
    engine: &mut Engine,
    state: &mut UiState,
    key: &KeyEvent,
    area: Rect,
    now: Instant,
) -> Result<()> {
    let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
    let yes = matches!(key.code, KeyCode::Char('y' | 'Y' | 'q') | KeyCode::Enter)
        || (ctrl && key.code == KeyCode::Char('c'));
    let no = matches!(key.code, KeyCode::Char('n' | 'N') | KeyCode::Esc);
    // The player takes every key while it is open; leaving it shows the dashboard as it was.
    if let Some(replay) = state.replay.as_mut() {
        if replay.view.handle_key(*key) == Handled::Exit {
            state.replay = None;
        }
        return Ok(());
    }
    match &mut state.mode {
        Mode::TakeOver { task, was_zoomed } => {
            let (task, was_zoomed) = (*task, *was_zoomed);
            if keys::is_leave_chord(key) {
                state.mode = Mode::Normal;
                state.zoomed = was_zoomed;
            } else if let Some(live) = engine.live_for_task(task) {
                let app_cursor = live.attempt.screen().vt().application_cursor();
                if let Some(bytes) = keys::to_bytes(key, app_cursor) {
                    state.scroll.remove(&task);
                    engine.send_to_task(task, Event::OperatorKeys(bytes), now)?;
                }
            }
        }
        Mode::Help { offset } | Mode::Answers { offset, .. } => {
            if !scroll(key.code, offset) {
                state.mode = Mode::Normal;
            }
        }
        Mode::Details => state.mode = Mode::Normal,
        Mode::ConfirmQuit if yes => {
            state.mode = Mode::Normal;
            stop(engine, state, now)?;
        }
        Mode::ConfirmCancel { task } if yes => {
            let task = *task;
            state.mode = Mode::Normal;
            let outcome = engine.cancel_task(task, now)?;
            report(state, outcome.message(), outcome.is_done(), now);
            if outcome.is_done() {
                state.message_about = Some(task);
            }
        }
        Mode::ConfirmQuit | Mode::ConfirmCancel { .. } if no => state.mode = Mode::Normal,
        Mode::ConfirmQuit | Mode::ConfirmCancel { .. } => {}
        Mode::Auto { task } => {
            let task = *task;
            match key.code {
                KeyCode::Char(c)
                    if auto_menu(engine, task)
                        .is_some_and(|m| m.rules.iter().any(|r| r.key == c)) =>
                {
                    let menu = auto_menu(engine, task);
                    let found = menu.as_ref().and_then(|m| {
                        m.rules
                            .iter()
                            .position(|r| r.key == c)
                            .map(|i| (i, m.rules[i].on))
                    });
                    if let Some((rule, on)) = found {
                        let outcome = engine.set_auto_answer(task, rule, !on, now)?;
                        report(state, outcome.message(), outcome.is_done(), now);
                    }
                }
                _ if no || matches!(key.code, KeyCode::Char('a' | 'q')) => {
                    state.mode = Mode::Normal
                }
                _ => {}
            }
        }
        Mode::Attempts {
            task,
            list,
            selected,
        } => match key.code {
            KeyCode::Up | KeyCode::Char('k') => *selected = selected.saturating_sub(1),
            KeyCode::Down | KeyCode::Char('j') => {
                *selected = (*selected + 1).min(list.len().saturating_sub(1));
            }
            KeyCode::Home | KeyCode::Char('g') => *selected = 0,
            KeyCode::End | KeyCode::Char('G') => *selected = list.len().saturating_sub(1),
            KeyCode::Enter => {
                let task = *task;
                let entry = list.get(*selected).cloned();
                let task_id = engine
                    .store()
                    .file()
                    .tasks()
                    .get(task)
                    .map_or_else(String::new, |t| t.task_id.clone());
                if let Some(entry) = entry {
                    match attempts::open(task, &task_id, &entry) {
                        Ok(replaying) => {
                            state.mode = Mode::Normal;
                            state.replay = Some(Box::new(replaying));
                        }
                        Err(error) => state.say(error, now),
                    }
                }
            }
            _ if no || matches!(key.code, KeyCode::Char('v' | 'q')) => state.mode = Mode::Normal,
            _ => {}
        },
        Mode::EditPrompt { task, editor } | Mode::Message { task, editor } => {
            let task = *task;
            let submit = (ctrl && key.code == KeyCode::Char('s'))
                || (key.modifiers.contains(KeyModifiers::ALT) && key.code == KeyCode::Enter);
            if submit {
                let text = editor.lines().join("\n");
                let editing = matches!(state.mode, Mode::EditPrompt { .. });
                state.mode = Mode::Normal;
                let outcome = if editing {
                    engine.set_prompt_template(task, &text)?
                } else if engine.live_for_task(task).is_some() {
                    engine.send_message(task, &text, now)?
                } else {
                    // Answers to its questions, or a follow-up: its session is resumed (or a
                    // fresh attempt gets the message).
                    engine.resume_with_message(task, &text, now)?
                };
                report(state, outcome.message(), outcome.is_done(), now);
            } else if key.code == KeyCode::Esc {
                let text = editor.lines().join("\n");
                let before = match &state.mode {
                    Mode::EditPrompt { .. } => engine
                        .store()
                        .file()
                        .tasks()
                        .get(task)
                        .and_then(|t| t.prompt_template.clone())
                        .unwrap_or_default(),
                    _ => String::new(),
                };
                // Typed text is not thrown away by one stray key: Esc asks, Esc again discards.
                if text.trim_end() == before.trim_end() || state.discard_armed {
                    state.discard_armed = false;
                    state.mode = Mode::Normal;
                    if text.trim_end() != before.trim_end() {
                        state.say("discarded what you typed", now);
                    }
                } else {
                    state.discard_armed = true;
                    state.say("Esc again discards what you typed; Ctrl-S saves it", now);
                }
            } else {
                state.discard_armed = false;
                editor.input(*key);
            }
        }
        Mode::Normal => {
            let answers = state
                .focus
                .and_then(|f| engine.live_for_task(f))
                .map(|live| prompt::answer_keys(&live.attempt))
                .unwrap_or_default();
            if let Some(action) = keys::normal(key, &answers) {
                act(engine, state, action, area, now)?;
            }
        }
    }
    Ok(())
}

/// Pasted text: to the agent in take-over mode, into an open editor, else nowhere.
pub fn on_paste(engine: &mut Engine, state: &mut UiState, text: &str, now: Instant) -> Result<()> {
    match &mut state.mode {
        Mode::TakeOver { task, .. } => {
            let task = *task;
            let Some(live) = engine.live_for_task(task) else {
                return Ok(());
            };
            let text = text.replace("\r\n", "\r").replace('\n', "\r");
            let bytes = if live.attempt.screen().vt().bracketed_paste() {
                format!("\x1b[200~{text}\x1b[201~").into_bytes()
            } else {
                text.into_bytes()
            };
            engine.send_to_task(task, Event::OperatorKeys(bytes), now)?;
        }
        Mode::EditPrompt { editor, .. } | Mode::Message { editor, .. } => {
            editor.insert_str(text);
        }
        _ => {}
    }
    Ok(())
}

/// The arrows and pages scroll a window of text (the drawing clamps `offset` to its length);
/// false for any other key, which closes it.
fn scroll(code: KeyCode, offset: &mut usize) -> bool {
    match code {
        KeyCode::Down | KeyCode::Char('j') => *offset += 1,
        KeyCode::Up | KeyCode::Char('k') => *offset = offset.saturating_sub(1),
        KeyCode::PageDown | KeyCode::Char(' ') => *offset += 10,
        KeyCode::PageUp => *offset = offset.saturating_sub(10),
        _ => return false,
    }
    true
}

/// Shows an action's result (the engine's `ControlOutcome`: `message()` and `is_done()`).
fn report(state: &mut UiState, message: &str, done: bool, now: Instant) {
    tracing::info!(message, done, "operator action");
    state.say(message, now);
}

/// `q`: leave at once when nothing runs, else ask first; while stopping, kill the agents.
pub fn quit(engine: &mut Engine, state: &mut UiState, now: Instant) -> Result<()> {
    match state.leaving {
        Leaving::Stopping => {
            engine.kill_all();
            state.say("killing the agents' process groups", now);
        }
        _ if engine.live().next().is_some() => state.mode = Mode::ConfirmQuit,
        _ if engine.is_done() => state.leaving = Leaving::Now,
        _ => stop(engine, state, now)?,
    }
    Ok(())
}

fn stop(engine: &mut Engine, state: &mut UiState, now: Instant) -> Result<()> {
    engine.stop(now)?;
    state.leaving = Leaving::Stopping;
    state.say(
        "stopping: ending the running agents (q again kills them now)",
        now,
    );
    Ok(())
}

pub(super) fn select_step(engine: &Engine, state: &mut UiState, delta: isize) {
    let list = matching(engine, state);
    if list.is_empty() {
        return;
    }
    let at = list.iter().position(|&i| i == state.selected);
    let next = match at {
        Some(at) => at.saturating_add_signed(delta).min(list.len() - 1),
        None => 0,
    };
    state.selected = list[next];
}

fn page(state: &UiState, area: Rect) -> isize {
    let regions = layout::regions(area, state.zoomed);
    regions.queue.map_or(10, queue::visible_rows).max(1) as isize
}

fn act(
    engine: &mut Engine,
    state: &mut UiState,
    action: Action,
    area: Rect,
    now: Instant,
) -> Result<()> {
    let focus = state.focus.filter(|f| engine.live_for_task(*f).is_some());
    match action {
        Action::Up => select_step(engine, state, -1),
        Action::Down => select_step(engine, state, 1),
        Action::PageUp => select_step(engine, state, -page(state, area)),
        Action::PageDown => select_step(engine, state, page(state, area)),
        Action::Top => select_step(engine, state, isize::MIN),
        Action::Bottom => select_step(engine, state, isize::MAX),
        Action::NextPane | Action::PrevPane => {
            let live = live_tasks(engine);
            if !live.is_empty() {
                let at = focus.and_then(|f| live.iter().position(|&t| t == f));
                let next = match (at, action == Action::NextPane) {
                    (Some(at), true) => (at + 1) % live.len(),
                    (Some(at), false) => (at + live.len() - 1) % live.len(),
                    (None, _) => 0,
                };
                focus_task(state, live[next]);
            }
        }
        Action::NextWaiting => {
            let waiting = waiting_tasks(engine);
            let next = waiting
                .iter()
                .find(|&&t| t > state.selected)
                .or(waiting.first());
            match next {
                Some(&task) if engine.live_for_task(task).is_some() => focus_task(state, task),
                Some(&task) => select_task(state, task, RowStatus::NeedsInput),
                None => state.say("no task is waiting for you", now),
            }
        }
        Action::Zoom => state.zoomed = !state.zoomed,
        Action::Unzoom => state.zoomed = false,
        Action::TakeOver => match focus {
            Some(task) => {
                state.mode = Mode::TakeOver {
                    task,
                    was_zoomed: state.zoomed,
                };
                state.zoomed = true;
            }
            None => state.say("no running agent to take over", now),
        },
        Action::ScrollBack | Action::ScrollForward => {
            let Some(task) = focus else {
                state.say("no agent pane to scroll: nothing runs", now);
                return Ok(());
            };
            // Rows that went off the top of the agent's screen: its history.
            let history = engine
                .live_for_task(task)
                .map_or(0, |l| l.attempt.screen().history_len());
            let step = usize::from(area.height / 2).max(1);
            let offset = state.scroll.entry(task).or_insert(0);
            let before = *offset;
            *offset = if action == Action::ScrollBack {
                offset.saturating_add(step)
            } else {
                offset.saturating_sub(step)
            };
            if history == 0 {
                *offset = 0;
                state.say(
                    format!("{}: no history yet to scroll", task_name(engine, task)),
                    now,
                );
            } else if action == Action::ScrollForward && before == 0 {
                state.say("already at the live screen", now);
            }
        }
        Action::Filter { forward } => {
            state.filter = state.filter.step(forward);
            state.queue_offset = 0;
            let list = matching(engine, state);
            if !list.contains(&state.selected)
                && let Some(&first) = list.first()
            {
                state.selected = first;
            }
        }
        Action::Pause => {
            let paused = !engine.is_paused();
            engine.set_paused(paused);
            let text = if paused {
                "queue paused: running agents go on, nothing new starts"
            } else {
                "queue resumed"
            };
            state.say(text, now);
        }
        Action::Cancel => {
            let task = state.selected;
            if engine.live_for_task(task).is_some() {
                state.mode = Mode::ConfirmCancel { task };
            } else {
                let outcome = engine.cancel_task(task, now)?;
                report(state, outcome.message(), outcome.is_done(), now);
            }
        }
        Action::Retry => {
            let task = state.selected;
            let outcome = engine.retry_now(task, now)?;
            report(state, outcome.message(), outcome.is_done(), now);
            if outcome.is_done() {
                state.message_about = Some(task);
            }
        }
        Action::AutoMenu => {
            state.mode = Mode::Auto {
                task: state.selected,
            }
        }
        Action::EditPrompt => edit_prompt(engine, state, now),
        Action::Message => open_message(engine, state, focus, now),
        Action::Concurrency { delta } => {
            let n = engine
                .concurrency()
                .saturating_add_signed(isize::from(delta))
                .max(1);
            engine.set_concurrency(n);
            state.say(format!("{} agents at once", engine.concurrency()), now);
        }
        Action::Help => state.mode = Mode::Help { offset: 0 },
        Action::Details => state.mode = Mode::Details,
        Action::Answers => {
            let task = state.selected;
            if let Some(spec) = engine.store().file().tasks().get(task) {
                let live = engine
                    .live_for_task(task)
                    .map(|l| (l.number, l.attempt.approvals()));
                let lines = super::answers::lines(&engine.runs_dir().join(&spec.task_id), live);
                state.mode = Mode::Answers {
                    task,
                    lines,
                    offset: 0,
                };
            }
        }
        Action::Replay => {
            let task = state.selected;
            if let Some(spec) = engine.store().file().tasks().get(task) {
                let list = attempts::list(&engine.runs_dir().join(&spec.task_id));
                state.mode = Mode::Attempts {
                    task,
                    list,
                    selected: 0,
                };
            }
        }
        Action::Quit => quit(engine, state, now)?,
        Action::Answer { rule } => {
            if let Some(task) = focus {
                let sent = answer_description(engine, task, rule);
                engine.send_to_task(task, Event::OperatorAnswer { rule }, now)?;
                state.say_about(task, format!("{sent} → {}", task_name(engine, task)), now);
            }
        }
        Action::Dismiss => {
            if let Some(task) = focus {
                let reply = Event::OperatorReply {
                    name: "Esc".into(),
                    keys: b"\x1b".to_vec(),
                };
                engine.send_to_task(task, reply, now)?;
                state.say(format!("sent Esc (no) → {}", task_name(engine, task)), now);
            }
        }
        Action::Accept => {
            if let Some(task) = focus {
                let reply = Event::OperatorReply {
                    name: "Enter".into(),
                    keys: b"\r".to_vec(),
                };
                engine.send_to_task(task, reply, now)?;
                state.say(
                    format!(
                        "sent Enter (the highlighted option) → {}",
                        task_name(engine, task)
                    ),
                    now,
                );
            }
        }
    }
    Ok(())
}

/// A task's id for a status message.
fn task_name(engine: &Engine, task: usize) -> String {
    engine
        .store()
        .file()
        .tasks()
        .get(task)
        .map_or_else(|| format!("task #{task}"), |t| t.task_id.clone())
}

/// What answering with `rule` sends, for the status message: "sent 1 (Yes)".
fn answer_description(engine: &Engine, task: usize, rule: usize) -> String {
    let Some(prompt) = engine
        .live_for_task(task)
        .and_then(|live| live.attempt.profile().prompts.get(rule).cloned())
    else {
        return "answered".into();
    };
    let key = super::keys::answer_key(&prompt.send)
        .map_or_else(|| prompt.send.escape_debug().to_string(), |(_, k)| k);
    let label = if prompt.label.is_empty() {
        prompt.name
    } else {
        prompt.label
    };
    format!("sent {key} ({label})")
}

/// Focuses a running task's pane and selects it in the queue (showing every task if the
/// filter hides it).
fn focus_task(state: &mut UiState, task: usize) {
    state.selected = task;
    state.focus = Some(task);
    if !matches!(state.filter, Filter::All | Filter::Active) {
        state.filter = Filter::All;
    }
}

/// Selects a task that is not running (showing every task if the filter hides it).
fn select_task(state: &mut UiState, task: usize, status: RowStatus) {
    state.selected = task;
    if !state.filter.matches(status) {
        state.filter = Filter::All;
    }
}

/// `m`: the message editor for the selected task, saying where the message goes: into its
/// running agent, as answers to its questions, or into its session once it ended. A task that
/// has not run yet leaves the message to the focused agent, as before.
fn open_message(engine: &Engine, state: &mut UiState, focus: Option<usize>, now: Instant) {
    let selected = state.selected;
    let (task, target) = match (message_target(engine, selected), focus) {
        (Some(target), _) => (selected, target),
        (None, Some(task)) => (task, MessageTarget::Running),
        (None, None) => {
            let id = engine
                .store()
                .file()
                .tasks()
                .get(selected)
                .map_or("the selected task", |t| t.task_id.as_str());
            state.say(
                format!("{id} has not run yet: no agent to message (e edits its prompt)"),
                now,
            );
            return;
        }
    };
    let placeholder = match target {
        MessageTarget::Running => "Type a message for the agent…",
        MessageTarget::Answers { .. } => {
            "Type your answers: the agent gets them as its next message…"
        }
        MessageTarget::Session { .. } => {
            "Type a follow-up: the agent continues its session with it…"
        }
        MessageTarget::FreshAttempt => {
            "Type a message: a fresh attempt gets it after the task's prompt…"
        }
    };
    let mut editor = TextArea::default();
    editor.set_placeholder_text(placeholder);
    editor.set_wrap_mode(ratatui_textarea::WrapMode::WordOrGlyph);
    state.mode = Mode::Message {
        task,
        editor: Box::new(editor),
    };
}

fn edit_prompt(engine: &Engine, state: &mut UiState, now: Instant) {
    let task = state.selected;
    let Some(spec) = engine.store().file().tasks().get(task) else {
        return;
    };
    if spec.status == TaskStatus::Completed {
        state.say(
            format!("{} is completed; it never runs again", spec.task_id),
            now,
        );
        return;
    }
    let text = spec.prompt_template.clone().unwrap_or_default();
    let mut editor = TextArea::new(text.lines().map(str::to_string).collect());
    editor.set_wrap_mode(ratatui_textarea::WrapMode::WordOrGlyph);
    state.mode = Mode::EditPrompt {
        task,
        editor: Box::new(editor),
    };
}
