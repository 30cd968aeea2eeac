//! The profile's failure texts found on screen rows read as logical lines: a text the CLI
//! hard-wrapped over two rows still counts, box borders left out.

use super::Verdict;
use crate::core::profile::Profile;
use crate::core::task::FailureType;

/// The profile's failure texts on `lines`, read as logical lines: a text running from one row
/// into the next counts (joined with a space, then without: Gemini wraps inside words).
pub(super) fn by_text<'a>(
    lines: impl Iterator<Item = &'a str> + Clone,
    profile: &Profile,
) -> Option<Verdict> {
    let rows: Vec<&str> = lines.map(unboxed).collect();
    for (failure, patterns) in [
        (FailureType::Auth, &profile.auth),
        (FailureType::Quota, &profile.quota),
        (FailureType::Config, &profile.config),
        (FailureType::Process, &profile.transient),
    ] {
        if let Some(text) = matching_logical_line(&rows, patterns) {
            return Some(Verdict::failed(failure, text));
        }
    }
    None
}

/// The failure the profile's texts name on these rows, with the line: for judging retries live.
pub fn failure_text(rows: &[String], profile: &Profile) -> Option<(FailureType, String)> {
    let verdict = by_text(rows.iter().map(String::as_str), profile)?;
    Some((verdict.failure?, verdict.evidence?))
}

/// The first row a pattern matches; else a row joined with the next where a match spans both (a
/// row is never blamed for its neighbour's text).
fn matching_logical_line(rows: &[&str], patterns: &[regex::Regex]) -> Option<String> {
    if let Some(row) = rows
        .iter()
        .find(|row| patterns.iter().any(|re| re.is_match(row)))
    {
        return Some(row.to_string());
    }
    for (row, next) in rows.iter().zip(rows.iter().skip(1)) {
        if next.is_empty() {
            continue;
        }
        for joint in [" ", ""] {
            let joined = format!("{row}{joint}{next}");
            let spans = |re: &regex::Regex| {
                re.find_iter(&joined)
                    .any(|m| m.start() < row.len() && m.end() > row.len() + joint.len())
            };
            if patterns.iter().any(spans) {
                return Some(joined);
            }
        }
    }
    None
}

/// Which of the profile's failure texts the rows show, in the verdict's order, for `herd explain`.
pub fn failure_texts(rows: &[String], profile: &Profile) -> Vec<(&'static str, String)> {
    let rows: Vec<&str> = rows.iter().map(|r| unboxed(r)).collect();
    [
        ("auth", &profile.auth),
        ("quota", &profile.quota),
        ("config", &profile.config),
        ("transient", &profile.transient),
    ]
    .into_iter()
    .filter_map(|(name, patterns)| matching_logical_line(&rows, patterns).map(|line| (name, line)))
    .collect()
}

/// A row without the side borders of the box it is drawn in (`│ text │`), trimmed.
fn unboxed(row: &str) -> &str {
    let row = row.trim();
    let row = row.strip_prefix('│').unwrap_or(row);
    let row = row.strip_suffix('│').unwrap_or(row);
    row.trim()
}
