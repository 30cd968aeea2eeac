//! What a key or a paste does in each of the dashboard's modes; normal mode's actions are
//! `act`'s. What a key asks of the batch is returned as `Command`s; the batch is only read.

use std::time::Instant;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::layout::Rect;

use super::act::{act, stop};
use super::answer_target::{self, Target};
use super::asks::{Ask, Told, ask, silently};
use super::keys;
use super::model::auto_menu;
use super::reads::FileReadDone;
use super::state::{Mode, UiState};
use super::{editors, takeover_keys};
use crate::replay::Handled;
use crate::run::engine::BatchView;
use crate::run::engine::command::Command;

/// How a key answers a question of the dashboard's own (quit? cancel? leave?).
#[derive(Debug, Clone, Copy)]
struct YesNo {
    yes: bool,
    no: bool,
}

impl YesNo {
    fn of(key: &KeyEvent) -> YesNo {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        YesNo {
            yes: matches!(key.code, KeyCode::Char('y' | 'Y' | 'q') | KeyCode::Enter)
                || (ctrl && key.code == KeyCode::Char('c')),
            no: matches!(key.code, KeyCode::Char('n' | 'N') | KeyCode::Esc),
        }
    }
}

/// Handles one key press; what it asks of the batch. `area` is the terminal's size.
pub fn on_key(
    batch: &dyn BatchView,
    state: &mut UiState,
    key: &KeyEvent,
    area: Rect,
    now: Instant,
) -> Vec<Ask> {
    let asked = in_mode(batch, state, key, area, now);
    state.operator_chose();
    asked
}

/// A key in the mode the dashboard is in.
fn in_mode(
    batch: &dyn BatchView,
    state: &mut UiState,
    key: &KeyEvent,
    area: Rect,
    now: Instant,
) -> Vec<Ask> {
    let yes_no = YesNo::of(key);
    // The player takes every key while it is open; leaving it shows the dashboard as it was.
    if let Some(replay) = state.replay.as_mut() {
        if replay.view.handle_key(*key) == Handled::Exit {
            state.replay = None;
        }
        return Vec::new();
    }
    match &mut state.mode {
        &mut Mode::TakeOver { task, was_zoomed } => {
            return take_over_key(batch, state, key, task, was_zoomed);
        }
        Mode::Help { offset } | Mode::Answers { offset, .. } | Mode::Details { offset } => {
            if !scroll(key.code, offset) {
                state.mode = Mode::Normal;
            }
        }
        Mode::Search => {
            if super::search::on_key(state, key) {
                super::act::select_a_match(batch, state);
            }
        }
        Mode::ConfirmQuit if yes_no.yes => {
            state.mode = Mode::Normal;
            return stop(state, now);
        }
        &mut Mode::ConfirmCancel { task } if yes_no.yes => {
            state.mode = Mode::Normal;
            return vec![ask(Command::Cancel { task }, Told::ReportedAbout { task })];
        }
        Mode::ConfirmLeave => return confirm_leave_key(batch, state, key.code, yes_no, now),
        Mode::ConfirmQuit | Mode::ConfirmCancel { .. } if yes_no.no => state.mode = Mode::Normal,
        Mode::ConfirmQuit | Mode::ConfirmCancel { .. } => {}
        &mut Mode::Auto { task } => return auto_menu_key(batch, state, key.code, task, yes_no),
        Mode::Attempts { .. } => attempts_key(batch, state, key.code, yes_no),
        Mode::Diff { view, .. } => {
            let height = usize::from(area.height.saturating_sub(2));
            let movement = super::diff_view::DiffMove::from_key(*key);
            if movement.is_some_and(|m| !view.apply(m, height)) {
                state.mode = Mode::Normal;
            }
        }
        Mode::EditPrompt { .. } | Mode::Message { .. } => {
            return editors::on_key(batch, state, key, now);
        }
        Mode::Normal => {
            if let Some(action) = normal_action(batch, state, key, now) {
                return act(batch, state, action, area, now);
            }
        }
    }
    Vec::new()
}

/// A key in take-over mode: the leave chord gives the keys back to the dashboard, any other key
/// goes to the agent.
fn take_over_key(
    batch: &dyn BatchView,
    state: &mut UiState,
    key: &KeyEvent,
    task: usize,
    was_zoomed: bool,
) -> Vec<Ask> {
    if takeover_keys::is_leave_chord(key) {
        state.mode = Mode::Normal;
        state.zoomed = was_zoomed;
    } else if let Some(live) = batch.live_attempt(task) {
        let app_cursor = live.attempt().screen().vt().application_cursor();
        if let Some(bytes) = takeover_keys::to_bytes(key, app_cursor) {
            state.scroll.remove(&task);
            return vec![silently(Command::TypeKeys { task, bytes })];
        }
    }
    Vec::new()
}

