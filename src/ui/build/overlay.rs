//! The view of the window open over the dashboard, if any.

use crate::run::engine::Engine;
use crate::ui::model::{AttemptsMenu, AutoMenu, Overlay};
use crate::ui::state::{Mode, UiState};

pub fn overlay<'a>(engine: &Engine, state: &'a UiState) -> Option<Overlay<'a>> {
    let task_id = |i: usize| {
        engine
            .store()
            .file()
            .tasks()
            .get(i)
            .map_or_else(String::new, |t| t.task_id.clone())
    };
    Some(match &state.mode {
        Mode::Normal | Mode::TakeOver { .. } => return None,
        Mode::Help => Overlay::Help,
        Mode::ConfirmQuit => Overlay::ConfirmQuit {
            running: engine.live().count(),
        },
        Mode::ConfirmCancel { task } => Overlay::ConfirmCancel {
            task_id: task_id(*task),
        },
        Mode::Auto { task } => Overlay::Auto(auto_menu(engine, *task)?),
        Mode::Attempts {
            task,
            list,
            selected,
        } => Overlay::Attempts(AttemptsMenu {
            task_id: task_id(*task),
            rows: list.iter().map(|a| (a.number, a.summary())).collect(),
            selected: *selected,
        }),
        Mode::EditPrompt { task, editor } => Overlay::EditPrompt {
            task_id: task_id(*task),
            editor,
        },
        Mode::Message { task, editor } => Overlay::Message {
            task_id: task_id(*task),
            editor,
        },
    })
}

/// The auto-answer switches of task `index`: the running attempt's, else the task's policy.
pub fn auto_menu(engine: &Engine, index: usize) -> Option<AutoMenu> {
    let task = engine.store().file().tasks().get(index)?;
    let profile = engine.profiles().get(&task.agent);
    let live = engine.live_for_task(index);
    let rules = profile
        .map(|p| {
            p.prompts
                .iter()
                .enumerate()
                .map(|(i, rule)| {
                    let on = live.map_or_else(
                        || task.policy_for(&rule.name).unwrap_or(rule.auto_by_default),
                        |l| l.attempt.is_auto(i),
                    );
                    (rule.name.clone(), rule.label.clone(), on)
                })
                .collect()
        })
        .unwrap_or_default();
    Some(AutoMenu {
        task_id: task.task_id.clone(),
        rules,
    })
}
