//! `herd sim` as a process: built-in scenarios run with piped stdin and stdout, the way unit
//! tests and scripts use it (the PTY runs live in the end-to-end tests of `herd run`). The
//! structured scenarios (stream-json lines, the signal file, resumed sessions) are checked
//! field by field, and their events against the shapes of the real captures.

// Test code: a failed `expect` is the test failing, with its message.
#![allow(clippy::expect_used, clippy::unwrap_used)]

use std::io::Write;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

fn herd() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_herd"));
    command
        .env_remove("HERD_TASK_ID")
        .env_remove("HERD_ATTEMPT")
        .env_remove("HERD_COMPLETION_MARKER")
        .env_remove("HERD_SIGNAL_FILE");
    command
}

/// Runs `herd sim ARGS` with `stdin` piped in; fails the test if it takes over 10 s.
fn sim(args: &[&str], envs: &[(&str, &str)], stdin: &[u8]) -> Output {
    let mut child = herd()
        .arg("sim")
        .args(args)
        .envs(envs.iter().copied())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("herd starts");
    child
        .stdin
        .take()
        .expect("stdin is piped")
        .write_all(stdin)
        .expect("stdin takes the keys");
    let started = Instant::now();
    while child.try_wait().expect("child status").is_none() {
        if started.elapsed() > Duration::from_secs(10) {
            let _ = child.kill();
            panic!("herd sim {args:?} did not finish within 10 s");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().expect("output")
}

/// Stdout's lines without colours.
fn lines(output: &Output) -> Vec<String> {
    let escapes = regex::Regex::new(r"\x1b\[[0-9;?]*[A-Za-z]").expect("valid regex");
    let text = String::from_utf8_lossy(&output.stdout);
    escapes
        .replace_all(&text, "")
        .split("\r\n")
        .map(str::to_string)
        .collect()
}

#[test]
fn plain_success_prints_the_task_marker_on_its_own_line() {
    let output = sim(&["plain_success"], &[("HERD_TASK_ID", "t9")], b"");
    assert_eq!(output.status.code(), Some(0));
    assert!(
        lines(&output).contains(&"TASK_COMPLETE:t9".to_string()),
        "{output:?}"
    );
}

#[test]
fn marker_flag_and_environment_take_precedence() {
    let from_env = sim(
        &["plain_success"],
        &[
            ("HERD_TASK_ID", "t9"),
            ("HERD_COMPLETION_MARKER", "DONE:env"),
        ],
        b"",
    );
    assert!(lines(&from_env).contains(&"DONE:env".to_string()));
    let from_flag = sim(
        &["plain_success", "--marker", "DONE:flag"],
        &[("HERD_COMPLETION_MARKER", "DONE:env")],
        b"",
    );
    assert!(lines(&from_flag).contains(&"DONE:flag".to_string()));
}

#[test]
fn flaky_depends_on_the_attempt() {
    let first = sim(&["flaky"], &[("HERD_ATTEMPT", "1")], b"");
    assert_eq!(first.status.code(), Some(1));
    assert!(lines(&first).contains(&"Error: connection reset by peer".to_string()));
    let second = sim(&["flaky", "--marker", "M"], &[("HERD_ATTEMPT", "2")], b"");
    assert_eq!(second.status.code(), Some(0));
    assert!(lines(&second).contains(&"M".to_string()));
}

#[test]
fn press_keys_reads_its_keys_from_a_pipe() {
    let output = sim(&["press_keys", "--marker", "M"], &[], b"x1p");
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert!(lines(&output).contains(&"M".to_string()));
}

#[test]
fn queries_use_the_piped_answers() {
    let output = sim(&["queries", "--marker", "M"], &[], b"\x1b[5;9R\x1b[?62;c");
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert!(
        lines(&output)
            .iter()
            .any(|line| line.ends_with("cursor at row 5 col 9"))
    );
}

#[test]
fn bad_scenarios_exit_2_naming_the_file_and_line() {
    let folder = tempfile::tempdir().expect("temp dir");
    let path = folder.path().join("broken.toml");
    std::fs::write(
        &path,
        "description = \"x\"\n[[step]]\nsleep = 1\n[[step]]\nslep = 1\n",
    )
    .expect("write");
    let path = path.to_string_lossy().into_owned();
    let output = sim(&[path.as_str()], &[], b"");
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains(&format!("{path}:4: step 2: unknown action `slep`")),
        "{stderr}"
    );
    let unknown = sim(&["no_such_scenario"], &[], b"");
    assert_eq!(unknown.status.code(), Some(2));
}

#[test]
fn list_names_every_required_scenario() {
    let output = herd().args(["sim", "--list"]).output().expect("runs");
    assert_eq!(output.status.code(), Some(0));
    let listed = String::from_utf8_lossy(&output.stdout);
    for name in [
        "success",
        "plain_success",
        "permission",
        "permission_dont_ask",
        "codex_approval",
        "press_keys",
        "prompt_loop",
        "auth",
        "auth_exit",
        "quota",
        "incomplete",
        "crash",
        "flaky",
        "hang",
        "hang_ignore_term",
        "flood",
        "echo_only",
        "queries",
        "retrying",
        "transient",
        "demo_slow",
        "json_success",
        "json_auth",
        "json_quota",
        "json_denied",
        "json_cut_short",
        "json_resume",
        "signal_done",
        "signal_error",
        "signal_questions",
        "signal_json",
    ] {
        assert!(
            listed
                .lines()
                .any(|line| line.split_whitespace().next() == Some(name)),
            "{name} missing from {listed}"
        );
    }
}

/// Processes whose process group is `group`, from /proc.
#[cfg(target_os = "linux")]
fn processes_in_group(group: i32) -> Vec<i32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| {
            std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .ok()
                .and_then(|stat| {
                    // Fields after the command name in parentheses: state ppid pgrp ...
                    let after_name = stat.rsplit_once(')')?.1.to_string();
                    let fields: Vec<&str> = after_name.split_whitespace().collect();
                    let state = fields.first().copied()?;
                    Some(state != "Z" && fields.get(2)?.parse::<i32>().ok()? == group)
                })
                .unwrap_or(false)
        })
        .collect()
}

