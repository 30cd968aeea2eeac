//! The two editors: the selected task's prompt (`e`) and a message to its agent (`m`). Saving or
//! sending is asked of the batch as a `Command`; `overlay` draws them.

use std::time::Instant;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui_textarea::TextArea;

use super::asks::{Ask, Told, ask};
use super::model::{MessageTarget, message_target};
use super::state::{Mode, UiState};
use crate::core::task::TaskStatus;
use crate::run::engine::BatchView;
use crate::run::engine::command::Command;

/// A key in an open editor: Ctrl-S (or Alt-Enter) saves or sends, Esc closes it (asking first
/// when typed text would be lost), any other key edits.
pub fn on_key(
    batch: &dyn BatchView,
    state: &mut UiState,
    key: &KeyEvent,
    now: Instant,
) -> Vec<Ask> {
    let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
    let (Mode::EditPrompt { task, editor } | Mode::Message { task, editor }) = &mut state.mode
    else {
        return Vec::new();
    };
    let task = *task;
    let submit = (ctrl && key.code == KeyCode::Char('s'))
        || (key.modifiers.contains(KeyModifiers::ALT) && key.code == KeyCode::Enter);
    if submit {
        return submit_editor(batch, state, task);
    } else if key.code == KeyCode::Esc {
        close_editor(batch, state, task, now);
    } else {
        state.discard_armed = false;
        editor.input(*key);
    }
    Vec::new()
}

/// Saves the prompt, or sends the message: into the running agent, else to its session.
fn submit_editor(batch: &dyn BatchView, state: &mut UiState, task: usize) -> Vec<Ask> {
    let (Mode::EditPrompt { editor, .. } | Mode::Message { editor, .. }) = &state.mode else {
        return Vec::new();
    };
    let text = editor.lines().join("\n");
    let editing = matches!(state.mode, Mode::EditPrompt { .. });
    state.mode = Mode::Normal;
    let command = if editing {
        Command::SetPromptTemplate { task, text }
    } else if batch.live_attempt(task).is_some() {
        Command::SendMessage { task, text }
    } else {
        // Answers to its questions, or a follow-up: its session is resumed.
        Command::ResumeWithMessage { task, text }
    };
    vec![ask(command, Told::Reported)]
}

/// Esc: closes the editor, unless that loses typed text and Esc was not pressed twice.
fn close_editor(batch: &dyn BatchView, state: &mut UiState, task: usize, now: Instant) {
    let (Mode::EditPrompt { editor, .. } | Mode::Message { editor, .. }) = &state.mode else {
        return;
    };
    let text = editor.lines().join("\n");
    let before = match &state.mode {
        Mode::EditPrompt { .. } => batch
            .task(task)
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
}

/// `m`: the message editor for the selected task, saying where the message goes. A task that
/// has not run yet leaves the message to the focused agent.
pub fn open_message(
    batch: &dyn BatchView,
    state: &mut UiState,
    focus: Option<usize>,
    now: Instant,
) {
    let selected = state.selected;
    let (task, target) = match (message_target(batch, selected), focus) {
        (Some(target), _) => (selected, target),
        (None, Some(task)) => (task, MessageTarget::Running),
        (None, None) => {
            let id = batch
                .task(selected)
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

/// `e`: the prompt editor for the selected task, holding its `prompt_template`.
pub fn edit_prompt(batch: &dyn BatchView, state: &mut UiState, now: Instant) {
    let task = state.selected;
    let Some(spec) = batch.file().tasks().get(task) else {
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
