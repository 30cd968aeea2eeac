//! The key map: which key does what on the dashboard (take-over mode's keys are in
//! `takeover_keys`). Pure functions of the key and the context; nothing here acts.

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

use super::takeover_keys::LEAVE_CHORD;

/// What a key asks the dashboard to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    Up,
    Down,
    PageUp,
    PageDown,
    Top,
    Bottom,
    NextPane,
    PrevPane,
    NextWaiting,
    Zoom,
    Unzoom,
    TakeOver,
    ScrollBack,
    ScrollForward,
    Filter {
        forward: bool,
    },
    Pause,
    Cancel,
    Retry,
    AutoMenu,
    EditPrompt,
    Message,
    Concurrency {
        delta: i8,
    },
    Help,
    Quit,
    /// List the selected task's recorded attempts, to replay one.
    Replay,
    /// Answer the focused agent's waiting prompt with rule `rule`'s keys.
    Answer {
        rule: usize,
    },
    /// Send Esc to the focused agent's waiting prompt (no / dismiss).
    Dismiss,
    /// Send Enter to the focused agent's waiting prompt: the option the dialog highlights.
    Accept,
    /// The selected task's details in a window.
    Details,
    /// The selected task's answered prompts, attempt by attempt.
    Answers,
    /// `/`: search the queue.
    Search,
}

/// A key that answers a waiting prompt, and the rule it answers with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AnswerKey {
    pub code: KeyCode,
    pub rule: usize,
}

/// The one key that sends a rule's `send` text, and its label for the banner: `1` for "1",
/// `y` for "y\r", `Enter` for "\r". `None` when no single key says it.
pub fn answer_key(send: &str) -> Option<(KeyCode, String)> {
    match send {
        "\r" | "\n" => return Some((KeyCode::Enter, "Enter".into())),
        "\x1b" => return Some((KeyCode::Esc, "Esc".into())),
        _ => {}
    }
    let mut chars = send.chars();
    let first = chars.next()?;
    let rest = chars.as_str();
    (!first.is_control() && (rest.is_empty() || rest == "\r"))
        .then(|| (KeyCode::Char(first), first.to_string()))
}

/// Ignores key releases (reported by terminals with key enhancements).
pub fn is_press(key: &KeyEvent) -> bool {
    key.kind != KeyEventKind::Release
}

/// The dashboard's action for a key in normal mode; `answers` are the keys of the focused
/// agent's waiting prompt, which come first.
pub fn normal(key: &KeyEvent, answers: &[AnswerKey]) -> Option<Action> {
    let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
    let shift = key.modifiers.contains(KeyModifiers::SHIFT);
    if !ctrl {
        if let Some(answer) = answers.iter().find(|a| a.code == key.code) {
            return Some(Action::Answer { rule: answer.rule });
        }
        if key.code == KeyCode::Esc && !answers.is_empty() {
            return Some(Action::Dismiss);
        }
        if key.code == KeyCode::Enter && !answers.is_empty() {
            return Some(Action::Accept);
        }
    }
    if ctrl {
        return match key.code {
            KeyCode::Char('c') => Some(Action::Quit),
            KeyCode::Char('u') => Some(Action::PageUp),
            KeyCode::Char('d') => Some(Action::PageDown),
            _ => None,
        };
    }
    Some(match key.code {
        KeyCode::Up | KeyCode::Char('k') => Action::Up,
        KeyCode::Down | KeyCode::Char('j') => Action::Down,
        KeyCode::PageUp if shift => Action::ScrollBack,
        KeyCode::PageDown if shift => Action::ScrollForward,
        KeyCode::PageUp => Action::PageUp,
        KeyCode::PageDown => Action::PageDown,
        KeyCode::Home | KeyCode::Char('g') => Action::Top,
        KeyCode::End | KeyCode::Char('G') => Action::Bottom,
        KeyCode::Tab => Action::NextPane,
        KeyCode::BackTab => Action::PrevPane,
        KeyCode::Char('w') => Action::NextWaiting,
        KeyCode::Char('z') => Action::Zoom,
        KeyCode::Esc => Action::Unzoom,
        KeyCode::Char('i') => Action::TakeOver,
        KeyCode::Char('[') => Action::ScrollBack,
        KeyCode::Char(']') => Action::ScrollForward,
        KeyCode::Char('f') => Action::Filter { forward: true },
        KeyCode::Char('F') => Action::Filter { forward: false },
        KeyCode::Char('/') => Action::Search,
        KeyCode::Char(' ') => Action::Pause,
        KeyCode::Char('c') => Action::Cancel,
        KeyCode::Char('r') => Action::Retry,
        KeyCode::Char('a') => Action::AutoMenu,
        KeyCode::Char('e') => Action::EditPrompt,
        KeyCode::Char('m') => Action::Message,
        KeyCode::Char('v') => Action::Replay,
        KeyCode::Char('d') => Action::Details,
        KeyCode::Char('A') => Action::Answers,
        KeyCode::Char('+' | '=') => Action::Concurrency { delta: 1 },
        KeyCode::Char('-' | '_') => Action::Concurrency { delta: -1 },
        KeyCode::Char('?') | KeyCode::F(1) => Action::Help,
        KeyCode::Char('q') => Action::Quit,
        _ => return None,
    })
}

