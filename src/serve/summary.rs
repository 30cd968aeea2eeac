//! Tables of tasks: the summary after a headless run and `herd status`.

use std::fmt::Write;

use serde_json::{Value, json};

use crate::core::operator::clock_words::{self, LocalNow};
use crate::core::task::{TaskSpec, TaskStatus};
use crate::core::taskfile::TaskFile;
use crate::core::{operator::deciding_event, operator::digest};
use crate::run::engine::BatchView;

/// One task's row, its times in the system's zone.
pub fn row(task: &TaskSpec) -> Value {
    row_in(task, &jiff::tz::TimeZone::system())
}

/// When a task's last attempt started and ended, from its result (`completed_at` less
/// `duration_sec`); `None` for a task that has not ended an attempt.
pub fn attempt_times(task: &TaskSpec) -> Option<AttemptTimes> {
    let result = task.result.as_ref()?;
    let ended: jiff::Timestamp = result.get("completed_at")?.as_str()?.parse().ok()?;
    let secs = result
        .get("duration_sec")
        .and_then(Value::as_f64)
        .unwrap_or(0.0);
    let took = std::time::Duration::try_from_secs_f64(secs).unwrap_or_default();
    let started = jiff::SignedDuration::try_from(took)
        .ok()
        .and_then(|d| ended.checked_sub(d).ok())
        .unwrap_or(ended);
    Some(AttemptTimes {
        started,
        ended,
        took,
    })
}

/// The last attempt's start, end and length.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AttemptTimes {
    pub started: jiff::Timestamp,
    pub ended: jiff::Timestamp,
    pub took: std::time::Duration,
}

/// One task's row, its times (`started_at`, `ended_at`: ISO with `zone`'s offset) and
/// `duration_sec` those of its last attempt.
pub fn row_in(task: &TaskSpec, zone: &jiff::tz::TimeZone) -> Value {
    let result = task.result.as_ref();
    let field = |name: &str| {
        result
            .and_then(|r| r.get(name))
            .cloned()
            .unwrap_or(Value::Null)
    };
    let times = attempt_times(task);
    let mut row = json!({
        "task_id": task.task_id,
        "agent": task.agent,
        "enabled": task.enabled,
        "status": task.status.as_str(),
        "attempts": task.attempts,
        // Retried by hand past its budget, a task had more attempts than it was given.
        "max_attempts": task.last_retried_attempt().saturating_add(1).max(task.attempts),
        "failure_type": field("failure_type"),
        "failure_evidence": field("failure_evidence"),
        "failure_cause": field("failure_cause"),
        "log_file": field("log_file"),
        "cost_usd": field("total_cost_usd"),
        "num_turns": field("num_turns"),
        "session_id": field("session_id"),
        "result_text": field("result_text"),
        "questions": field("questions"),
        "quota_resets_at": field("quota_resets_at"),
        "started_at": times.map(|t| clock_words::local_iso(t.started, zone)),
        "ended_at": times.map(|t| clock_words::local_iso(t.ended, zone)),
        "duration_sec": times.map(|t| t.took.as_secs_f64()),
    });
    // What the last attempt changed (`core::facts::changes`), where herd recorded it.
    if let (Some(changes), Some(fields)) =
        (result.and_then(|r| r.get("changes")), row.as_object_mut())
    {
        fields.insert("changes".into(), changes.clone());
    }
    row
}

/// What the last column says of a task that did not fail: the agent's questions, its final
/// text, or its log.
fn outcome_text(r: &Value) -> String {
    // Outside a repository there is nothing to say of changes on every row.
    let in_repository = r["changes"]["repository"].as_bool() == Some(true);
    match r["changes"]["summary"].as_str().filter(|_| in_repository) {
        Some(changes) => format!("{changes} · {}", outcome_words(r)),
        None => outcome_words(r),
    }
}