/// Leaving a background run: `d` detaches (the batch goes on), `s` stops it.
fn confirm_leave_key(
    batch: &dyn BatchView,
    state: &mut UiState,
    code: KeyCode,
    yes_no: YesNo,
    now: Instant,
) -> Vec<Ask> {
    match code {
        KeyCode::Char('d' | 'D') => {
            state.mode = Mode::Normal;
            crate::serve::background::request_detach();
        }
        KeyCode::Char('s' | 'S') => {
            state.mode = Mode::Normal;
            return super::act::stop_batch(batch, state, now);
        }
        _ if yes_no.no => state.mode = Mode::Normal,
        _ => {}
    }
    Vec::new()
}

/// A key in the auto-answer menu: a rule's key switches it, `a`, `q` or No closes the menu.
fn auto_menu_key(
    batch: &dyn BatchView,
    state: &mut UiState,
    code: KeyCode,
    task: usize,
    yes_no: YesNo,
) -> Vec<Ask> {
    let menu = auto_menu(batch, task);
    let found = menu.as_ref().and_then(|m| {
        let rule = m
            .rules
            .iter()
            .position(|r| matches!(code, KeyCode::Char(c) if r.key == c))?;
        Some((rule, m.rules[rule].on))
    });
    match found {
        Some((rule, on)) => {
            let command = Command::SetAutoAnswer {
                task,
                rule,
                on: !on,
            };
            return vec![ask(command, Told::Reported)];
        }
        None if yes_no.no || matches!(code, KeyCode::Char('a' | 'q')) => state.mode = Mode::Normal,
        None => {}
    }
    Vec::new()
}

/// A key in the list of a task's attempts: move, Enter replays one, `v`, `q` or No closes it.
fn attempts_key(batch: &dyn BatchView, state: &mut UiState, code: KeyCode, yes_no: YesNo) {
    let Mode::Attempts {
        task,
        list,
        selected,
    } = &mut state.mode
    else {
        return;
    };
    match code {
        KeyCode::Up | KeyCode::Char('k') => *selected = selected.saturating_sub(1),
        KeyCode::Down | KeyCode::Char('j') => {
            *selected = (*selected + 1).min(list.len().saturating_sub(1));
        }
        KeyCode::Home | KeyCode::Char('g') => *selected = 0,
        KeyCode::End | KeyCode::Char('G') => *selected = list.len().saturating_sub(1),
        KeyCode::Enter => {
            let task = *task;
            let task_id = batch
                .task(task)
                .map_or_else(String::new, |t| t.task_id.clone());
            if let Some(entry) = list.get(*selected).cloned() {
                state.to_read = Some(Box::new(move || {
                    let opened = super::attempts::open(task, &task_id, &entry);
                    FileReadDone::Replay(opened.map(Box::new))
                }));
            }
        }
        _ if yes_no.no || matches!(code, KeyCode::Char('v' | 'q')) => state.mode = Mode::Normal,
        _ => {}
    }
}

/// A key's action in normal mode: a dialog's key that no dialog may take now gets a word instead.
fn normal_action(
    batch: &dyn BatchView,
    state: &mut UiState,
    key: &KeyEvent,
    now: Instant,
) -> Option<keys::Action> {
    let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
    match answer_target::target(batch, state, now) {
        Target::Ready { keys, .. } => keys::normal(key, &keys),
        Target::Held { keys, why }
            if !ctrl
                && (keys.iter().any(|k| k.code == key.code) || keys::is_dialog_like(key.code)) =>
        {
            state.say(why, now);
            None
        }
        Target::Held { .. } => keys::normal(key, &[]),
        Target::Nothing => {
            let action = keys::normal(key, &[]);
            if action.is_none() && !ctrl && keys::is_dialog_like(key.code) {
                let name = super::model::task_name(batch, state.selected);
                state.say(
                    format!(
                        "{} went nowhere: no dialog waits in {name}'s pane",
                        keys::key_name(key.code)
                    ),
                    now,
                );
            }
            action
        }
    }
}

/// Pasted text: to the agent in take-over mode, into an open editor, else nowhere.
pub fn on_paste(batch: &dyn BatchView, state: &mut UiState, text: &str) -> Vec<Ask> {
    match &mut state.mode {
        Mode::TakeOver { task, .. } => {
            let task = *task;
            let Some(live) = batch.live_attempt(task) else {
                return Vec::new();
            };
            let text = text.replace("\r\n", "\r").replace('\n', "\r");
            let bytes = if live.attempt().screen().vt().bracketed_paste() {
                format!("\x1b[200~{text}\x1b[201~").into_bytes()
            } else {
                text.into_bytes()
            };
            return vec![silently(Command::TypeKeys { task, bytes })];
        }
        Mode::EditPrompt { editor, .. } | Mode::Message { editor, .. } => {
            editor.insert_str(text);
        }
        _ => {}
    }
    Vec::new()
}

/// The arrows and pages scroll a window of text; false for any other key, which closes it.
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