/// The signal mask `field` (`SigCgt:`, `SigPnd:`, ...) of `pid`'s `/proc/PID/status` (0 once
/// it is gone).
#[cfg(target_os = "linux")]
fn signal_mask(pid: i32, field: &str) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|status| {
            let mask = status.lines().find_map(|l| l.strip_prefix(field))?;
            u64::from_str_radix(mask.trim(), 16).ok()
        })
        .unwrap_or(0)
}

/// Polls until `done` holds; false after 10 s (the caller ends the group, then fails).
#[cfg(target_os = "linux")]
fn wait_for_group(done: impl Fn() -> bool) -> bool {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !done() {
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    true
}

#[cfg(target_os = "linux")]
#[test]
fn hang_ignore_term_survives_term_with_its_children_in_the_same_group() {
    use std::os::unix::process::CommandExt;

    use rustix::process::{Pid, Signal, kill_process_group};

    let mut child = herd()
        .args(["sim", "hang_ignore_term"])
        .process_group(0)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .spawn()
        .expect("herd starts");
    let group_id = i32::try_from(child.id()).expect("pid fits");
    let group = Pid::from_raw(group_id).expect("non-zero pid");
    let started = Instant::now();
    while processes_in_group(group_id).len() < 3 && started.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(20));
    }
    // Each of them has its TERM handler in place.
    let term = 1u64 << (Signal::TERM.as_raw() - 1);
    let kill = 1u64 << (Signal::KILL.as_raw() - 1);
    let all_in_group = |check: &dyn Fn(i32) -> bool| {
        let pids = processes_in_group(group_id);
        pids.len() == 3 && pids.iter().all(|&pid| check(pid))
    };
    let handlers = wait_for_group(|| all_in_group(&|pid| signal_mask(pid, "SigCgt:") & term != 0));
    let before = processes_in_group(group_id);
    let _ = kill_process_group(group, Signal::TERM);
    // Each has taken its TERM off the queue (a process it ended would have KILL queued).
    let taken = wait_for_group(|| {
        processes_in_group(group_id).iter().all(|&pid| {
            let pending = signal_mask(pid, "SigPnd:") | signal_mask(pid, "ShdPnd:");
            pending & (term | kill) == 0
        })
    });
    let after = processes_in_group(group_id);
    let _ = kill_process_group(group, Signal::KILL);
    let _ = child.wait();
    assert!(handlers, "the 3 processes to catch TERM: {before:?}");
    assert!(taken, "TERM to be taken off their queues");
    assert_eq!(before.len(), 3, "parent and 2 children: {before:?}");
    assert_eq!(after, before, "TERM was ignored by all of them");
}

