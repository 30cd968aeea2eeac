//! A prompt waiting for the operator: the rows to highlight, and the keys the dialog takes,
//! grouped by the option they pick (rules' keys, the dialog's own keys, Enter, `n` for No).

use crossterm::event::KeyCode;

use super::keys::{AnswerKey, NO_KEY, Reply, answer_key, key_name};
use super::model::{Choice, PromptView};
use crate::core::approval;
use crate::core::attempt::Attempt;
use crate::core::guard::Decision;
use crate::core::guard::dialog;
use crate::core::profile::Protocol;
use crate::core::screen::detect::PromptSighting;

/// The sightings that make up the waiting prompt: the one on hold, and every other rule
/// matching the screen now.
fn sightings(attempt: &Attempt) -> Option<Vec<&PromptSighting>> {
    let waiting = attempt.waiting()?;
    let mut list: Vec<&PromptSighting> = attempt.sightings().iter().collect();
    if !list.iter().any(|s| s.rule == waiting.rule) {
        list.push(&waiting.sighting);
    }
    Some(list)
}

/// The rows the waiting prompt covers (first, last).
fn prompt_rows(list: &[&PromptSighting]) -> (usize, usize) {
    let first = list.iter().map(|s| s.rows.0).min().unwrap_or(0);
    let last = list.iter().map(|s| s.rows.1).max().unwrap_or(first);
    (first, last)
}

/// One option of the waiting dialog and the keys that pick it.
struct Group {
    label: String,
    /// The option's wording as the dialog draws it, when it draws it.
    drawn: Option<String>,
    keys: Vec<(KeyCode, Reply)>,
}

impl Group {
    fn has(&self, code: KeyCode) -> bool {
        self.keys.iter().any(|(c, _)| *c == code)
    }
}

fn own_key(code: KeyCode, name: &str, bytes: &[u8]) -> (KeyCode, Reply) {
    let reply = Reply::Keys {
        name: name.into(),
        bytes: bytes.to_vec(),
    };
    (code, reply)
}

/// The waiting dialog's options and their keys, in the dialog's order.
fn groups(attempt: &Attempt) -> Vec<Group> {
    let Some(list) = sightings(attempt) else {
        return Vec::new();
    };
    let profile = attempt.profile();
    let (first, last) = prompt_rows(&list);
    let rows = attempt.screen().visible_rows();
    let below = (last + dialog::ROWS_BELOW).min(rows.len().saturating_sub(1));
    let shown = rows
        .get(first.saturating_sub(dialog::ROWS_ABOVE)..=below)
        .unwrap_or_default();
    let drawn = dialog::read(shown);
    let mut groups: Vec<Group> = Vec::new();
    for option in &drawn.options {
        let code = KeyCode::Char(option.key);
        let key = own_key(
            code,
            &option.key.to_string(),
            option.key.to_string().as_bytes(),
        );
        match groups.iter_mut().find(|g| g.label == option.label) {
            Some(group) => group.keys.push(key),
            None => groups.push(Group {
                label: option.label.clone(),
                drawn: Some(option.label.clone()),
                keys: vec![key],
            }),
        }
    }
    // The profile's rules: keys recorded under the rule's name, with its label.
    for sighting in &list {
        let Some(rule) = profile.prompts.get(sighting.rule) else {
            continue;
        };
        let Some((code, _)) = answer_key(&rule.send) else {
            continue;
        };
        let label = if rule.label.is_empty() {
            rule.name.clone()
        } else {
            rule.label.clone()
        };
        let reply = Reply::Rule(sighting.rule);
        match groups.iter_mut().find(|g| g.has(code)) {
            Some(group) => {
                if let Some(key) = group.keys.iter_mut().find(|(c, _)| *c == code) {
                    key.1 = reply;
                }
                group.label = label;
            }
            None => groups.push(Group {
                label,
                drawn: None,
                keys: vec![(code, reply)],
            }),
        }
    }
    add_enter(&mut groups, drawn.highlighted.as_deref(), profile.protocol);
    if !groups.iter().any(|g| g.has(KeyCode::Char(NO_KEY))) {
        // Dialogs take Esc as no; a typed `(Y)es/(N)o` question takes `n` and Enter.
        let no = match drawn.typed_yes_no {
            true => own_key(KeyCode::Char(NO_KEY), "No (n)", b"n\r"),
            false => own_key(KeyCode::Char(NO_KEY), "No (Esc)", b"\x1b"),
        };
        match groups.iter_mut().find(|g| g.label == "No") {
            Some(group) => group.keys.push(no),
            None => groups.push(Group {
                label: "No".into(),
                drawn: None,
                keys: vec![no],
            }),
        }
    }
    groups
}

