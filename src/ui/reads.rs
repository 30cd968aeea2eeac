//! What the dashboard reads from disk: the answers window's facts files (`A`), a task's
//! recorded attempts (`v`), a recording opened in the player (Enter in that list). A key asks
//! for a read (`UiState::to_read`); the dashboard hands it to a worker (`run::jobs`) and opens
//! the window once the worker hands back what it read (`opened`). The reads (`answers::lines`,
//! `attempts::list`, `attempts::open`) run on the worker, never on the loop's thread.

use std::time::Instant;

use super::attempts::{AttemptEntry, OpenError, Replaying};
use super::state::{Mode, UiState};

/// A read a key asked for; it runs on a worker.
pub type FileRead = Box<dyn FnOnce() -> FileReadDone + Send>;

/// What a read found.
pub enum FileReadDone {
    Answers {
        task: usize,
        lines: Vec<String>,
    },
    Attempts {
        task: usize,
        list: Vec<AttemptEntry>,
    },
    /// The player (boxed: it is large, and goes into `UiState::replay` boxed as it is).
    Replay(Result<Box<Replaying>, OpenError>),
}

/// Opens what was read, unless the operator went elsewhere meanwhile (another window, the
/// player): a window never opens over what they turned to.
pub fn opened(state: &mut UiState, done: FileReadDone, now: Instant) {
    let idle = matches!(state.mode, Mode::Normal) && state.replay.is_none();
    match done {
        FileReadDone::Answers { task, lines } if idle => {
            state.mode = Mode::Answers {
                task,
                lines,
                offset: 0,
            };
        }
        FileReadDone::Attempts { task, list } if idle => {
            state.mode = Mode::Attempts {
                task,
                list,
                selected: 0,
            };
        }
        FileReadDone::Replay(replaying) => {
            let chosen = |task| matches!(state.mode, Mode::Attempts { task: t, .. } if t == task);
            match replaying {
                Ok(replaying) if chosen(replaying.task) && state.replay.is_none() => {
                    state.mode = Mode::Normal;
                    state.replay = Some(replaying);
                }
                Ok(_) => {}
                Err(error) => state.say(error.to_string(), now),
            }
        }
        FileReadDone::Answers { .. } | FileReadDone::Attempts { .. } => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_was_read_opens_only_where_the_operator_still_is() {
        let now = Instant::now();
        let mut state = UiState::new(now);
        let list = FileReadDone::Attempts {
            task: 2,
            list: Vec::new(),
        };
        opened(&mut state, list, now);
        assert!(matches!(state.mode, Mode::Attempts { task: 2, .. }));
        // The operator turned to the help meanwhile: the answers read later do not cover it.
        state.mode = Mode::Help { offset: 0 };
        let answers = FileReadDone::Answers {
            task: 2,
            lines: vec!["attempt 1".into()],
        };
        opened(&mut state, answers, now);
        assert!(matches!(state.mode, Mode::Help { offset: 0 }));
    }
}