/// Stdout split at `\n` (the last piece only when the output does not end with one), each line
/// parsed as JSON.
fn json_lines(output: &Output) -> Vec<Result<serde_json::Value, String>> {
    let text = String::from_utf8_lossy(&output.stdout);
    let mut lines: Vec<&str> = text.split('\n').collect();
    if lines.last() == Some(&"") {
        lines.pop();
    }
    lines
        .into_iter()
        .map(|line| serde_json::from_str(line).map_err(|error| format!("{error}: {line:?}")))
        .collect()
}

/// Every stdout line as a JSON object; fails the test on any other line.
fn events_of(output: &Output) -> Vec<serde_json::Value> {
    json_lines(output)
        .into_iter()
        .map(|line| match line {
            Ok(event) if event.is_object() => event,
            Ok(other) => panic!("not an object: {other}\n{output:?}"),
            Err(error) => panic!("{error}\n{output:?}"),
        })
        .collect()
}

fn of_type<'a>(events: &'a [serde_json::Value], kind: &str) -> Vec<&'a serde_json::Value> {
    events
        .iter()
        .filter(|event| event["type"] == kind)
        .collect()
}

fn only_result(events: &[serde_json::Value]) -> &serde_json::Value {
    let results = of_type(events, "result");
    assert_eq!(results.len(), 1, "{events:#?}");
    assert_eq!(
        events.last(),
        Some(results[0]),
        "the result event comes last"
    );
    results[0]
}

const TASK: &[(&str, &str)] = &[("HERD_TASK_ID", "t9"), ("HERD_ATTEMPT", "2")];

#[test]
fn json_success_streams_events_and_a_successful_result() {
    let output = sim(&["json_success"], TASK, b"");
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let events = events_of(&output);
    assert_eq!(events[0]["type"], "system");
    assert_eq!(events[0]["subtype"], "init");
    for event in &events {
        assert_eq!(event["session_id"], "sim-t9-2", "{event}");
    }
    let texts: Vec<&str> = of_type(&events, "assistant")
        .iter()
        .filter_map(|event| event["message"]["content"][0]["text"].as_str())
        .collect();
    assert!(texts.contains(&"TASK_COMPLETE:t9"), "{texts:?}");
    let tool_use = of_type(&events, "assistant")
        .into_iter()
        .find(|event| event["message"]["content"][0]["type"] == "tool_use")
        .expect("a tool call");
    assert_eq!(tool_use["message"]["content"][0]["name"], "Bash");
    let tool_result = of_type(&events, "user")[0];
    assert_eq!(
        tool_result["message"]["content"][0]["tool_use_id"],
        tool_use["message"]["content"][0]["id"]
    );
    let result = only_result(&events);
    assert_eq!(result["subtype"], "success");
    assert_eq!(result["is_error"], false);
    assert_eq!(result["result"], "Done.\nTASK_COMPLETE:t9");
    assert_eq!(result["total_cost_usd"], 0.0123);
    assert_eq!(result["num_turns"], 2);
    assert_eq!(result["usage"]["input_tokens"], 1200);
    assert_eq!(result["usage"]["output_tokens"], 340);
    assert_eq!(result["permission_denials"], serde_json::json!([]));
}