/// Enter picks the option the dialog highlights, and only where it highlights one (herd's own
/// ACP dialog takes Enter as "allow once", never a broader option).
fn add_enter(groups: &mut [Group], highlighted: Option<&str>, protocol: Protocol) {
    if groups.iter().any(|g| g.has(KeyCode::Enter)) {
        return;
    }
    let target = match (highlighted, protocol) {
        (Some(label), _) => groups
            .iter()
            .position(|g| g.drawn.as_deref() == Some(label)),
        (None, Protocol::Acp) => groups.iter().position(|g| g.label == "Allow once"),
        (None, _) => None,
    };
    if let Some(group) = target.and_then(|i| groups.get_mut(i)) {
        group.keys.push(own_key(KeyCode::Enter, "Enter", b"\r"));
    }
}

/// The keys that answer the waiting prompt, each with the option it picks.
pub fn answer_keys(attempt: &Attempt) -> Vec<AnswerKey> {
    groups(attempt)
        .into_iter()
        .flat_map(|group| {
            let label = group.label;
            group.keys.into_iter().map(move |(code, reply)| AnswerKey {
                code,
                label: label.clone(),
                reply,
            })
        })
        .collect()
}

/// What a pane shows while its agent waits for the operator.
pub fn view(attempt: &Attempt) -> Option<PromptView> {
    let waiting = attempt.waiting()?;
    let list = sightings(attempt)?;
    let profile = attempt.profile();
    let choices = groups(attempt)
        .into_iter()
        .map(|g| Choice {
            key: g
                .keys
                .iter()
                .map(|(code, _)| key_name(*code))
                .collect::<Vec<_>>()
                .join("/"),
            label: g.label,
        })
        .collect();
    let rule = profile
        .prompts
        .get(waiting.rule)
        .map_or_else(String::new, |r| r.name.clone());
    let note = waiting.guard_note();
    let guard_objects = match &waiting.decision {
        Some(Decision::Refuse { .. }) => true,
        Some(Decision::Ask { reason }) => reason == approval::UNREAD,
        _ => false,
    };
    Some(PromptView {
        rule,
        rows: prompt_rows(&list),
        choices,
        guard: (!note.is_empty()).then_some(note),
        guard_objects,
    })
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::core::approval::GuardSetup;
    use crate::core::attempt::{AttemptSetup, Event};
    use crate::core::profile::ProfileSet;
    use crate::core::task::Completion;

    /// A simulator attempt (nothing answered by herd) that has drawn `screen`.
    fn waiting_on(screen: &str) -> Attempt {
        waiting_in("sim", screen)
    }

    /// An attempt of profile `name` (nothing answered by herd) that has drawn `screen`.
    fn waiting_in(name: &str, screen: &str) -> Attempt {
        let profile = ProfileSet::build(&crate::assets::built_in_profile_texts(), None)
            .expect("profiles")
            .get(name)
            .expect("profile")
            .clone();
        let auto_rules = vec![false; profile.prompts.len()];
        let mut attempt = Attempt::new(AttemptSetup {
            profile,
            marker: "TASK_COMPLETE:t".into(),
            prompt: "p".into(),
            rows: 24,
            cols: 100,
            timeout: Duration::from_secs(600),
            idle: Duration::from_secs(60),
            permission_wait: None,
            auto_rules,
            answer_cap: 5,
            completion: Completion::Marker,
            marker_required: true,
            guard: GuardSetup::default(),
        });
        attempt.handle(Event::Output(screen.as_bytes()), Duration::from_secs(1));
        attempt
    }

    fn banner_keys(attempt: &Attempt) -> Vec<(String, String)> {
        view(attempt)
            .map(|v| v.choices.into_iter().map(|c| (c.key, c.label)).collect())
            .unwrap_or_default()
    }

    #[test]
    fn the_banner_lists_every_key_the_dialog_takes_by_option() {
        let claude = "\x1b[2J\x1b[H Bash command\r\n\r\n   npm test\r\n\r\n Do you want to proceed?\r\n ❯ 1. Yes\r\n   2. Yes, and don't ask again for npm commands (p)\r\n   3. No\r\n\r\n Esc to cancel";
        let codex = "\x1b[2J\x1b[H  $ touch x\r\n\r\n› 1. Yes, proceed (y)\r\n  2. Yes, and don't ask again for commands that start with `touch x` (p)\r\n  3. No, and tell Codex what to do differently (esc)\r\n\r\n  Press enter to confirm or esc to cancel";
        let pair = |k: &str, l: &str| (k.to_string(), l.to_string());
        let table = [
            (
                claude,
                vec![
                    pair("1/Enter", "Yes"),
                    pair("2/p", "Yes, don't ask again"),
                    pair("3/n", "No"),
                ],
            ),
            (
                codex,
                vec![
                    pair("1/y/Enter", "Yes"),
                    pair("2/p", "Yes, don't ask again"),
                    pair("3", "No, and tell Codex what to do differently"),
                    pair("n", "No"),
                ],
            ),
            // A question that highlights nothing takes no Enter.
            (
                "\x1b[2J\x1b[HStarting.\r\npress p to allow always",
                vec![pair("p", "press p"), pair("n", "No")],
            ),
            (
                "\x1b[2J\x1b[HStarting.\r\nPress 1 to continue",
                vec![pair("1", "Continue"), pair("n", "No")],
            ),
        ];
        for (screen, want) in table {
            let attempt = waiting_on(screen);
            assert!(attempt.waiting().is_some(), "{screen:?}");
            assert_eq!(banner_keys(&attempt), want, "{screen:?}");
        }
    }

    #[test]
    fn each_key_sends_what_its_option_takes_recorded_by_rule_or_by_name() {
        let codex = "\x1b[2J\x1b[H  $ touch x\r\n\r\n› 1. Yes, proceed (y)\r\n  2. Yes, and don't ask again for commands that start with `touch x` (p)\r\n  3. No, and tell Codex what to do differently (esc)\r\n";
        let attempt = waiting_on(codex);
        let keys = answer_keys(&attempt);
        let reply = |code: KeyCode| {
            keys.iter()
                .find(|k| k.code == code)
                .map(|k| k.reply.clone())
        };
        let rule = |name: &str| {
            attempt
                .profile()
                .prompts
                .iter()
                .position(|r| r.name == name)
                .map(Reply::Rule)
        };
        let own = |name: &str, bytes: &[u8]| {
            Some(Reply::Keys {
                name: name.into(),
                bytes: bytes.to_vec(),
            })
        };
        assert_eq!(reply(KeyCode::Char('1')), rule("press_1"));
        assert_eq!(reply(KeyCode::Char('p')), rule("press_p"));
        assert_eq!(reply(KeyCode::Char('y')), own("y", b"y"));
        assert_eq!(reply(KeyCode::Char('2')), own("2", b"2"));
        assert_eq!(reply(KeyCode::Char('3')), own("3", b"3"));
        assert_eq!(reply(KeyCode::Enter), own("Enter", b"\r"));
        assert_eq!(reply(KeyCode::Char('n')), own("No (Esc)", b"\x1b"));
        assert_eq!(reply(KeyCode::Esc), None, "Esc never answers");
        assert_eq!(reply(KeyCode::Char('4')), None);
    }

    #[test]
    fn no_to_a_typed_yes_no_question_is_n_and_enter() {
        let aider =
            "\x1b[2J\x1b[H$ make test\r\nRun shell command? (Y)es/(N)o/(D)on't ask again [Yes]: ";
        let attempt = waiting_in("aider", aider);
        assert!(attempt.waiting().is_some());
        let keys = answer_keys(&attempt);
        let no = keys.iter().find(|k| k.code == KeyCode::Char(NO_KEY));
        assert_eq!(
            no.map(|k| k.reply.clone()),
            Some(Reply::Keys {
                name: "No (n)".into(),
                bytes: b"n\r".to_vec()
            })
        );
        assert!(
            keys.iter().any(|k| k.code == KeyCode::Char('y')),
            "{keys:?}"
        );
        assert!(!keys.iter().any(|k| k.code == KeyCode::Enter), "{keys:?}");
    }
}
