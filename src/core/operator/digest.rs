//! "Since you left": what completed and failed since the operator last looked (or since the
//! run's start), what waits and what needs them, each with the command that answers it. What
//! waits is said whatever its age: it is still open. Pure.

use jiff::Timestamp;

use crate::core::guard::shell_words::quote;
use crate::core::operator::clock_words::{self, LocalNow};
use crate::core::task::TaskStatus;

/// One task as the digest needs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskFact {
    pub task_id: String,
    pub status: TaskStatus,
    pub enabled: bool,
    /// When its last attempt ended.
    pub ended_at: Option<Timestamp>,
    /// Why it failed, in the morning's words (`core::deciding_event::why`).
    pub why: Option<String>,
    /// When a retryable task starts again.
    pub retry_at: Option<Timestamp>,
    /// The agent's questions, when it needs the operator's input.
    pub questions: Vec<String>,
    /// What its last attempt changed, in words (`3 files +120 −14`), where herd recorded it.
    pub changes: Option<String>,
    /// How long its last attempt took.
    pub took: Option<std::time::Duration>,
}

/// A prompt waiting for the operator now, in a running batch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptFact {
    pub task_id: String,
    pub prompt_id: String,
    /// What it asks (`Bash(touch x)`).
    pub asks: String,
}

/// Where "since you left" starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Since {
    /// The operator's last `herd status` or `herd attach`.
    LastLook(Timestamp),
    /// The run's start: the operator has not looked since.
    RunStart(Timestamp),
}

impl Since {
    fn at(self) -> Timestamp {
        match self {
            Since::LastLook(at) | Since::RunStart(at) => at,
        }
    }
}

/// Away for less than this, the digest is no first screen on `herd attach`.
pub const AWAY: std::time::Duration = std::time::Duration::from_secs(10 * 60);

/// The line of a digest with nothing to say.
pub const NOTHING: &str = "  nothing ended and nothing waits for you";

/// Whether a digest is worth a screen of its own: away at least [`AWAY`], something new.
pub fn worth_a_first_screen(lines: &[String], since: Since, now: Timestamp) -> bool {
    let away = now.duration_since(since.at());
    let news = lines.len() > 1 && lines[1] != NOTHING;
    news && away >= jiff::SignedDuration::try_from(AWAY).unwrap_or(jiff::SignedDuration::MAX)
}

/// The digest's lines: a heading, then one section per kind of news (none for nothing).
pub fn digest(
    tasks: &[TaskFact],
    prompts: &[PromptFact],
    since: Since,
    tasks_file: &str,
    local: &LocalNow,
) -> Vec<String> {
    let when = clock_words::clock_time(since.at(), &local.zone, local.now);
    let ago = clock_words::from_now(since.at(), local.now);
    let mut lines = vec![match since {
        Since::LastLook(_) => format!("Since you last looked ({when}, {ago}):"),
        Since::RunStart(_) => format!("Since the run started ({when}, {ago}):"),
    }];
    // Results are written to the second: an end in the run's first second counts, one in the
    // last look's second was seen.
    let ended_since = |t: &&TaskFact| {
        t.ended_at.is_some_and(|at| match since {
            Since::RunStart(start) => at.as_second() >= start.as_second(),
            Since::LastLook(look) => at.as_second() > look.as_second(),
        })
    };
    let completed: Vec<&TaskFact> = tasks
        .iter()
        .filter(ended_since)
        .filter(|t| t.status == TaskStatus::Completed)
        .collect();
    if completed.iter().any(|t| t.changes.is_some()) {
        // Each with what it changed and how long it took: the morning's review, at a glance.
        section(
            &mut lines,
            "completed",
            completed.iter().map(|t| with_changes(t)),
        );
    } else if !completed.is_empty() {
        let ids: Vec<&str> = completed.iter().map(|t| t.task_id.as_str()).collect();
        lines.push(format!("  completed  {}", ids.join(", ")));
    }
    let failed = tasks
        .iter()
        .filter(ended_since)
        .filter(|t| t.status == TaskStatus::Failed)
        .map(|t| match &t.why {
            Some(why) => format!("{}: {why}", t.task_id),
            None => t.task_id.clone(),
        });
    section(&mut lines, "failed", failed);
    section(&mut lines, "waits", waits(tasks, local));
    let file = quote(tasks_file);
    let needs = tasks
        .iter()
        .filter(|t| t.status == TaskStatus::NeedsInput)
        .map(|t| {
            let asked = match t.questions.as_slice() {
                [] => "the agent asks for input".to_string(),
                [one] => format!("asks “{one}”"),
                [first, rest @ ..] => format!("asks “{first}” (+{} more)", rest.len()),
            };
            let id = quote(&t.task_id);
            format!(
                "{}: {asked}; answer: herd message --tasks {file} {id} \"...\"",
                t.task_id
            )
        })
        .chain(prompts.iter().map(|p| {
            format!(
                "{}: a prompt waits: {}; answer: herd ctl --tasks {file} answer {} approve (or deny)",
                p.task_id,
                p.asks,
                quote(&p.prompt_id)
            )
        }));
    section(&mut lines, "needs you", needs);
    if lines.len() == 1 {
        lines.push(NOTHING.to_string());
    }
    lines
}

