//! `/` search in the queue, as in less, k9s and lazygit: the typed text narrows the queue to
//! tasks whose id or agent contains it (any case), Enter keeps it, Esc clears it. It narrows on
//! top of the status filter (`f`).

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::state::{Mode, UiState};
use crate::core::task::TaskSpec;

/// Whether `task` passes the search `text` (empty: every task).
pub fn matches(text: &str, task: &TaskSpec) -> bool {
    if text.is_empty() {
        return true;
    }
    let text = text.to_lowercase();
    task.task_id.to_lowercase().contains(&text) || task.agent.to_lowercase().contains(&text)
}

/// `/`: starts typing a search, from the one kept.
pub fn open(state: &mut UiState) {
    state.mode = Mode::Search;
}

/// One key while the search is typed. Returns whether the text changed.
pub fn on_key(state: &mut UiState, key: &KeyEvent) -> bool {
    let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
    match key.code {
        KeyCode::Enter => {
            state.mode = Mode::Normal;
            false
        }
        KeyCode::Esc => {
            state.mode = Mode::Normal;
            let had = !state.search.is_empty();
            state.search.clear();
            had
        }
        KeyCode::Char('c') if ctrl => {
            state.mode = Mode::Normal;
            state.search.clear();
            true
        }
        KeyCode::Char('u') if ctrl => {
            state.search.clear();
            true
        }
        KeyCode::Backspace => {
            if state.search.pop().is_none() {
                // Backspace on nothing leaves the search, as in lazygit and a shell's prompt.
                state.mode = Mode::Normal;
            }
            true
        }
        KeyCode::Char(c) if !ctrl => {
            state.search.push(c);
            true
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crossterm::event::KeyEvent;

    fn press(state: &mut UiState, code: KeyCode) -> bool {
        on_key(state, &KeyEvent::new(code, KeyModifiers::NONE))
    }

    fn task(id: &str, agent: &str) -> TaskSpec {
        let text = format!(
            r#"{{"tasks": [{{"task_id": "{id}", "agent": "{agent}", "prompt_template": "x"}}]}}"#
        );
        crate::core::taskfile::TaskFile::parse(&text)
            .map(|f| f.tasks()[0].clone())
            .unwrap_or_else(|_| panic!("{text}"))
    }

    #[test]
    fn typed_text_narrows_enter_keeps_it_and_esc_clears_it() {
        let mut state = UiState::new(std::time::Instant::now());
        open(&mut state);
        assert!(matches!(state.mode, Mode::Search));
        for c in "CRA".chars() {
            assert!(press(&mut state, KeyCode::Char(c)));
        }
        assert_eq!(state.search, "CRA");
        assert!(matches(&state.search, &task("crashes-013", "sim")));
        assert!(!matches(&state.search, &task("docs-merge-001", "sim")));
        assert!(
            matches("json", &task("structured-017", "sim-json")),
            "the agent too"
        );
        press(&mut state, KeyCode::Enter);
        assert!(matches!(state.mode, Mode::Normal));
        assert_eq!(state.search, "CRA", "Enter keeps it");
        open(&mut state);
        assert!(press(&mut state, KeyCode::Esc));
        assert!(matches!(state.mode, Mode::Normal));
        assert_eq!(state.search, "", "Esc clears it");
        open(&mut state);
        press(&mut state, KeyCode::Backspace);
        assert!(
            matches!(state.mode, Mode::Normal),
            "Backspace on nothing leaves"
        );
    }
}
