//! The session's permission mode: herd sets the task's or profile's `acp_mode` once the session
//! is open and sends the prompt only once the agent took it, so an adapter's own default (`auto`,
//! an automatic reviewer) never decides permissions. A mode refused or not offered ends the
//! session before the prompt. What the agent offered and was in goes into the facts.

use serde_json::Value;

use super::{Action, Asked, Session};
use crate::core::wire::acp::outcome::Outcome;
use crate::core::wire::acp::rpc::RpcError;
use crate::core::wire::acp::transcript::Shown;
use crate::core::wire::acp::wire;

/// The ids of the modes where agents ask before they act, in herd's order of preference; never
/// an automatic one.
const MANUAL_MODES: [&str; 6] = [
    "default",
    "manual",
    "ask",
    "read-only",
    "readonly",
    "suggest",
];

/// The agent's manual mode among those it offers, when it offers one herd knows.
pub(super) fn manual_mode(offered: &[String]) -> Option<String> {
    MANUAL_MODES
        .iter()
        .find(|id| offered.iter().any(|o| o == *id))
        .map(|id| (*id).to_string())
}

/// The outcome kind of a session whose mode herd could not set (`failed_config`).
pub const MODE_NOT_SET: &str = "permission_mode_not_set";

impl Session {
    /// The session is open: herd's mode is set first when the agent offers modes, else the
    /// prompt goes at once.
    pub(super) fn on_session_opened(&mut self, result: &Value) -> Vec<Action> {
        let wanted = self.setup.mode.clone();
        self.mode.wanted = wanted.clone();
        let Some(modes) = wire::session_modes(result) else {
            let mut actions = Vec::new();
            if let Some(wanted) = wanted {
                let note = format!("the agent offers no session modes: mode {wanted} not set");
                actions.push(Action::Show(Shown::Note(note)));
            }
            actions.extend(self.next_prompt());
            return actions;
        };
        self.mode.started_in = Some(modes.current.clone());
        self.mode.current = Some(modes.current.clone());
        self.mode.offered = modes.offered.clone();
        // Named by nobody: the agent's own manual mode, where it asks before it acts.
        let wanted = wanted.or_else(|| manual_mode(&modes.offered));
        self.mode.wanted = wanted.clone();
        let Some(wanted) = wanted else {
            let note = format!(
                "session mode {} (the agent's own: no acp_mode, and none of its modes is a \
                 manual one herd knows)",
                modes.current
            );
            let mut actions = vec![Action::Show(Shown::Note(note))];
            actions.extend(self.next_prompt());
            return actions;
        };
        if !modes.offered.contains(&wanted) {
            let message = format!(
                "the agent offers no session mode {wanted} (it offers {}; it opened the \
                 session in {}): herd does not run it in a mode of the agent's choosing",
                modes.offered.join(", "),
                modes.current
            );
            return vec![self.finish(Outcome::failed(MODE_NOT_SET, &message))];
        }
        let Some(id) = self.session_id.clone() else {
            return self.next_prompt();
        };
        self.mode_pending = true;
        let note = format!(
            "session/set_mode {wanted} (the agent opened the session in {})",
            modes.current
        );
        vec![
            Action::Show(Shown::Note(note)),
            self.ask(
                Asked::SetMode,
                wire::SESSION_SET_MODE,
                wire::set_mode(&id, &wanted),
            ),
        ]
    }

    /// The agent answered `session/set_mode`: the prompt goes once the mode took.
    pub(super) fn on_mode_set(&mut self, answer: Result<Value, RpcError>) -> Vec<Action> {
        self.mode_pending = false;
        let wanted = self.mode.wanted.clone().unwrap_or_default();
        match answer {
            Ok(_) => {
                self.mode.current = Some(wanted.clone());
                self.mode.set_by_herd = true;
                let mut actions = vec![Action::Show(Shown::Note(format!("session mode {wanted}")))];
                actions.extend(self.next_prompt());
                actions
            }
            Err(error) => {
                let message = format!(
                    "session/set_mode {wanted} failed: {}; herd does not run the session in \
                     the agent's own mode {}",
                    error.describe(),
                    self.mode.started_in.as_deref().unwrap_or("?")
                );
                vec![self.finish(Outcome::failed(MODE_NOT_SET, &message))]
            }
        }
    }

    /// A `session/update` naming the session's mode: kept, and said when it is not herd's.
    pub(super) fn on_mode_update(&mut self, mode: String) -> Vec<Action> {
        let changed = self.mode.current.as_deref() != Some(mode.as_str());
        let leaves_herds = self
            .mode
            .wanted
            .as_deref()
            .is_some_and(|wanted| wanted != mode && !self.mode_pending);
        self.mode.current = Some(mode.clone());
        if changed && leaves_herds {
            let note = format!("the agent switched the session to mode {mode}");
            return vec![Action::Show(Shown::Note(note))];
        }
        Vec::new()
    }
}

#[cfg(test)]
mod tests {
    use super::manual_mode;

    #[test]
    fn the_manual_mode_is_the_one_that_asks_never_an_automatic_one() {
        let offered = |ids: &[&str]| ids.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        // Qwen Code 0.24.4 opens in `auto` (a classifier approves) and offers `default`.
        let qwen = offered(&["plan", "default", "auto-edit", "auto", "yolo"]);
        assert_eq!(manual_mode(&qwen).as_deref(), Some("default"));
        let codex = offered(&["read-only", "auto", "full-access"]);
        assert_eq!(manual_mode(&codex).as_deref(), Some("read-only"));
        let only_automatic = offered(&["auto", "yolo", "bypassPermissions", "acceptEdits"]);
        assert_eq!(manual_mode(&only_automatic), None);
    }
}
