//! Which dialog an answer key goes to: the one in the focused pane, only when that pane is the
//! selected task's and no answer or automatic move happened a moment ago. Otherwise the key is
//! answered with a word on the status line, never sent.

use std::time::Instant;

use super::keys::AnswerKey;
use super::model::task_name;
use super::prompt;
use super::state::{AnswerHold, UiState};
use crate::run::engine::BatchView;

/// Where the operator's answer keys go now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// No dialog waits in the focused pane.
    Nothing,
    /// The focused, selected task's dialog takes these keys.
    Ready { task: usize, keys: Vec<AnswerKey> },
    /// A dialog waits in the focused pane, but a key now would not be the operator's answer.
    Held { keys: Vec<AnswerKey>, why: String },
}

/// Where an answer key pressed at `now` goes.
pub fn target(batch: &dyn BatchView, state: &UiState, now: Instant) -> Target {
    let Some(task) = state.focus else {
        return Target::Nothing;
    };
    let Some(live) = batch.live_attempt(task) else {
        return Target::Nothing;
    };
    let keys = prompt::answer_keys(live.attempt());
    if keys.is_empty() {
        return Target::Nothing;
    }
    let name = task_name(batch, task);
    let why = if state.selected != task {
        format!(
            "not sent: {} is selected; w selects {name} to answer its dialog",
            task_name(batch, state.selected)
        )
    } else {
        match state.answers_held_now(now) {
            None => return Target::Ready { task, keys },
            Some(AnswerHold::JustAnswered) => {
                format!("not sent: a second key right after your answer (press again for {name})")
            }
            Some(AnswerHold::CameByItself) => {
                format!("not sent: {name} came into focus by itself (press again to answer it)")
            }
        }
    };
    Target::Held { keys, why }
}
