//! The view of the window open over the dashboard, if any.

use super::agent;
use crate::core::task::TaskStatus;
use crate::run::engine::BatchView;
use crate::ui::model::{AttemptsMenu, AutoMenu, AutoRule, MessageTarget, Overlay};
use crate::ui::state::{Mode, UiState};

pub(super) fn overlay<'a>(batch: &dyn BatchView, state: &'a UiState) -> Option<Overlay<'a>> {
    let task_id = |i: usize| {
        batch
            .task(i)
            .map_or_else(String::new, |t| t.task_id.clone())
    };
    Some(match &state.mode {
        Mode::Normal | Mode::TakeOver { .. } | Mode::Search => return None,
        Mode::Help { offset } => Overlay::Help {
            offset: *offset,
            background: state.background,
            web: state.web.as_deref(),
        },
        Mode::Details { offset } => Overlay::Details { offset: *offset },
        Mode::Answers {
            task,
            lines,
            offset,
        } => Overlay::Answers {
            task_id: task_id(*task),
            lines,
            offset: *offset,
        },
        Mode::ConfirmQuit => Overlay::ConfirmQuit {
            running: batch.live_attempts().len(),
        },
        Mode::ConfirmLeave => Overlay::ConfirmLeave {
            running: batch.live_attempts().len(),
        },
        Mode::ConfirmCancel { task } => Overlay::ConfirmCancel {
            task_id: task_id(*task),
        },
        Mode::Auto { task } => Overlay::Auto(auto_menu(batch, *task)?),
        Mode::Attempts {
            task,
            list,
            selected,
        } => Overlay::Attempts(AttemptsMenu {
            task_id: task_id(*task),
            rows: list.iter().map(|a| (a.number, a.summary())).collect(),
            selected: *selected,
        }),
        Mode::Diff { view, .. } => Overlay::Diff(view),
        Mode::EditPrompt { task, editor } => Overlay::EditPrompt {
            task_id: task_id(*task),
            editor,
        },
        Mode::Message { task, editor } => Overlay::Message {
            task_id: task_id(*task),
            // A task that is neither running nor done can only start afresh with a message.
            target: message_target(batch, *task).unwrap_or(MessageTarget::FreshAttempt),
            editor,
        },
    })
}

/// Where a message to task `index` goes now: its running agent, its questions' answers, or its
/// ended session (a fresh attempt without one). None for a task that has not run.
pub fn message_target(batch: &dyn BatchView, index: usize) -> Option<MessageTarget> {
    let task = batch.task(index)?;
    if batch.live_attempt(index).is_some() {
        return Some(MessageTarget::Running);
    }
    match task.status {
        TaskStatus::Pending | TaskStatus::Running => None,
        TaskStatus::Retryable if !batch.in_scope(index) => None,
        TaskStatus::NeedsInput => Some(MessageTarget::Answers {
            questions: agent::questions(task.result.as_ref()),
        }),
        TaskStatus::Completed
        | TaskStatus::Failed
        | TaskStatus::Cancelled
        | TaskStatus::Retryable => Some(match batch.resumable_session(index) {
            Some(id) => MessageTarget::Session { id },
            None => MessageTarget::FreshAttempt,
        }),
    }
}

/// The auto-answer switches of task `index`: the running attempt's, else the task's policy.
pub fn auto_menu(batch: &dyn BatchView, index: usize) -> Option<AutoMenu> {
    let task = batch.task(index)?;
    let profile = batch.profiles().get(&task.agent);
    let live = batch.live_attempt(index);
    let rules = profile
        .map(|p| {
            let sends: Vec<&str> = p.prompts.iter().map(|r| r.send.as_str()).collect();
            let keys = toggle_keys(&sends);
            p.prompts
                .iter()
                .enumerate()
                .zip(keys)
                .map(|((i, rule), key)| AutoRule {
                    key,
                    name: rule.name.clone(),
                    label: rule.label.clone(),
                    on: live.map_or_else(
                        || task.policy_for(&rule.name).unwrap_or(rule.auto_by_default),
                        |l| l.attempt().is_auto(i),
                    ),
                })
                .collect()
        })
        .unwrap_or_default();
    Some(AutoMenu {
        task_id: task.task_id.clone(),
        rules,
    })
}

/// The key that switches each rule in the auto-answer window: the key the rule answers with
/// (`p` switches `press_p`), else the first free digit.
pub(super) fn toggle_keys(sends: &[&str]) -> Vec<char> {
    let own = |send: &str| {
        let mut chars = send.trim_end_matches(['\r', '\n']).chars();
        match (chars.next(), chars.next()) {
            (Some(c), None) if c.is_ascii_alphanumeric() && !RESERVED.contains(&c) => Some(c),
            _ => None,
        }
    };
    let mut keys: Vec<Option<char>> = Vec::with_capacity(sends.len());
    for send in sends {
        let key = own(send).filter(|k| !keys.contains(&Some(*k)));
        keys.push(key);
    }
    let mut free = ('1'..='9')
        .chain('a'..='z')
        .filter(|c| !RESERVED.contains(c));
    let taken: Vec<char> = keys.iter().flatten().copied().collect();
    keys.into_iter()
        .map(|key| key.unwrap_or_else(|| free.by_ref().find(|c| !taken.contains(c)).unwrap_or('?')))
        .collect()
}

/// Keys the auto-answer window keeps for itself: `a` and `q` close it.
const RESERVED: [char; 2] = ['a', 'q'];

#[cfg(test)]
mod toggle_key_tests {
    use super::toggle_keys;

    #[test]
    fn rules_are_switched_by_their_own_answer_keys() {
        assert_eq!(toggle_keys(&["1", "p"]), ['1', 'p']);
        assert_eq!(toggle_keys(&["y\r", "d\r"]), ['y', 'd']);
        // Enter and duplicates take the first free digit.
        assert_eq!(toggle_keys(&["\r", "1", "1"]), ['2', '1', '3']);
        // The window's own keys are never a rule's.
        assert_eq!(toggle_keys(&["a", "q"]), ['1', '2']);
    }
}
