//! What the dashboard asks of the batch: a `Command` for the event loop, and how the status line
//! tells what it did (`Told`).

use std::time::Instant;

use super::state::UiState;
use crate::run::engine::command::Command;
use crate::run::engine::control::ControlOutcome;
use crate::serve::driver::Asked;

/// A command the dashboard asks for, with how its outcome is told.
pub type Ask = Asked<Told>;

/// How the status line tells a command's outcome.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Told {
    /// Not at all: the dashboard already said what it asked, or nothing is worth saying.
    Silently,
    /// Its words, as the status line's message.
    Said,
    /// Its words, logged as an operator action.
    Reported,
    /// As `Reported`, and when it was done the message stays with the task.
    ReportedAbout { task: usize },
}

/// `command`, its outcome told as `told`.
pub fn ask(command: Command, told: Told) -> Ask {
    Asked {
        command,
        note: told,
    }
}

/// `command`, its outcome untold.
pub fn silently(command: Command) -> Ask {
    ask(command, Told::Silently)
}

/// Tells `outcome` on the status line, as `told` says.
pub fn tell(state: &mut UiState, told: Told, outcome: &ControlOutcome, now: Instant) {
    match told {
        Told::Silently => {}
        Told::Said => state.say(outcome.message(), now),
        Told::Reported => state.report(outcome.message(), outcome.is_done(), now),
        Told::ReportedAbout { task } => {
            state.report(outcome.message(), outcome.is_done(), now);
            if outcome.is_done() {
                state.message_about = Some(task);
            }
        }
    }
}