/// The questions, the final text or the log.
fn outcome_words(r: &Value) -> String {
    if let Some(questions) = r["questions"].as_array().filter(|q| !q.is_empty()) {
        let list: Vec<String> = questions.iter().map(text).collect();
        return clip(&format!("? {}", list.join(" | ")), 90);
    }
    match (&r["result_text"], &r["log_file"]) {
        (Value::String(t), Value::String(log)) if !t.trim().is_empty() => {
            format!("{log}: “{}”", clip(t.trim(), 60))
        }
        (_, log) => text(log),
    }
}

fn text(v: &Value) -> String {
    match v {
        Value::Null => "-".to_string(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn clip(s: &str, max: usize) -> String {
    let s = s.replace(['\n', '\r'], " ");
    if s.chars().count() <= max {
        s
    } else {
        format!("{}…", s.chars().take(max - 1).collect::<String>())
    }
}

/// The narrowest the last column (the log and the evidence) is made before the task column
/// gives up room too.
const LAST_COLUMN_MIN: usize = 24;
/// The narrowest the task column is cut to (in the middle, so ids stay apart).
const TASK_COLUMN_MIN: usize = 12;

/// A task's status as the tables and the dashboard say it: a disabled task that would
/// otherwise run is "skipped"; what a disabled task already reached stays as it is.
fn status_word(task: &TaskSpec) -> String {
    match (task.enabled, task.status) {
        (false, TaskStatus::Pending | TaskStatus::Retryable) => "skipped".to_string(),
        (_, status) => status.as_str().to_string(),
    }
}

/// One row's cells; the last in two forms: in full (`log: why`) and short (`why`), for a
/// narrow terminal.
fn cells_of(r: &Value, task: &TaskSpec, local: &LocalNow) -> (Vec<String>, String) {
    let status = match (task.enabled, status_word(task)) {
        (false, word) => format!("{word} (disabled)"),
        (true, word) => word,
    };
    let why = deciding_event::why_of(task.result.as_ref(), local);
    let (last, short) = match (why, &r["log_file"]) {
        (Some(why), Value::String(log)) => (format!("{log}: {}", clip(&why, 70)), why),
        (Some(why), _) => (clip(&why, 90), why),
        (None, _) => {
            let outcome = outcome_text(r);
            (outcome.clone(), outcome)
        }
    };
    let cost = r["cost_usd"]
        .as_f64()
        .map(|c| format!("${c:.4}"))
        .unwrap_or_else(|| "-".to_string());
    let times = attempt_times(task);
    let clock = |at: Option<jiff::Timestamp>| {
        at.map_or_else(
            || "-".to_string(),
            |at| clock_words::clock_time(at, &local.zone, local.now),
        )
    };
    let cells = vec![
        text(&r["task_id"]),
        text(&r["agent"]),
        status,
        format!("{}/{}", r["attempts"], r["max_attempts"]),
        text(&r["failure_type"]),
        cost,
        clock(times.map(|t| t.started)),
        clock(times.map(|t| t.ended)),
        times.map_or_else(|| "-".to_string(), |t| clock_words::span(t.took)),
        last,
    ];
    (cells, short)
}

/// The columns of the last attempt's start, end and length (in `table_for`).
const TIME_COLUMNS: std::ops::RangeInclusive<usize> = 6..=8;

/// A plain text table of `indices` from `file`, then the counts by status. Times are clock
/// times in `local`'s zone (`01:04`, `Sat 23:10`), shown when some task has ended an attempt. With `width` (a
/// terminal's), every row fits on one line: shorter words (`skipped`, `process`, `TRIES`), the
/// last column without the log path (it is `runs/<task>/` anyway) and cut; when the rest leaves
/// the last column too little, no agent column, then the task column cut in the middle.
pub fn table_for(
    file: &TaskFile,
    tasks_path: &std::path::Path,
    indices: &[usize],
    width: Option<usize>,
    local: &LocalNow,
) -> String {
    let rows: Vec<Value> = indices
        .iter()
        .map(|&i| row_in(&file.tasks()[i], &local.zone))
        .collect();
    let with_cost = rows.iter().any(|r| r["cost_usd"].is_number());
    let with_times = rows.iter().any(|r| r["ended_at"].is_string());
    let headers = [
        "TASK",
        "AGENT",
        "STATUS",
        "ATTEMPTS",
        "FAILURE",
        "COST",
        "STARTED",
        "ENDED",
        "TOOK",
        "LAST LOG / EVIDENCE",
    ];
    // The cost column only when some agent reported a cost, the times when some task ended.
    let keep = |i: usize| (with_cost || i != 5) && (with_times || !TIME_COLUMNS.contains(&i));
    let mut headers: Vec<String> = headers
        .iter()
        .enumerate()
        .filter(|(i, _)| keep(*i))
        .map(|(_, h)| h.to_string())
        .collect();
    let mut shorts = Vec::new();
    let mut cells: Vec<Vec<String>> = rows
        .iter()
        .zip(indices)
        .map(|(r, &i)| {
            let (row, short) = cells_of(r, &file.tasks()[i], local);
            shorts.push(short);
            row.into_iter()
                .enumerate()
                .filter(|(i, _)| keep(*i))
                .map(|(_, c)| c)
                .collect()
        })
        .collect();
    if let Some(width) = width {
        fit_to_width(&mut headers, &mut cells, &shorts, width);
    }
    let widths = column_widths(&headers, &cells);
    let mut out = String::new();
    let line = |out: &mut String, cols: &[String]| {
        let mut parts = Vec::new();
        for (i, c) in cols.iter().enumerate() {
            if i + 1 == cols.len() {
                parts.push(c.clone());
            } else {
                parts.push(format!("{c:<w$}", w = widths[i]));
            }
        }
        let _ = writeln!(out, "{}", parts.join("  ").trim_end());
    };
    line(&mut out, &headers);
    for row in &cells {
        line(&mut out, row);
    }
    out.push_str(&counts_line(file, indices, &rows, with_cost));
    let asking: Vec<&str> = indices
        .iter()
        .map(|&i| &file.tasks()[i])
        .filter(|t| t.status == TaskStatus::NeedsInput)
        .map(|t| t.task_id.as_str())
        .collect();
    if let Some(first) = asking.first() {
        let _ = writeln!(
            out,
            "{} need{} input: answer with `herd message --tasks {} {first} \"...\"`, then run again",
            asking.join(", "),
            if asking.len() == 1 { "s" } else { "" },
            crate::core::guard::shell_words::quote(&tasks_path.display().to_string())
        );
    }
    out
}

fn column_widths(headers: &[String], cells: &[Vec<String>]) -> Vec<usize> {
    let mut widths: Vec<usize> = headers.iter().map(|h| h.chars().count()).collect();
    for row in cells {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    widths
}

/// Makes every row of the table fit in `width` columns (see `table_for`).
fn fit_to_width(
    headers: &mut Vec<String>,
    cells: &mut [Vec<String>],
    shorts: &[String],
    width: usize,
) {
    let fixed = |widths: &[usize]| {
        let last = widths.len() - 1;
        widths[..last].iter().sum::<usize>() + 2 * last
    };
    let widths = column_widths(headers, cells);
    if fixed(&widths) + widths[widths.len() - 1] <= width {
        return;
    }
    let last = headers.len() - 1;
    // Short words first: `skipped` says disabled already, `process` is `failed_process`,
    // `blocked` is `failed_permission_blocked` (the dashboard's words).
    headers[last] = "EVIDENCE / OUTCOME".to_string();
    headers[3] = "TRIES".to_string();
    for (row, short) in cells.iter_mut().zip(shorts) {
        row[last] = short.replace(['\n', '\r'], " ");
        row[2] = row[2].replace(" (disabled)", "");
        row[4] = row[4]
            .trim_start_matches("failed_")
            .replace("permission_blocked", "blocked");
    }
    // Too little room left: the start goes first (the end and the length say most of it),
    // then the agent column (the task's id says which task it is), then the task column is
    // cut in the middle.
    if width.saturating_sub(fixed(&column_widths(headers, cells))) < LAST_COLUMN_MIN
        && let Some(started) = headers.iter().position(|h| h == "STARTED")
    {
        headers.remove(started);
        for row in cells.iter_mut() {
            row.remove(started);
        }
    }
    if width.saturating_sub(fixed(&column_widths(headers, cells))) < LAST_COLUMN_MIN {
        headers.remove(1);
        for row in cells.iter_mut() {
            row.remove(1);
        }
    }
    let widths = column_widths(headers, cells);
    let room = width.saturating_sub(fixed(&widths));
    if room < LAST_COLUMN_MIN {
        let task = widths[0]
            .saturating_sub(LAST_COLUMN_MIN - room)
            .max(TASK_COLUMN_MIN.min(widths[0]));
        for row in cells.iter_mut() {
            row[0] = clip_middle(&row[0], task);
        }
    }
    let last = headers.len() - 1;
    let room = width
        .saturating_sub(fixed(&column_widths(headers, cells)))
        .max(1);
    for row in cells.iter_mut() {
        row[last] = clip(&row[last], room);
    }
    headers[last] = clip(&headers[last], room);
}

/// `text` in at most `max` chars, cut in the middle: task ids differ at their end.
fn clip_middle(text: &str, max: usize) -> String {
    let count = text.chars().count();
    if count <= max || max < 5 {
        return clip(text, max.max(1));
    }
    let tail = (max - 1) / 2;
    let head = max - 1 - tail;
    let chars: Vec<char> = text.chars().collect();
    let mut out: String = chars[..head].iter().collect();
    out.push('…');
    out.extend(&chars[count - tail..]);
    out
}

/// `22 tasks: 3 completed, …, 1 skipped` counted as the rows say their status.
fn counts_line(file: &TaskFile, indices: &[usize], rows: &[Value], with_cost: bool) -> String {
    let mut counts: Vec<(String, usize)> = Vec::new();
    let order = TaskStatus::ALL
        .iter()
        .map(|s| s.as_str().to_string())
        .chain(std::iter::once("skipped".to_string()));
    let words: Vec<String> = indices
        .iter()
        .map(|&i| status_word(&file.tasks()[i]))
        .collect();
    for word in order {
        let n = words.iter().filter(|w| **w == word).count();
        if n > 0 {
            counts.push((word, n));
        }
    }
    let counts: Vec<String> = counts.iter().map(|(s, n)| format!("{n} {s}")).collect();
    let noun = if indices.len() == 1 { "task" } else { "tasks" };
    let spent: f64 = rows.iter().filter_map(|r| r["cost_usd"].as_f64()).sum();
    let spent = if with_cost {
        format!("; ${spent:.4} spent")
    } else {
        String::new()
    };
    format!("\n{} {noun}: {}{spent}\n", indices.len(), counts.join(", "))
}

/// Every task of `file` as the "since you left" digest reads it (`core::digest`).
pub fn digest_facts(file: &TaskFile, local: &LocalNow) -> Vec<digest::TaskFact> {
    file.tasks()
        .iter()
        .map(|task| digest::TaskFact {
            task_id: task.task_id.clone(),
            status: task.status,
            enabled: task.enabled,
            ended_at: attempt_times(task).map(|t| t.ended),
            why: deciding_event::why_of(task.result.as_ref(), local),
            retry_at: task.retry_at,
            questions: task
                .result
                .as_ref()
                .and_then(|r| r.get("questions"))
                .and_then(Value::as_array)
                .map(|list| list.iter().map(text).collect())
                .unwrap_or_default(),
            // Only a repository's: "not a repository" is no news of the morning.
            changes: task
                .result
                .as_ref()
                .and_then(|r| r.get("changes"))
                .filter(|c| c["repository"] == true)
                .and_then(|c| c["summary"].as_str())
                .map(str::to_string),
            took: attempt_times(task).map(|t| t.took),
        })
        .collect()
}

/// The prompts a running herd's control socket says wait for the operator (none when no herd
/// answers: a digest is made without them).
pub fn waiting_prompts(answer: &Value) -> Vec<digest::PromptFact> {
    answer["prompts"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|p| {
            Some(digest::PromptFact {
                task_id: p["task_id"].as_str()?.to_string(),
                prompt_id: p["prompt_id"].as_str()?.to_string(),
                asks: p["request"]
                    .as_str()
                    .or_else(|| p["prompt"].as_str())
                    .unwrap_or("a prompt")
                    .to_string(),
            })
        })
        .collect()
}

/// The width of the terminal on stdout, for `table_for`; `None` when stdout is not a
/// terminal (a script reads whole lines).
pub fn stdout_width() -> Option<usize> {
    use std::io::IsTerminal;
    if !std::io::stdout().is_terminal() {
        return None;
    }
    crossterm::terminal::size()
        .ok()
        .map(|(cols, _)| usize::from(cols))
}

/// The summary after a run, over the tasks it was asked to run.
/// The summary after a run: the tasks it was asked to run (every task of the file, or those of
/// `--only`), disabled ones included as `skipped`, so it counts what `herd status` counts.
pub fn table(batch: &dyn BatchView, width: Option<usize>) -> String {
    table_for(
        batch.file(),
        batch.tasks_path(),
        &batch.reported_tasks(),
        width,
        &crate::run::clock::local_now(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn test_now() -> LocalNow {
        LocalNow {
            now: "2026-11-29T09:00:00Z".parse().unwrap(),
            zone: jiff::tz::TimeZone::get("Europe/Berlin").unwrap(),
        }
    }

    #[test]
    fn a_row_speaks_of_changes_only_in_a_repository() {
        let log = "runs/a/attempt_1.log";
        let outside = json!({"log_file": log,
            "changes": {"repository": false, "summary": "not a repository"}});
        assert_eq!(outcome_text(&outside), log);
        let inside = json!({"log_file": log,
            "changes": {"repository": true, "summary": "2 files +3 −2"}});
        assert_eq!(outcome_text(&inside), format!("2 files +3 −2 · {log}"));
    }

    #[test]
    fn a_table_lists_every_task_and_the_counts() {
        let file = TaskFile::parse(r#"{"tasks": [
            {"task_id": "a", "agent": "sim", "prompt_template": "x", "status": "completed", "attempts": 1,
             "result": {"failure_type": null, "log_file": "runs/a/attempt_1.log"}},
            {"task_id": "bb", "agent": "sim", "prompt_template": "x", "status": "failed", "attempts": 2,
             "result": {"failure_type": "failed_auth", "failure_evidence": "Invalid API key", "log_file": "runs/bb/attempt_2.log"}}
        ]}"#).unwrap();
        let t = table_for(
            &file,
            std::path::Path::new("tasks.json"),
            &[0, 1],
            None,
            &test_now(),
        );
        assert!(
            t.contains("a     sim    completed  1/2       -            runs/a/attempt_1.log"),
            "{t}"
        );
        let bb = t.lines().nth(2).unwrap();
        assert!(
            bb.starts_with("bb    sim    failed     2/2       failed_auth"),
            "{t}"
        );
        assert!(
            bb.ends_with("runs/bb/attempt_2.log: Invalid API key"),
            "{t}"
        );
        assert!(t.ends_with("2 tasks: 1 completed, 1 failed\n"), "{t}");
        assert!(!t.contains("COST"), "{t}");
    }

    #[test]
    fn costs_texts_and_questions_show_when_agents_report_them() {
        let file = TaskFile::parse(r#"{"tasks": [
            {"task_id": "a", "agent": "claude-json", "prompt_template": "x", "status": "completed", "attempts": 1,
             "result": {"log_file": "runs/a/attempt_1.log", "result_text": "All done.\nBye", "total_cost_usd": 0.0123}},
            {"task_id": "q", "agent": "sim", "prompt_template": "x", "status": "needs_input", "attempts": 1,
             "result": {"log_file": "runs/q/attempt_1.log", "questions": ["Which DB?", "Drop it?"]}}
        ]}"#).unwrap();
        let t = table_for(
            &file,
            std::path::Path::new("tasks.json"),
            &[0, 1],
            None,
            &test_now(),
        );
        let lines: Vec<&str> = t.lines().collect();
        assert!(lines[0].contains("COST"), "{t}");
        assert!(
            lines[1].ends_with("$0.0123  runs/a/attempt_1.log: “All done. Bye”"),
            "{t}"
        );
        assert!(lines[2].ends_with("-        ? Which DB? | Drop it?"), "{t}");
        assert!(
            t.contains("2 tasks: 1 completed, 1 needs_input; $0.0123 spent\n"),
            "{t}"
        );
        assert!(
            t.ends_with("q needs input: answer with `herd message --tasks tasks.json q \"...\"`, then run again\n"),
            "{t}"
        );
    }

    #[test]
    fn a_narrow_terminal_gets_one_line_per_row_with_the_cause_kept() {
        let file = TaskFile::parse(r#"{"tasks": [
            {"task_id": "structured-auth-018", "agent": "sim-json", "prompt_template": "x", "status": "failed", "attempts": 2,
             "result": {"failure_type": "failed_process", "failure_evidence": "exit code 101",
                        "failure_cause": "error: could not find `Cargo.toml` in `/tmp/work/checkout` or any parent directory",
                        "log_file": "runs/structured-auth-018/attempt_2.log"}},
            {"task_id": "structured-denied-019", "agent": "sim-json", "prompt_template": "x", "status": "completed", "attempts": 1,
             "result": {"log_file": "runs/structured-denied-019/attempt_1.log"}},
            {"task_id": "later-016", "agent": "sim", "prompt_template": "x", "enabled": false}
        ]}"#).unwrap();
        let wide = table_for(
            &file,
            std::path::Path::new("tasks.json"),
            &[0, 1, 2],
            None,
            &test_now(),
        );
        assert!(
            wide.contains(
                "runs/structured-auth-018/attempt_2.log: error: could not find `Cargo.toml`"
            ),
            "{wide}"
        );
        let narrow = table_for(
            &file,
            std::path::Path::new("tasks.json"),
            &[0, 1, 2],
            Some(80),
            &test_now(),
        );
        let lines: Vec<&str> = narrow.lines().collect();
        for line in &lines {
            assert!(line.chars().count() <= 80, "{line:?} in:\n{narrow}");
        }
        assert_eq!(lines.len(), 1 + 3 + 2, "one line per row:\n{narrow}");
        assert!(lines[1].contains("error: could not"), "{narrow}");
        assert!(
            lines[1].contains("-018") && lines[2].contains("-019"),
            "ids stay apart: {narrow}"
        );
        assert!(lines[3].contains("skipped"), "{narrow}");
        assert!(wide.contains("skipped (disabled)"), "{wide}");
        assert!(
            narrow.ends_with("3 tasks: 1 completed, 1 failed, 1 skipped\n"),
            "a disabled task is counted as the rows say it: {narrow}"
        );
    }

    #[test]
    fn ids_cut_in_the_middle_keep_their_end() {
        assert_eq!(clip_middle("structured-auth-018", 12), "struct…h-018");
        assert_eq!(clip_middle("structured-denied-019", 12), "struct…d-019");
        assert_eq!(clip_middle("short", 12), "short");
    }

    #[test]
    fn at_80_columns_the_evidence_keeps_room_even_with_costs() {
        let file = TaskFile::parse(r#"{"tasks": [
            {"task_id": "structured-denied-019", "agent": "sim-json", "prompt_template": "x", "status": "failed", "attempts": 1,
             "result": {"failure_type": "failed_permission_blocked", "total_cost_usd": 0.0004,
                        "failure_evidence": "permission denied: Bash(rm -rf build) refused by the deny rule",
                        "log_file": "runs/structured-denied-019/attempt_1.log"}},
            {"task_id": "asks-questions-021", "agent": "sim", "prompt_template": "x", "status": "needs_input", "attempts": 1,
             "result": {"log_file": "runs/asks-questions-021/attempt_1.log"}}
        ]}"#).unwrap();
        let t = table_for(
            &file,
            std::path::Path::new("tasks.json"),
            &[0, 1],
            Some(80),
            &test_now(),
        );
        let row = t.lines().nth(1).unwrap();
        assert!(row.chars().count() <= 80, "{t}");
        assert!(row.contains("blocked"), "{t}");
        assert!(
            row.contains("permission denied: Bash"),
            "the evidence keeps at least 24 columns:\n{t}"
        );
    }

    #[test]
    fn times_are_local_clock_times_and_a_narrow_terminal_drops_the_start_first() {
        let file = TaskFile::parse(r#"{"tasks": [
            {"task_id": "ask", "agent": "sim", "prompt_template": "x", "status": "failed", "attempts": 1,
             "result": {"failure_type": "failed_timeout", "failure_evidence": "timeout after 1800 s",
                        "failure_cause": "waited 29 min for an answer to Bash(touch x); nobody answered",
                        "completed_at": "2026-11-29T03:30:00Z", "duration_sec": 1800.0,
                        "log_file": "runs/ask/attempt_1.log"}},
            {"task_id": "limit", "agent": "sim", "prompt_template": "x", "status": "failed", "attempts": 1,
             "result": {"failure_type": "failed_quota", "failure_evidence": "usage limit · resets 3pm (Europe/Berlin)",
                        "quota_resets_at": "2026-11-29T15:00:00+01:00[Europe/Berlin]",
                        "completed_at": "2026-11-28T23:00:01Z", "duration_sec": 2.5,
                        "log_file": "runs/limit/attempt_1.log"}},
            {"task_id": "later", "agent": "sim", "prompt_template": "x"}
        ]}"#).unwrap();
        // 09:00 UTC is 10:00 in Berlin, the zone of `test_now`.
        let wide = table_for(
            &file,
            std::path::Path::new("tasks.json"),
            &[0, 1, 2],
            None,
            &test_now(),
        );
        let lines: Vec<&str> = wide.lines().collect();
        let cells = |line: &str| -> Vec<String> {
            line.split("  ")
                .map(str::trim)
                .filter(|c| !c.is_empty())
                .map(str::to_string)
                .collect()
        };
        assert_eq!(
            cells(lines[0])[5..8],
            ["STARTED", "ENDED", "TOOK"],
            "{wide}"
        );
        assert_eq!(
            cells(lines[1])[5..8],
            ["04:00", "04:30", "30 min"],
            "{wide}"
        );
        // Across midnight: the day is named where it is not today's.
        assert_eq!(
            cells(lines[2])[5..8],
            ["Sat 23:59", "00:00", "2 s"],
            "{wide}"
        );
        assert_eq!(cells(lines[3])[5..8], ["-", "-", "-"], "{wide}");
        assert!(
            lines[1].contains(": waited 29 min for an answer to Bash(touch x); nobody answered"),
            "{wide}"
        );
        assert!(
            lines[2].ends_with(": quota: resets 15:00 (in 5 h)"),
            "in the operator's own zone the reset names none: {wide}"
        );
        let json = row_in(&file.tasks()[0], &test_now().zone);
        assert_eq!(json["started_at"], "2026-11-29T04:00:00+01:00");
        assert_eq!(json["ended_at"], "2026-11-29T04:30:00+01:00");
        assert_eq!(json["duration_sec"], 1800.0);
        assert!(row_in(&file.tasks()[2], &test_now().zone)["started_at"].is_null());

        let narrow = table_for(
            &file,
            std::path::Path::new("tasks.json"),
            &[0, 1, 2],
            Some(80),
            &test_now(),
        );
        let lines: Vec<&str> = narrow.lines().collect();
        for line in &lines {
            assert!(line.chars().count() <= 80, "{line:?} in:\n{narrow}");
        }
        assert!(!lines[0].contains("STARTED"), "{narrow}");
        assert!(
            lines[0].contains("ENDED") && lines[0].contains("TOOK"),
            "{narrow}"
        );
        assert!(
            lines[1].contains("04:30") && lines[1].contains("waited 29 min"),
            "{narrow}"
        );
    }
}
