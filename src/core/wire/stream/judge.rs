//! The verdict the structured facts give on their own, before any screen text rule.

use super::{StreamError, StreamFacts};
use crate::core::profile::Profile;
use crate::core::task::FailureType;

/// Evidence is cut to this many characters.
const EVIDENCE_CHARS: usize = 300;

/// Error kinds (lower case) that name an auth failure.
const AUTH_KINDS: [&str; 5] = [
    "authentication_error",
    "authentication_failed",
    "invalid_api_key",
    "api_key_invalid",
    "unauthenticated",
];
/// Error kinds (lower case) that name a quota failure; `usage_limit*` is matched as a prefix.
const QUOTA_KINDS: [&str; 6] = [
    "rate_limit_error",
    "rate_limit",
    "billing_error",
    "insufficient_quota",
    "resource_exhausted",
    "quota_exceeded",
];
/// Error kinds of a set-up problem: herd's ACP client could not set the permission mode.
const CONFIG_KINDS: [&str; 1] = [crate::core::wire::acp::session::MODE_NOT_SET];
/// Error kinds (lower case) of server trouble: a process failure, retried.
const PROCESS_KINDS: [&str; 3] = ["overloaded_error", "api_error", "server_error"];

/// Texts (lower case) that say auth when the profile's do not; `401` as a number of its own.
const AUTH_TEXTS: [&str; 7] = [
    "unauthorized",
    "invalid api key",
    "incorrect api key",
    "invalid x-api-key",
    "api key not valid",
    "api_key_invalid",
    "not logged in",
];
/// Texts (lower case) that say quota when the profile's do not; `429` as a number of its own.
const QUOTA_TEXTS: [&str; 10] = [
    "rate limit",
    "rate_limit",
    "quota exceeded",
    "exceeded your current quota",
    "insufficient_quota",
    "usage limit",
    "credit balance",
    "no credits",
    "resource_exhausted",
    "too many requests",
];

/// `Some((failure, evidence))` for a failure the facts decide, `None` otherwise. In order:
/// unasked tool calls; denials and refused calls; a successful final event; the errors (fatal
/// first, latest first) by kind, status and texts; else an unsuccessful end is a process failure.
pub fn judge(facts: &StreamFacts, profile: &Profile) -> Option<(FailureType, String)> {
    if !facts.unasked_tools.is_empty() {
        let evidence = one_line(&facts.unasked_tools.join("; "));
        return Some((FailureType::PermissionBlocked, evidence));
    }
    if !facts.permission_denials.is_empty() || !facts.refused_tools.is_empty() {
        let denied = facts
            .permission_denials
            .iter()
            .chain(&facts.refused_tools)
            .map(String::as_str)
            .collect::<Vec<_>>()
            .join(", ");
        return Some((
            FailureType::PermissionBlocked,
            one_line(&format!("permission denied: {denied}")),
        ));
    }
    if facts.result.as_ref().is_some_and(|result| result.success) {
        return None;
    }
    let fatal = facts.errors.iter().rev().filter(|error| error.fatal);
    let others = facts.errors.iter().rev().filter(|error| !error.fatal);
    for error in fatal.chain(others) {
        if let Some(failure) = classify(error, profile) {
            return Some((failure, one_line(&describe(error))));
        }
    }
    let latest_fatal = facts.errors.iter().rev().find(|error| error.fatal);
    let failed_result = facts.result.as_ref().filter(|result| !result.success);
    if latest_fatal.is_none() && failed_result.is_none() {
        return None;
    }
    let what = latest_fatal
        .map(describe)
        .or_else(|| failed_result.and_then(|result| result.subtype.clone()))
        .unwrap_or_else(|| "no details".to_string());
    Some((
        FailureType::Process,
        one_line(&format!("the agent reported an error: {what}")),
    ))
}

/// Auth or quota, when the error's kind or status says so: the failures retrying never heals.
pub(super) fn hopeless_class(error: &StreamError) -> Option<FailureType> {
    retried_class(error).filter(|f| matches!(f, FailureType::Auth | FailureType::Quota))
}

/// What a retried error's kind or status names: auth, quota, or a server error (process).
pub(super) fn retried_class(error: &StreamError) -> Option<FailureType> {
    let by_kind = error.kind.as_deref().and_then(failure_of_kind);
    by_kind.or_else(|| error.status.and_then(failure_of_status))
}

/// The failure one error names, if any.
fn classify(error: &StreamError, profile: &Profile) -> Option<FailureType> {
    let by_kind = error.kind.as_deref().and_then(failure_of_kind);
    let by_status = error.status.and_then(failure_of_status);
    by_kind
        .or(by_status)
        .or_else(|| failure_by_profile(&error.message, profile))
        .or_else(|| failure_by_builtin_text(&error.message))
}

fn failure_of_kind(kind: &str) -> Option<FailureType> {
    let kind = kind.to_ascii_lowercase();
    let kind = kind.as_str();
    if AUTH_KINDS.contains(&kind) {
        Some(FailureType::Auth)
    } else if QUOTA_KINDS.contains(&kind) || kind.starts_with("usage_limit") {
        Some(FailureType::Quota)
    } else if CONFIG_KINDS.contains(&kind) {
        Some(FailureType::Config)
    } else if PROCESS_KINDS.contains(&kind) {
        Some(FailureType::Process)
    } else {
        None
    }
}

fn failure_of_status(status: u16) -> Option<FailureType> {
    match status {
        401 | 403 => Some(FailureType::Auth),
        402 | 429 => Some(FailureType::Quota),
        500..=599 => Some(FailureType::Process),
        _ => None,
    }
}

fn failure_by_profile(message: &str, profile: &Profile) -> Option<FailureType> {
    [
        (&profile.auth, FailureType::Auth),
        (&profile.quota, FailureType::Quota),
        (&profile.transient, FailureType::Process),
    ]
    .into_iter()
    .find(|(patterns, _)| patterns.iter().any(|pattern| pattern.is_match(message)))
    .map(|(_, failure)| failure)
}

fn failure_by_builtin_text(message: &str) -> Option<FailureType> {
    let message = message.to_lowercase();
    let says = |texts: &[&str], code: &str| {
        texts.iter().any(|text| message.contains(text)) || has_number(&message, code)
    };
    if says(&AUTH_TEXTS, "401") {
        Some(FailureType::Auth)
    } else if says(&QUOTA_TEXTS, "429") {
        Some(FailureType::Quota)
    } else {
        None
    }
}

/// Whether `digits` stands in `text` as a number of its own (not inside `14012`).
fn has_number(text: &str, digits: &str) -> bool {
    text.match_indices(digits).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + digits.len()..].chars().next();
        !before.is_some_and(|c| c.is_ascii_alphanumeric())
            && !after.is_some_and(|c| c.is_ascii_alphanumeric())
    })
}

/// What an error says: its message, else its kind, else its status.
fn describe(error: &StreamError) -> String {
    if !error.message.trim().is_empty() {
        return error.message.clone();
    }
    match (&error.kind, error.status) {
        (Some(kind), _) => kind.clone(),
        (None, Some(status)) => format!("status {status}"),
        (None, None) => "no details".to_string(),
    }
}

/// The text on one line, whitespace runs as one space, at most [`EVIDENCE_CHARS`] characters.
fn one_line(text: &str) -> String {
    let joined = text.split_whitespace().collect::<Vec<_>>().join(" ");
    match joined.char_indices().nth(EVIDENCE_CHARS) {
        Some((cut, _)) => format!("{}…", &joined[..cut]),
        None => joined,
    }
}
