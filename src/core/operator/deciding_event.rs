//! The event that decided an attempt's verdict, as the operator reads it in the morning
//! (`waited 30 min for an answer to Bash(touch x); nobody answered`, `last seen: ✢ Thinking…`),
//! and which screen line says what the agent was doing (never its echo, input box or footer).

use std::time::Duration;

use jiff::tz::TimeZone;
use jiff::{Timestamp, Zoned};

use crate::core::facts::failure_context::why_failed;
use crate::core::operator::clock_words::{self, LocalNow, span};

/// A prompt still waiting for the operator when the attempt was stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unanswered {
    /// What it asks, in short (`Bash(touch x)`), or `a prompt`.
    pub asks: String,
    /// How long it had waited.
    pub waited: Duration,
}

/// What the attempt was doing when herd decided to stop it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EndingScene {
    pub unanswered: Option<Unanswered>,
    /// The agent's last dialog or status line on screen.
    pub last_activity: Option<String>,
}

impl EndingScene {
    /// The scene of `rows` (the screen when stopped), the `prompt` and the prompt left waiting.
    pub fn of(rows: &[String], prompt: &str, unanswered: Option<Unanswered>) -> EndingScene {
        EndingScene {
            unanswered,
            last_activity: last_activity(rows, prompt),
        }
    }

    /// One line naming the event: the unanswered prompt first, else the agent's last words.
    pub fn describe(&self) -> Option<String> {
        if let Some(u) = &self.unanswered {
            return Some(format!(
                "waited {} for an answer to {}; nobody answered",
                span(u.waited),
                u.asks
            ));
        }
        self.last_activity
            .as_ref()
            .map(|line| format!("last seen: {line}"))
    }
}

/// `quota: resets 15:00 Europe/Berlin (in 2 h 9 min)`: the reset in the zone the agent named.
pub fn quota_wait(reset: &Zoned, local: &TimeZone, now: Timestamp) -> String {
    let zone = reset.time_zone();
    let named = zone
        .iana_name()
        .filter(|name| local.iana_name() != Some(*name));
    let clock = clock_words::clock_time(reset.timestamp(), zone, now);
    let from_now = clock_words::from_now(reset.timestamp(), now);
    match named {
        Some(name) => format!("quota: resets {clock} {name} ({from_now})"),
        None => format!("quota: resets {clock} ({from_now})"),
    }
}

/// A task's "why": a quota reset as a clock time, else the deciding event or headline beside the
/// evidence.
pub fn why(
    evidence: Option<&str>,
    cause: Option<&str>,
    quota_resets_at: Option<&Zoned>,
    local: &LocalNow,
) -> Option<String> {
    match quota_resets_at {
        Some(reset) => Some(quota_wait(reset, &local.zone, local.now)),
        None => why_failed(evidence, cause),
    }
}

/// Prompt glyphs an input box or an echoed prompt starts with.
const PROMPT_GLYPHS: [char; 4] = ['❯', '>', '›', '│'];

/// The last row that says what the agent was doing: above its input box, skipping blank and
/// drawing-only rows and its echo of `prompt`.
pub fn last_activity(rows: &[String], prompt: &str) -> Option<String> {
    let above_input = input_box_top(rows).unwrap_or(rows.len());
    rows[..above_input]
        .iter()
        .rev()
        .map(|row| row.trim())
        .find(|row| says_something(row) && !echoes(row, prompt))
        .map(str::to_string)
}

/// The row where the input box starts: a rule row whose next row is a bare prompt glyph.
fn input_box_top(rows: &[String]) -> Option<usize> {
    (0..rows.len().saturating_sub(1))
        .rev()
        .find(|&i| is_rule(&rows[i]) && is_bare_prompt(&rows[i + 1]))
}

fn is_rule(row: &str) -> bool {
    let row = row.trim();
    !row.is_empty() && row.chars().all(|c| matches!(c, '─' | '━' | '-' | '═'))
}

fn is_bare_prompt(row: &str) -> bool {
    let row = row.trim();
    row.chars().count() == 1 && row.chars().all(|c| PROMPT_GLYPHS.contains(&c))
}

/// A row with at least one letter or digit: not blank, not only a frame.
fn says_something(row: &str) -> bool {
    row.chars().any(char::is_alphanumeric)
}

/// The row is (part of) the prompt as the agent echoed it.
fn echoes(row: &str, prompt: &str) -> bool {
    let text = row.trim_start_matches(PROMPT_GLYPHS).trim();
    let folded = fold(text);
    folded.chars().count() >= 4 && fold(prompt).contains(&folded)
}

