//! The key map: which key does what on the dashboard (take-over's are in `takeover_keys`). Pure.

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
    /// Answer the dialog waiting in the focused (and selected) pane with one of its keys.
    Answer(AnswerKey),
    /// A key a dialog could take that the waiting dialog does not offer.
    NotOffered {
        key: String,
    },
    /// The selected task's details in a window.
    Details,
    /// The selected task's answered prompts, attempt by attempt.
    Answers,
    /// What the selected task's agent changed: the diff view (`diff_view`).
    Diff,
    /// `/`: search the queue.
    Search,
}

/// What an answer key sends to the waiting dialog.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reply {
    /// The keys of the profile's prompt rule `0` (recorded under the rule's name).
    Rule(usize),
    /// Keys of no rule (an option's own key, Enter, Esc), recorded under `name`.
    Keys { name: String, bytes: Vec<u8> },
}

/// A key that answers the waiting dialog: the key, what it says on the banner, what it sends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AnswerKey {
    pub code: KeyCode,
    /// The option it picks, as the banner says it ("Yes", "No").
    pub label: String,
    pub reply: Reply,
}

/// The key that says No to a dialog (it sends Esc, which every dialog herd knows takes as
/// no): a key of its own, so that Esc only ever leaves zoom and windows.
pub const NO_KEY: char = 'n';

/// The key's name on the banner: `1`, `y`, `Enter`.
pub fn key_name(code: KeyCode) -> String {
    match code {
        KeyCode::Char(c) => c.to_string(),
        KeyCode::Enter => "Enter".into(),
        KeyCode::Esc => "Esc".into(),
        other => format!("{other:?}"),
    }
}

/// The one key that sends a rule's `send` text, and its label: `1` for "1", `y` for "y\r",
/// `Enter` for "\r".
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

/// The dashboard's action for a key in normal mode; the `answers` of the dialog the operator may
/// answer come first. Esc never answers: it leaves zoom.
pub fn normal(key: &KeyEvent, answers: &[AnswerKey]) -> Option<Action> {
    let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
    let shift = key.modifiers.contains(KeyModifiers::SHIFT);
    if !ctrl && !answers.is_empty() {
        if let Some(answer) = answers.iter().find(|a| a.code == key.code) {
            return Some(Action::Answer(answer.clone()));
        }
        if is_dialog_like(key.code) {
            return Some(Action::NotOffered {
                key: key_name(key.code),
            });
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
        KeyCode::Char('D') => Action::Diff,
        KeyCode::Char('+' | '=') => Action::Concurrency { delta: 1 },
        KeyCode::Char('-' | '_') => Action::Concurrency { delta: -1 },
        KeyCode::Char('?') | KeyCode::F(1) => Action::Help,
        KeyCode::Char('q') => Action::Quit,
        _ => return None,
    })
}

/// Keys a dialog might take that the dashboard has no use for: where no dialog takes them, they
/// are answered with a word, never dropped.
pub fn is_dialog_like(code: KeyCode) -> bool {
    matches!(code, KeyCode::Enter)
        || matches!(code, KeyCode::Char(c) if c.is_ascii_digit() || c == 'y' || c == NO_KEY)
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
        "1 2 p y …",
        "answer the dialog of the selected task's pane (the keys on its banner, which names \
         the task); the keys wait a second after an answer or a pane that came by itself",
    ),
    (
        "Enter",
        "the option the dialog highlights (only where it highlights one)",
    ),
    ("n", "say No to the dialog (sends it Esc)"),
    ("z", "zoom the focused pane to the full screen"),
    ("Esc", "leave zoom (never answers a dialog)"),
    ("i", "take over the focused agent: every key goes to it"),
    (LEAVE_CHORD, "leave take-over"),
    (
        "[  ]",
        "scroll the focused pane back / forward (also Shift-PgUp/PgDn)",
    ),
    ("Space", "pause / resume the queue (running agents go on)"),
    ("+  -", "more / fewer agents at once"),
    ("c", "cancel the selected task (ends its agent)"),
    ("r", "retry now, with a fresh retry budget (as run --retry)"),
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
        "d  D",
        "the selected task's details in a window / the diff of what its agent changed",
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

    fn answer(code: KeyCode, label: &str, reply: Reply) -> AnswerKey {
        AnswerKey {
            code,
            label: label.into(),
            reply,
        }
    }

    #[test]
    fn a_waiting_dialog_takes_its_keys_first_and_esc_never_answers() {
        let keys_of = |name: &str, bytes: &[u8]| Reply::Keys {
            name: name.into(),
            bytes: bytes.to_vec(),
        };
        let answers = [
            answer(KeyCode::Char('1'), "Yes", Reply::Rule(1)),
            answer(KeyCode::Char('p'), "Yes, don't ask again", Reply::Rule(0)),
            answer(KeyCode::Char('3'), "No", keys_of("3", b"3")),
            answer(KeyCode::Enter, "Yes", keys_of("Enter", b"\r")),
            answer(KeyCode::Char(NO_KEY), "No", keys_of("No", b"\x1b")),
        ];
        // (key, with the dialog, without one)
        let table = [
            (
                KeyCode::Char('1'),
                Some(Action::Answer(answers[0].clone())),
                None,
            ),
            (
                KeyCode::Char('p'),
                Some(Action::Answer(answers[1].clone())),
                None,
            ),
            (
                KeyCode::Char('3'),
                Some(Action::Answer(answers[2].clone())),
                None,
            ),
            (
                KeyCode::Enter,
                Some(Action::Answer(answers[3].clone())),
                None,
            ),
            (
                KeyCode::Char('n'),
                Some(Action::Answer(answers[4].clone())),
                None,
            ),
            // Esc leaves zoom, dialog or not: No is a key of its own.
            (KeyCode::Esc, Some(Action::Unzoom), Some(Action::Unzoom)),
            // A digit the dialog does not offer is answered with a word.
            (
                KeyCode::Char('4'),
                Some(Action::NotOffered { key: "4".into() }),
                None,
            ),
            (
                KeyCode::Char('y'),
                Some(Action::NotOffered { key: "y".into() }),
                None,
            ),
            (KeyCode::Char('z'), Some(Action::Zoom), Some(Action::Zoom)),
            (
                KeyCode::Char('i'),
                Some(Action::TakeOver),
                Some(Action::TakeOver),
            ),
        ];
        for (code, with_dialog, without) in table {
            assert_eq!(normal(&key(code), &answers), with_dialog, "{code:?}");
            assert_eq!(normal(&key(code), &[]), without, "{code:?} with no dialog");
        }
        // Enter on a dialog that highlights nothing is not sent.
        let plain = [answer(KeyCode::Char('p'), "press p", Reply::Rule(2))];
        assert_eq!(
            normal(&key(KeyCode::Enter), &plain),
            Some(Action::NotOffered {
                key: "Enter".into()
            })
        );
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
