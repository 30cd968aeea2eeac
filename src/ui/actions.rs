//! What a key or a paste does in each of the dashboard's modes: the replay player, take-over,
//! the overlays and confirmations, the editors (`editors`) and the normal mode, whose actions
//! `act` carries out. Nothing here draws.

use color_eyre::eyre::Result;
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::layout::Rect;

use super::act::{act, stop};
use super::answer_target::{self, Target};
use super::keys;
use super::model::auto_menu;
use super::state::{Mode, UiState};
use super::{attempts, editors, takeover_keys};
use crate::core::attempt::Event;
use crate::replay::Handled;
use crate::run::clock::Now;
use crate::run::engine::Engine;

/// Handles one key press. `area` is the terminal's size (for page sizes).
pub fn on_key(
    engine: &mut Engine,
    state: &mut UiState,
    key: &KeyEvent,
    area: Rect,
    clock: Now,
) -> Result<()> {
    let now = clock.at;
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
            if takeover_keys::is_leave_chord(key) {
                state.mode = Mode::Normal;
                state.zoomed = was_zoomed;
            } else if let Some(live) = engine.live_for_task(task) {
                let app_cursor = live.attempt.screen().vt().application_cursor();
                if let Some(bytes) = takeover_keys::to_bytes(key, app_cursor) {
                    state.scroll.remove(&task);
                    engine.send_to_task(task, Event::OperatorKeys(bytes), clock)?;
                }
            }
        }
        Mode::Help { offset } | Mode::Answers { offset, .. } | Mode::Details { offset } => {
            if !scroll(key.code, offset) {
                state.mode = Mode::Normal;
            }
        }
        Mode::Search => {
            if super::search::on_key(state, key) {
                super::act::select_a_match(engine, state);
            }
        }
        Mode::ConfirmQuit if yes => {
            state.mode = Mode::Normal;
            stop(engine, state, clock)?;
        }
        Mode::ConfirmCancel { task } if yes => {
            let task = *task;
            state.mode = Mode::Normal;
            let outcome = engine.cancel_task(task, clock)?;
            state.report(outcome.message(), outcome.is_done(), now);
            if outcome.is_done() {
                state.message_about = Some(task);
            }
        }
        Mode::ConfirmLeave => match key.code {
            KeyCode::Char('d' | 'D') => {
                state.mode = Mode::Normal;
                crate::run::background::request_detach();
            }
            KeyCode::Char('s' | 'S') => {
                state.mode = Mode::Normal;
                super::act::stop_batch(engine, state, clock)?;
            }
            _ if no => state.mode = Mode::Normal,
            _ => {}
        },
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
                        let outcome = engine.set_auto_answer(task, rule, !on, clock)?;
                        state.report(outcome.message(), outcome.is_done(), now);
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
                        Err(error) => state.say(error.to_string(), now),
                    }
                }
            }
            _ if no || matches!(key.code, KeyCode::Char('v' | 'q')) => state.mode = Mode::Normal,
            _ => {}
        },
        Mode::EditPrompt { .. } | Mode::Message { .. } => {
            editors::on_key(engine, state, key, clock)?
        }
        Mode::Normal => {
            if let Some(action) = normal_action(engine, state, key, now) {
                act(engine, state, action, area, clock)?;
            }
        }
    }
    state.operator_chose();
    Ok(())
}

/// A key's action in normal mode, given where answer keys go now (`answer_target`): a key the
/// held dialog would take, or a dialog's key with no dialog to take it, gets a word instead.
fn normal_action(
    engine: &Engine,
    state: &mut UiState,
    key: &KeyEvent,
    now: std::time::Instant,
) -> Option<keys::Action> {
    let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
    match answer_target::target(engine, state, now) {
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
                let name = super::act::task_name(engine, state.selected);
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
pub fn on_paste(engine: &mut Engine, state: &mut UiState, text: &str, clock: Now) -> Result<()> {
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
            engine.send_to_task(task, Event::OperatorKeys(bytes), clock)?;
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