fn fold(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A quota failure's reset as the result recorded it (`quota_resets_at`).
fn quota_resets_at(result: Option<&serde_json::Value>) -> Option<Zoned> {
    result?.get("quota_resets_at")?.as_str()?.parse().ok()
}

/// A task's "why" at `local`: what decided its failure (`why`), from its `result` as recorded.
pub fn why_of(result: Option<&serde_json::Value>, local: &LocalNow) -> Option<String> {
    let text = |key: &str| {
        result
            .and_then(|r| r.get(key))
            .and_then(serde_json::Value::as_str)
    };
    why(
        text("failure_evidence"),
        text("failure_cause"),
        quota_resets_at(result).as_ref(),
        local,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const PROMPT: &str = "Run the tests. When complete, print exactly: TASK_COMPLETE:hang";

    fn rows(text: &str) -> Vec<String> {
        text.lines().map(str::to_string).collect()
    }

    #[test]
    fn the_last_activity_is_the_status_line_not_the_echo_or_the_footer() {
        let screen = rows(
            "╰──────────╯\n\
             \n\
             ❯ Run the tests. When complete, print exactly: TASK_COMPLETE:hang\n\
             \n\
             ✢ Thinking… (3s · esc to interrupt)\n\
             \n\
             ──────────────\n\
             ❯\n\
             ──────────────\n\
             \x20 esc to interrupt",
        );
        assert_eq!(
            last_activity(&screen, PROMPT).as_deref(),
            Some("✢ Thinking… (3s · esc to interrupt)")
        );
    }

    #[test]
    fn a_screen_with_only_the_echo_has_no_activity() {
        let table = [
            "❯ Run the tests. When complete, print exactly: TASK_COMPLETE:hang",
            // Wrapped over two rows.
            "> Run the tests. When complete,\n  print exactly: TASK_COMPLETE:hang\n\n───\n❯\n───",
            "",
            "╭────╮\n│    │\n╰────╯",
        ];
        for screen in table {
            assert_eq!(last_activity(&rows(screen), PROMPT), None, "{screen:?}");
        }
    }

    #[test]
    fn without_an_input_box_the_last_line_counts() {
        let screen = rows("> Run the tests.\ncompiling foo v0.1\nrunning 12 tests");
        assert_eq!(
            last_activity(&screen, PROMPT).as_deref(),
            Some("running 12 tests")
        );
    }

    #[test]
    fn the_scene_names_the_unanswered_prompt_before_the_screen() {
        let table = [
            (
                Some(("Bash(touch x)", 1800)),
                Some("● Bash(touch x)"),
                Some("waited 30 min for an answer to Bash(touch x); nobody answered"),
            ),
            (
                Some(("a prompt", 5)),
                None,
                Some("waited 5 s for an answer to a prompt; nobody answered"),
            ),
            (None, Some("✢ Thinking…"), Some("last seen: ✢ Thinking…")),
            (None, None, None),
        ];
        for (unanswered, activity, want) in table {
            let scene = EndingScene {
                unanswered: unanswered.map(|(asks, secs)| Unanswered {
                    asks: asks.to_string(),
                    waited: Duration::from_secs(secs),
                }),
                last_activity: activity.map(str::to_string),
            };
            assert_eq!(scene.describe().as_deref(), want);
        }
    }

    #[test]
    fn the_why_of_a_quota_failure_is_its_reset_else_the_event_beside_the_evidence() {
        let local = LocalNow {
            now: "2026-11-29T11:51:00Z".parse().expect("now"),
            zone: TimeZone::UTC,
        };
        let reset: Zoned = "2026-11-29T15:00:00+01:00[Europe/Berlin]"
            .parse()
            .expect("zoned");
        let quota = "You've hit your usage limit · resets 3pm (Europe/Berlin)";
        assert_eq!(
            why(Some(quota), None, Some(&reset), &local).as_deref(),
            Some("quota: resets 15:00 Europe/Berlin (in 2 h 9 min)")
        );
        assert_eq!(why(Some(quota), None, None, &local).as_deref(), Some(quota));
        assert_eq!(
            why(
                Some("timeout after 1800 s"),
                Some("waited 29 min for an answer to Bash(touch x); nobody answered"),
                None,
                &local
            )
            .as_deref(),
            Some(
                "waited 29 min for an answer to Bash(touch x); nobody answered (timeout after 1800 s)"
            )
        );
        assert_eq!(why(None, None, None, &local), None);
    }

    #[test]
    fn a_quota_wait_is_a_clock_time_in_the_named_zone() {
        let now: Timestamp = "2026-11-29T11:51:00Z".parse().expect("now");
        let berlin = TimeZone::get("Europe/Berlin").expect("zone");
        let reset = "2026-11-29T14:00:00Z"
            .parse::<Timestamp>()
            .expect("reset")
            .to_zoned(berlin.clone());
        assert_eq!(
            quota_wait(&reset, &TimeZone::UTC, now),
            "quota: resets 15:00 Europe/Berlin (in 2 h 9 min)"
        );
        // In the operator's own zone the name says nothing.
        assert_eq!(
            quota_wait(&reset, &berlin, now),
            "quota: resets 15:00 (in 2 h 9 min)"
        );
    }
}