#[test]
fn json_auth_and_quota_fail_like_claudes_print_mode() {
    let auth = sim(&["json_auth"], &[], b"");
    assert_eq!(auth.status.code(), Some(1), "{auth:?}");
    let events = events_of(&auth);
    let record = of_type(&events, "assistant")[0];
    assert_eq!(record["error"], "authentication_failed");
    let result = only_result(&events);
    assert_eq!(result["is_error"], true);
    assert_eq!(result["result"], "Not logged in · Please run /login");
    assert_eq!(result["session_id"], "sim-session");

    let quota = sim(&["json_quota"], &[], b"");
    assert_eq!(quota.status.code(), Some(1), "{quota:?}");
    let events = events_of(&quota);
    assert_eq!(of_type(&events, "assistant")[0]["error"], "rate_limit");
    let result = only_result(&events);
    assert_eq!(result["is_error"], true);
    assert_eq!(result["api_error_status"], 429);
    assert_eq!(
        result["result"],
        "API Error: Request rejected (429) · Rate limited"
    );
}

#[test]
fn json_denied_reports_the_blocked_call_in_a_successful_result() {
    let output = sim(&["json_denied"], &[], b"");
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let events = events_of(&output);
    let call = &of_type(&events, "assistant")[0]["message"]["content"][0];
    assert_eq!(call["type"], "tool_use");
    let answer = &of_type(&events, "user")[0]["message"]["content"][0];
    assert_eq!(answer["is_error"], true);
    assert!(
        answer["content"]
            .as_str()
            .is_some_and(|text| text.contains("was blocked")),
        "{answer}"
    );
    let result = only_result(&events);
    assert_eq!(result["is_error"], false);
    let denials = result["permission_denials"].as_array().expect("denials");
    assert_eq!(denials.len(), 1);
    assert_eq!(denials[0]["tool_name"], "Bash");
    assert_eq!(denials[0]["tool_use_id"], call["id"]);
    assert_eq!(
        denials[0]["tool_input"]["command"],
        call["input"]["command"]
    );
}

#[test]
fn json_cut_short_ends_mid_line() {
    let output = sim(&["json_cut_short"], &[], b"");
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert!(!output.stdout.ends_with(b"\n"));
    let mut lines = json_lines(&output);
    let last = lines.pop().expect("a last line");
    assert!(last.is_err(), "the last line is cut: {last:?}");
    assert!(
        String::from_utf8_lossy(&output.stdout)
            .ends_with("\n{\"type\":\"result\",\"subtype\":\"succ")
    );
    assert!(lines.len() >= 2);
    for line in lines {
        assert!(line.is_ok_and(|event| event["type"] != "result"));
    }
}

#[test]
fn resume_changes_the_steps_and_the_session_and_keeps_the_prompt_exact() {
    let fresh = sim(&["json_resume", "--prompt", "Do it."], TASK, b"");
    assert_eq!(fresh.status.code(), Some(1), "{fresh:?}");
    let events = events_of(&fresh);
    assert_eq!(events[0]["session_id"], "sim-t9-2");
    assert_eq!(
        events.last().expect("events")["error"],
        serde_json::json!({"type": "overloaded_error", "message": "Overloaded"})
    );
    assert!(of_type(&events, "result").is_empty());

    let answer = "Use \"Postgres\" \\ not 'MySQL'\nline two\ttab — ünïcödé 日本 🚀 {marker}";
    let resumed = sim(
        &["json_resume", "--resume", "sess-42", "--prompt", answer],
        TASK,
        b"",
    );
    assert_eq!(resumed.status.code(), Some(0), "{resumed:?}");
    let events = events_of(&resumed);
    assert!(of_type(&events, "error").is_empty(), "{events:#?}");
    for event in &events {
        assert_eq!(event["session_id"], "sess-42", "{event}");
    }
    let said = of_type(&events, "assistant")[0]["message"]["content"][0]["text"].clone();
    assert_eq!(said, format!("Resumed session sess-42: {answer}"));
    assert_eq!(only_result(&events)["result"], "TASK_COMPLETE:t9");
}

