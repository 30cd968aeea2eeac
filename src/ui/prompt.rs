//! A prompt waiting for the operator, as the dashboard shows and answers it: the rows to
//! highlight, and one key per prompt rule matching the screen (from the profile's `send` and
//! `label`), plus Enter for the option the dialog highlights and Esc for "no".

use super::keys::{AnswerKey, answer_key};
use super::model::{Choice, PromptView};
use crate::core::approval;
use crate::core::attempt::Attempt;
use crate::core::detect::PromptSighting;
use crate::core::guard::Decision;
use crate::core::profile::Protocol;

/// The sightings that make up the waiting prompt: the one on hold, and every other rule
/// matching the screen now (one dialog often matches several).
fn sightings(attempt: &Attempt) -> Option<Vec<&PromptSighting>> {
    let waiting = attempt.waiting()?;
    let mut list: Vec<&PromptSighting> = attempt.sightings().iter().collect();
    if !list.iter().any(|s| s.rule == waiting.rule) {
        list.push(&waiting.sighting);
    }
    Some(list)
}

/// What a pane shows while its agent waits for the operator.
pub fn view(attempt: &Attempt) -> Option<PromptView> {
    let waiting = attempt.waiting()?;
    let list = sightings(attempt)?;
    let profile = attempt.profile();
    let first = list
        .iter()
        .map(|s| s.rows.0)
        .min()
        .unwrap_or(waiting.sighting.rows.0);
    let last = list
        .iter()
        .map(|s| s.rows.1)
        .max()
        .unwrap_or(waiting.sighting.rows.1);
    let mut choices: Vec<Choice> = Vec::new();
    for sighting in &list {
        let Some(rule) = profile.prompts.get(sighting.rule) else {
            continue;
        };
        let Some((_, key)) = answer_key(&rule.send) else {
            continue;
        };
        if choices.iter().any(|c| c.key == key) {
            continue;
        }
        let label = if rule.label.is_empty() {
            rule.name.clone()
        } else {
            rule.label.clone()
        };
        choices.push(Choice { key, label });
    }
    // Digits first, then letters, then named keys: the order dialogs list their options in.
    choices.sort_by_key(|c| {
        let named = c.key.chars().count() > 1;
        let digit = c.key.chars().all(|ch| ch.is_ascii_digit());
        (named, !digit, c.key.clone())
    });
    if !choices.iter().any(|c| c.key == "Enter") {
        // herd's own ACP dialog takes Enter as "allow once", never a broader option.
        let label = match profile.protocol {
            Protocol::Acp => "Allow once",
            _ => "highlighted",
        };
        choices.push(Choice {
            key: "Enter".into(),
            label: label.into(),
        });
    }
    if !choices.iter().any(|c| c.key == "Esc") {
        choices.push(Choice {
            key: "Esc".into(),
            label: "No".into(),
        });
    }
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
        rows: (first, last),
        choices,
        guard: (!note.is_empty()).then_some(note),
        guard_objects,
    })
}

/// The keys that answer the waiting prompt (Esc is handled apart: it sends Esc).
pub fn answer_keys(attempt: &Attempt) -> Vec<AnswerKey> {
    let Some(list) = sightings(attempt) else {
        return Vec::new();
    };
    let profile = attempt.profile();
    let mut keys: Vec<AnswerKey> = Vec::new();
    for sighting in list {
        let Some(rule) = profile.prompts.get(sighting.rule) else {
            continue;
        };
        if let Some((code, _)) = answer_key(&rule.send)
            && !keys.iter().any(|k| k.code == code)
        {
            keys.push(AnswerKey {
                code,
                rule: sighting.rule,
            });
        }
    }
    keys
}