/// `fix-042: 3 files +120 −14, took 12 min`
fn with_changes(task: &TaskFact) -> String {
    let mut words: Vec<String> = task.changes.iter().cloned().collect();
    if let Some(took) = task.took {
        words.push(format!("took {}", clock_words::span(took)));
    }
    match words.is_empty() {
        true => task.task_id.clone(),
        false => format!("{}: {}", task.task_id, words.join(", ")),
    }
}

/// Retries with their clock times, then how many tasks have not started.
fn waits(tasks: &[TaskFact], local: &LocalNow) -> Vec<String> {
    let mut out: Vec<String> = tasks
        .iter()
        .filter(|t| t.enabled && t.status == TaskStatus::Retryable)
        .map(|t| match (t.retry_at, &t.why) {
            // The quota's reset says when, in the zone the agent named.
            (Some(at), Some(why)) if at > local.now && why.starts_with("quota: ") => {
                format!("{}: {why}, then retries", t.task_id)
            }
            (Some(at), why) if at > local.now => format!(
                "{}: retry {}{}",
                t.task_id,
                clock_words::clock_time_from_now(at, &local.zone, local.now),
                why.as_ref()
                    .map(|why| format!(" after {why}"))
                    .unwrap_or_default()
            ),
            _ => format!("{}: retry as soon as a herd runs the file", t.task_id),
        })
        .collect();
    let pending = tasks
        .iter()
        .filter(|t| t.enabled && t.status == TaskStatus::Pending)
        .count();
    if pending > 0 {
        let noun = if pending == 1 { "task" } else { "tasks" };
        out.push(format!("{pending} {noun} not started yet"));
    }
    out
}