/// Every key of the help overlay: (keys, what they do).
pub const HELP: &[(&str, &str)] = &[
    (
        "↑ ↓  j k",
        "select a task (Ctrl-U/D, PgUp/PgDn: a page; g/G, Home/End: first/last)",
    ),
    (
        "f  F",
        "filter the queue by status (next / previous; only the statuses there are)",
    ),
    (
        "/",
        "search the queue by id or agent (Enter keeps it, Esc clears it)",
    ),
    ("Tab  S-Tab", "focus the next / previous agent pane"),
    (
        "w",
        "jump to the next task waiting for you (a prompt, or questions to answer)",
    ),
    (
        "1 p y …",
        "answer the focused prompt (the keys on its banner)",
    ),
    (
        "Enter",
        "answer the focused prompt with its highlighted option",
    ),
    (
        "Esc",
        "answer the focused prompt with Esc (no); else leave zoom",
    ),
    ("z", "zoom the focused pane to the full screen"),
    ("i", "take over the focused agent: every key goes to it"),
    (LEAVE_CHORD, "leave take-over"),
    (
        "[  ]",
        "scroll the focused pane back / forward (also Shift-PgUp/PgDn)",
    ),
    ("Space", "pause / resume the queue (running agents go on)"),
    ("+  -", "more / fewer agents at once"),
    ("c", "cancel the selected task (ends its agent)"),
    (
        "r",
        "retry now: re-queue a failed task, or skip a retry wait",
    ),
    ("a", "auto-answer switches of the selected task"),
    ("e", "edit the selected task's prompt (its next attempt)"),
    (
        "m",
        "message the selected task: typed into its running agent; once it ended, answers its \
         questions or continues its session (a fresh attempt when it has none)",
    ),
    (
        "v",
        "replay one of the selected task's recorded attempts (q/Esc returns)",
    ),
    (
        "A",
        "the selected task's answered prompts: when, by whom, the keys, what was asked and the \
         guard's decision",
    ),
    (
        "d",
        "the selected task's details in a window (where the screen has no room for the box)",
    ),
    (
        "mouse",
        "click: select a task / focus a pane; wheel: move in the queue / scroll a pane's \
         history; Shift selects text (herd run --no-mouse leaves the mouse to the terminal)",
    ),
    ("?", "this help"),
    ("q  Ctrl-C", "quit (asks first while agents run)"),
];

#[cfg(test)]
mod tests {
    use super::*;

    fn key(code: KeyCode) -> KeyEvent {
        KeyEvent::new(code, KeyModifiers::NONE)
    }

    fn with(code: KeyCode, mods: KeyModifiers) -> KeyEvent {
        KeyEvent::new(code, mods)
    }

    #[test]
    fn answer_keys_come_from_the_rules_send_text() {
        assert_eq!(answer_key("1"), Some((KeyCode::Char('1'), "1".into())));
        assert_eq!(answer_key("y\r"), Some((KeyCode::Char('y'), "y".into())));
        assert_eq!(answer_key("\r"), Some((KeyCode::Enter, "Enter".into())));
        assert_eq!(answer_key("yes\r"), None);
        assert_eq!(answer_key(""), None);
    }

    #[test]
    fn a_waiting_prompt_takes_its_keys_first() {
        let answers = [
            AnswerKey {
                code: KeyCode::Char('p'),
                rule: 0,
            },
            AnswerKey {
                code: KeyCode::Char('1'),
                rule: 1,
            },
        ];
        let p = key(KeyCode::Char('p'));
        assert_eq!(normal(&p, &answers), Some(Action::Answer { rule: 0 }));
        assert_eq!(
            normal(&key(KeyCode::Char('1')), &answers),
            Some(Action::Answer { rule: 1 })
        );
        assert_eq!(normal(&key(KeyCode::Esc), &answers), Some(Action::Dismiss));
        assert_eq!(normal(&key(KeyCode::Esc), &[]), Some(Action::Unzoom));
        // Enter accepts what the dialog highlights; it never takes over the agent.
        assert_eq!(normal(&key(KeyCode::Enter), &answers), Some(Action::Accept));
        assert_eq!(normal(&key(KeyCode::Enter), &[]), None);
        assert_eq!(
            normal(&key(KeyCode::Char('i')), &[]),
            Some(Action::TakeOver)
        );
        assert_eq!(normal(&key(KeyCode::Char('1')), &[]), None);
        let ctrl_c = with(KeyCode::Char('c'), KeyModifiers::CONTROL);
        assert_eq!(normal(&ctrl_c, &answers), Some(Action::Quit));
    }

    #[test]
    fn dashboard_keys() {
        let table = [
            (KeyCode::Char('j'), Action::Down),
            (KeyCode::Up, Action::Up),
            (KeyCode::Char(' '), Action::Pause),
            (KeyCode::Char('+'), Action::Concurrency { delta: 1 }),
            (KeyCode::Char('-'), Action::Concurrency { delta: -1 }),
            (KeyCode::Char('?'), Action::Help),
            (KeyCode::Char('q'), Action::Quit),
            (KeyCode::Tab, Action::NextPane),
            (KeyCode::Char('['), Action::ScrollBack),
            (KeyCode::Char('v'), Action::Replay),
        ];
        for (code, action) in table {
            assert_eq!(normal(&key(code), &[]), Some(action), "{code:?}");
        }
        let shift_pgup = with(KeyCode::PageUp, KeyModifiers::SHIFT);
        assert_eq!(normal(&shift_pgup, &[]), Some(Action::ScrollBack));
    }
}