#[test]
fn signal_scenarios_write_the_signal_file_per_status() {
    let folder = tempfile::tempdir().expect("temp dir");
    let path = folder.path().join("signal.json");
    let path_text = path.to_string_lossy().into_owned();
    let env = [
        ("HERD_TASK_ID", "t9"),
        ("HERD_SIGNAL_FILE", path_text.as_str()),
    ];
    let read = || -> serde_json::Value {
        let text = std::fs::read_to_string(&path).expect("the signal file exists");
        serde_json::from_str(&text).unwrap_or_else(|error| panic!("{error}: {text}"))
    };

    let done = sim(&["signal_done"], &env, b"/exit\r");
    assert_eq!(done.status.code(), Some(0), "{done:?}");
    assert_eq!(read()["status"], "done");
    assert_eq!(read()["session_id"], "sim-t9-1");
    assert!(
        read()["result"]
            .as_str()
            .is_some_and(|text| !text.is_empty())
    );
    assert!(
        lines(&done).iter().any(|line| line.contains("shortcuts")),
        "waits at the prompt"
    );

    let error = sim(&["signal_error"], &env, b"");
    assert_eq!(error.status.code(), Some(0), "{error:?}");
    assert_eq!(
        read(),
        serde_json::json!({"status": "error", "error": "cannot reproduce the bug", "session_id": "sim-t9-1"})
    );

    let asking = sim(&["signal_questions"], &env, b"/exit\r");
    assert_eq!(asking.status.code(), Some(0), "{asking:?}");
    assert_eq!(
        read(),
        serde_json::json!({
            "status": "questions",
            "questions": ["Which database should I use?", "May I drop the old table?"],
            "session_id": "sim-t9-1",
        })
    );

    let answer = "1. \"Postgres\"\n2. yes — drop it ✓ {prompt}";
    let answered = sim(
        &[
            "signal_questions",
            "--resume",
            "sim-t9-1",
            "--prompt",
            answer,
        ],
        &env,
        b"",
    );
    assert_eq!(answered.status.code(), Some(0), "{answered:?}");
    assert_eq!(
        read(),
        serde_json::json!({"status": "done", "result": format!("answered: {answer}"), "session_id": "sim-t9-1"})
    );
    assert!(
        lines(&answered)
            .iter()
            .any(|line| line.contains("Thanks: 1. \"Postgres\"")),
        "{answered:?}"
    );
    assert!(
        !lines(&answered)
            .iter()
            .any(|line| line.contains("Before I start")),
        "the first session's steps do not play"
    );

    let json = sim(&["signal_json"], &env, b"");
    assert_eq!(json.status.code(), Some(0), "{json:?}");
    let events = events_of(&json);
    assert_eq!(only_result(&events)["is_error"], false);
    assert_eq!(read()["status"], "done");
    let leftovers: Vec<_> = std::fs::read_dir(folder.path())
        .expect("list")
        .map(|entry| entry.expect("entry").file_name())
        .collect();
    assert_eq!(leftovers.len(), 1, "no temporary files left: {leftovers:?}");
}

#[test]
fn a_signal_without_herd_signal_file_is_shown_and_the_run_goes_on() {
    let output = sim(&["signal_error"], &[], b"");
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert!(
        lines(&output).contains(&"herd sim: HERD_SIGNAL_FILE is not set".to_string()),
        "{output:?}"
    );
}

#[test]
fn structured_scenarios_finish_quickly() {
    let folder = tempfile::tempdir().expect("temp dir");
    let path = folder
        .path()
        .join("signal.json")
        .to_string_lossy()
        .into_owned();
    for name in [
        "json_success",
        "json_auth",
        "json_quota",
        "json_denied",
        "json_cut_short",
        "json_resume",
        "signal_done",
        "signal_error",
        "signal_questions",
        "signal_json",
    ] {
        let started = Instant::now();
        sim(&[name], &[("HERD_SIGNAL_FILE", path.as_str())], b"/exit\r");
        let took = started.elapsed();
        assert!(took < Duration::from_secs(3), "{name} took {took:?}");
    }
}

#[test]
fn help_documents_resume() {
    let output = herd().args(["sim", "--help"]).output().expect("runs");
    assert_eq!(output.status.code(), Some(0));
    let help = String::from_utf8_lossy(&output.stdout);
    assert!(help.contains("--resume <SESSION_ID>"), "{help}");
    assert!(help.contains("resumed session"), "{help}");
    let empty = sim(&["json_resume", "--resume", ""], &[], b"");
    assert_eq!(empty.status.code(), Some(2), "{empty:?}");
}