/// `  label      first` and the rest indented under it.
fn section(lines: &mut Vec<String>, label: &str, items: impl IntoIterator<Item = String>) {
    for (i, item) in items.into_iter().enumerate() {
        let head = if i == 0 { label } else { "" };
        lines.push(format!("  {head:<9}  {item}"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str) -> Timestamp {
        text.parse().expect("timestamp")
    }

    fn local() -> LocalNow {
        LocalNow {
            now: at("2026-11-29T08:00:00Z"),
            zone: jiff::tz::TimeZone::UTC,
        }
    }

    fn fact(id: &str, status: TaskStatus, ended: Option<&str>) -> TaskFact {
        TaskFact {
            task_id: id.into(),
            status,
            enabled: true,
            ended_at: ended.map(at),
            why: None,
            retry_at: None,
            questions: Vec::new(),
            changes: None,
            took: None,
        }
    }

    #[test]
    fn the_digest_says_what_ended_since_the_look_what_waits_and_what_needs_you() {
        let tasks = vec![
            fact("old", TaskStatus::Completed, Some("2026-11-29T01:00:00Z")),
            fact("seen", TaskStatus::Failed, Some("2026-11-29T02:29:59Z")),
            fact("ok", TaskStatus::Completed, Some("2026-11-29T03:00:00Z")),
            fact("docs", TaskStatus::Completed, Some("2026-11-29T04:00:00Z")),
            // Written to the second, in the second of the look: the look showed it.
            fact("looked", TaskStatus::Completed, Some("2026-11-29T02:30:00Z")),
            TaskFact {
                why: Some(
                    "waited 30 min for an answer to Bash(touch x); nobody answered (timeout after 1800 s)"
                        .into(),
                ),
                ..fact("ask", TaskStatus::Failed, Some("2026-11-29T05:00:00Z"))
            },
            TaskFact {
                retry_at: Some(at("2026-11-29T14:00:00Z")),
                why: Some("quota: resets 15:00 Europe/Berlin (in 6 h)".into()),
                ..fact("quota", TaskStatus::Retryable, Some("2026-11-29T02:00:00Z"))
            },
            TaskFact {
                retry_at: Some(at("2026-11-29T08:05:00Z")),
                why: Some("Error: connection reset (exit code 1)".into()),
                ..fact("flaky", TaskStatus::Retryable, Some("2026-11-29T02:00:00Z"))
            },
            fact("later", TaskStatus::Pending, None),
            TaskFact {
                questions: vec!["Which DB?".into(), "Drop it?".into()],
                ..fact("q", TaskStatus::NeedsInput, Some("2026-11-29T06:00:00Z"))
            },
        ];
        let prompts = vec![PromptFact {
            task_id: "guarded".into(),
            prompt_id: "guarded/1/1".into(),
            asks: "Bash(rm -rf build)".into(),
        }];
        let lines = digest(
            &tasks,
            &prompts,
            Since::LastLook(at("2026-11-29T02:30:00.400Z")),
            "my tasks.json",
            &local(),
        );
        assert_eq!(
            lines,
            [
                "Since you last looked (02:30, 5 h 29 min ago):",
                "  completed  ok, docs",
                "  failed     ask: waited 30 min for an answer to Bash(touch x); nobody answered (timeout after 1800 s)",
                "  waits      quota: quota: resets 15:00 Europe/Berlin (in 6 h), then retries",
                "             flaky: retry 08:05 (in 5 min) after Error: connection reset (exit code 1)",
                "             1 task not started yet",
                "  needs you  q: asks “Which DB?” (+1 more); answer: herd message --tasks 'my tasks.json' q \"...\"",
                "             guarded: a prompt waits: Bash(rm -rf build); answer: herd ctl --tasks 'my tasks.json' answer guarded/1/1 approve (or deny)",
            ]
        );
    }

    #[test]
    fn the_digest_is_a_first_screen_only_after_an_absence_with_news() {
        let news = vec!["Since …".to_string(), "  completed  ok".to_string()];
        let quiet = vec!["Since …".to_string(), NOTHING.to_string()];
        let now = at("2026-11-29T08:00:00Z");
        let long_ago = Since::RunStart(at("2026-11-29T07:50:00Z"));
        let just_now = Since::LastLook(at("2026-11-29T07:59:00Z"));
        assert!(worth_a_first_screen(&news, long_ago, now));
        assert!(!worth_a_first_screen(&quiet, long_ago, now));
        assert!(!worth_a_first_screen(&news, just_now, now));
    }

    #[test]
    fn without_a_look_the_run_start_counts_and_a_quiet_night_says_so() {
        let tasks = vec![fact(
            "old",
            TaskStatus::Completed,
            Some("2026-11-28T20:00:00Z"),
        )];
        let lines = digest(
            &tasks,
            &[],
            Since::RunStart(at("2026-11-28T22:00:00Z")),
            "t.json",
            &local(),
        );
        assert_eq!(
            lines,
            [
                "Since the run started (Sat 22:00, 10 h ago):",
                "  nothing ended and nothing waits for you",
            ]
        );
    }

    #[test]
    fn completed_tasks_say_what_they_changed_and_how_long_they_took() {
        let tasks = vec![
            TaskFact {
                changes: Some("3 files +120 −14".into()),
                took: Some(std::time::Duration::from_secs(12 * 60)),
                ..fact("fix", TaskStatus::Completed, Some("2026-11-29T03:00:00Z"))
            },
            TaskFact {
                changes: Some("not a repository".into()),
                ..fact("notes", TaskStatus::Completed, Some("2026-11-29T04:00:00Z"))
            },
            fact("plain", TaskStatus::Completed, Some("2026-11-29T05:00:00Z")),
        ];
        let lines = digest(
            &tasks,
            &[],
            Since::LastLook(at("2026-11-29T02:30:00Z")),
            "t.json",
            &local(),
        );
        assert_eq!(
            lines[1..],
            [
                format!(
                    "  completed  fix: 3 files +120 −14, took {}",
                    clock_words::span(std::time::Duration::from_secs(720))
                ),
                "             notes: not a repository".to_string(),
                "             plain".to_string(),
            ]
        );
    }
}