/// The object keys of an event, as paths (`message.usage.input_tokens`), in order; arrays
/// through their first element. Below `opaque` keys only the key itself counts.
fn key_paths(value: &serde_json::Value, prefix: &str, opaque: &[&str], paths: &mut Vec<String>) {
    match value {
        serde_json::Value::Object(fields) => {
            for (key, child) in fields {
                let path = if prefix.is_empty() {
                    key.clone()
                } else {
                    format!("{prefix}.{key}")
                };
                paths.push(path.clone());
                if !opaque.contains(&key.as_str()) {
                    key_paths(child, &path, opaque, paths);
                }
            }
        }
        serde_json::Value::Array(items) => {
            if let Some(first) = items.first() {
                key_paths(first, &format!("{prefix}[]"), opaque, paths);
            }
        }
        _ => {}
    }
}

fn shape(event: &serde_json::Value) -> Vec<String> {
    let mut paths = Vec::new();
    key_paths(event, "", &["modelUsage", "tool_input"], &mut paths);
    paths
}

/// The JSON lines of a real capture in tests/fixtures/claude; None when it is missing.
fn captured_events(name: &str) -> Option<Vec<serde_json::Value>> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/claude")
        .join(name);
    let bytes = std::fs::read(&path).ok()?;
    Some(
        String::from_utf8_lossy(&bytes)
            .split('\n')
            .map(|line| line.trim_end_matches('\r'))
            .filter(|line| line.starts_with('{'))
            .map(|line| serde_json::from_str(line).expect("captured JSON"))
            .collect(),
    )
}

#[test]
fn events_have_the_shapes_of_the_real_captures() {
    let text = captured_events("p_text_streamjson.raw")
        .expect("the vendored capture tests/fixtures/claude/p_text_streamjson.raw");
    let captured = |name: &str| captured_events(name).expect("the capture exists");
    let played = |name: &str| events_of(&sim(&[name], &[], b""));
    let find = |events: &[serde_json::Value], kind: &str, content: &str| {
        events
            .iter()
            .find(|event| {
                event["type"] == kind
                    && (content.is_empty() || event["message"]["content"][0]["type"] == content)
            })
            .cloned()
            .unwrap_or_else(|| panic!("no {kind} {content} event in {events:#?}"))
    };
    let success = played("json_success");
    let denied = played("json_denied");
    let auth = played("json_auth");
    let quota = played("json_quota");
    let tool = captured("p_tool_streamjson.raw");
    let no_credentials = captured("b_print_streamjson_nocreds.raw");
    let rate_limited = captured("p_quota429_streamjson.raw");
    let pairs = [
        (
            "init",
            find(&text, "system", ""),
            find(&success, "system", ""),
        ),
        (
            "text",
            find(&text, "assistant", "text"),
            find(&success, "assistant", "text"),
        ),
        (
            "result",
            find(&text, "result", ""),
            find(&success, "result", ""),
        ),
        (
            "tool_use",
            find(&tool, "assistant", "tool_use"),
            find(&denied, "assistant", "tool_use"),
        ),
        (
            "tool_result",
            find(&tool, "user", ""),
            find(&denied, "user", ""),
        ),
        (
            "denied result",
            find(&tool, "result", ""),
            find(&denied, "result", ""),
        ),
        (
            "auth record",
            find(&no_credentials, "assistant", ""),
            find(&auth, "assistant", ""),
        ),
        (
            "auth result",
            find(&no_credentials, "result", ""),
            find(&auth, "result", ""),
        ),
        (
            "quota record",
            find(&rate_limited, "assistant", ""),
            find(&quota, "assistant", ""),
        ),
        (
            "quota result",
            find(&rate_limited, "result", ""),
            find(&quota, "result", ""),
        ),
    ];
    for (what, real, ours) in pairs {
        assert_eq!(
            shape(&ours),
            shape(&real),
            "{what}:\nours {ours}\nreal {real}"
        );
    }
}
