//! End to end: the real `herd run` binary in a pseudo-terminal, with its dashboard, on a
//! simulator task whose permission prompt has no automatic answer. The test reads the screen
//! through vt100 like a person would, answers the prompt with one key, sees the task complete,
//! quits, and checks the exit code and that the terminal was given back. A second test opens the
//! finished task's recorded attempts (`v`), replays one inside the dashboard (Enter), sees the
//! player's timeline and readout, and comes back with `q` to the dashboard as it was; the agent's
//! PTY started at the size of its pane. A third runs a simulator agent that asks two questions
//! through its signal file: the task needs input, the questions are on screen, `m` opens the
//! editor that answers them, and the answer resumes the agent's session to completion. A fourth
//! has a `notify` command hear each wait of a dialog that comes back after its answer, once, and
//! the batch's end. Another closes the terminal under a running batch: herd stops, ends the
//! agent and leaves the tasks file whole.

// Test code: a failed `expect` is the test failing, with its message.
#![allow(clippy::expect_used, clippy::unwrap_used)]

use std::path::Path;
use std::time::{Duration, Instant};

mod common;
use common::dashboard::{Dashboard, Launch};

const ROWS: u16 = 40;
const COLS: u16 = 120;

const TASKS: &str = r#"{
  "run_id": "e2e",
  "tasks": [
    {
      "task_id": "ask-first",
      "agent": "sim",
      "timeout_sec": 120,
      "inputs": { "scenario": "permission" },
      "prompt_template": "Delete the build folder. When complete, print exactly: TASK_COMPLETE:{task_id}"
    }
  ]
}
"#;

/// A simulator agent that asks two questions in its signal file, then waits at its prompt;
/// resumed with the answers, it reports `answered: <answers>` and exits.
const ASKING: &str = r#"{
  "run_id": "e2e",
  "tasks": [
    {
      "task_id": "ask-db",
      "agent": "sim",
      "timeout_sec": 120,
      "completion": "signal_file",
      "inputs": { "scenario": "signal_questions" },
      "prompt_template": "Migrate the users table to the new schema."
    }
  ]
}
"#;

/// Whether the status line's last row shows no passing message (drawn on a light blue
/// background, before the keys).
fn no_message(screen: &vt100::Screen) -> bool {
    let (rows, cols) = screen.size();
    let last = rows.get() - 1;
    (0..cols.get()).all(|col| {
        screen
            .cell(last, col)
            .is_none_or(|cell| cell.bgcolor() != vt100::Color::Idx(12))
    })
}

/// The screen row holding `needle`, if any.
fn row_of(screen: &vt100::Screen, needle: &str) -> Option<u16> {
    let (_, cols) = screen.size();
    screen
        .rows(0, cols.get())
        .position(|r| r.contains(needle))
        .map(|r| r as u16)
}

fn first_task_in_file(tasks: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(tasks).expect("tasks file");
    let doc: serde_json::Value = serde_json::from_str(&text).expect("json");
    doc["tasks"][0].clone()
}

fn status_in_file(tasks: &Path) -> String {
    first_task_in_file(tasks)["status"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

/// Waits until the file says `want` (an attempt's end is shown as soon as it is decided, and
/// written a moment later by the tasks file's writer).
fn wait_for_status(tasks: &Path, want: &str) {
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let seen = status_in_file(tasks);
        if seen == want {
            return;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the tasks file still says {seen:?}, not {want:?}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The dashboard on `TASKS` (its folder, its tasks file, the dashboard), once the demo task's
/// dialog waits with its banner.
fn on_the_dialog() -> (tempfile::TempDir, std::path::PathBuf, Dashboard) {
    let dir = tempfile::tempdir().expect("temp dir");
    let tasks = dir.path().join("tasks.json");
    std::fs::write(&tasks, TASKS).expect("write tasks");
    let mut ui = Dashboard::start(&tasks, Launch::size(ROWS, COLS));
    ui.wait_until("the prompt's banner", Duration::from_secs(30), |s| {
        s.contents().contains("⚠ ask-first: [1/Enter] Yes")
    });
    (dir, tasks, ui)
}

#[test]
fn a_prompt_is_answered_with_one_key_and_the_task_completes() {
    let (dir, tasks, mut ui) = on_the_dialog();
    ui.wait_until("the banner's No", Duration::from_secs(5), |s| {
        s.contents().contains("/n] No")
    });
    ui.wait_until(
        "the prompt's row to be highlighted",
        Duration::from_secs(5),
        |s| {
            row_of(s, "1. Yes")
                .and_then(|row| s.cell(row, COLS - 10))
                .is_some_and(|cell| cell.bgcolor() == vt100::Color::Idx(58))
        },
    );
    assert!(ui.text().contains("⚠ ask-first"), "{}", ui.text());
    assert_eq!(status_in_file(&tasks), "running");
    // It says what the prompt asks, not the rule's name (`press_1`).
    let notification =
        "\x07\x1b]9;herd: ask-first is waiting for you: Bash: touch created_by_agent.txt\x07"
            .as_bytes();
    let rang = ui
        .raw()
        .windows(notification.len())
        .filter(|w| *w == notification)
        .count();
    assert_eq!(rang, 1, "one bell and desktop notification for the wait");

    ui.press("1");
    ui.wait_until("the task to complete", Duration::from_secs(30), |s| {
        let text = s.contents();
        text.contains("✔ ask-first") && text.contains("DONE")
    });
    wait_for_status(&tasks, "completed");

    ui.press("q");
    let code = ui.wait_for_exit(Duration::from_secs(10));
    assert_eq!(
        code,
        0,
        "every task completed; the screen was:\n{}",
        ui.text()
    );
    let screen = ui.screen();
    assert!(!screen.alternate_screen(), "the alternate screen was left");
    // Leaving prints the run's summary table on the operator's screen, as headless mode does.
    let after = screen.contents();
    assert!(
        after.contains("ATTEMPTS")
            && after
                .lines()
                .any(|l| l.contains("ask-first") && l.contains("completed")),
        "the summary table after leaving; the screen was:\n{after}"
    );
    assert!(!screen.hide_cursor(), "the cursor is visible again");
    assert!(!screen.bracketed_paste(), "bracketed paste is off again");
    assert!(
        dir.path().join("runs").join("herd.log").exists(),
        "logs go to a file"
    );
}

#[test]
fn a_finished_attempt_is_replayed_inside_the_dashboard_and_q_comes_back() {
    let (dir, tasks, mut ui) = on_the_dialog();
    // Enter takes the option the dialog highlights (`1. Yes`), and says so; it does not take
    // over the agent.
    ui.press("\r");
    ui.wait_until(
        "the status line to say what was sent",
        Duration::from_secs(10),
        |s| s.contents().contains("sent Enter (Yes) → ask-first"),
    );
    assert!(
        !no_message(ui.screen()),
        "a message is told by its background: {}",
        ui.text()
    );
    assert!(!ui.text().contains("TAKE-OVER"), "{}", ui.text());
    ui.wait_until("the task to complete", Duration::from_secs(30), |s| {
        let text = s.contents();
        text.contains("✔ ask-first") && text.contains("DONE")
    });
    wait_for_status(&tasks, "completed");
    // A passing message on the status line (the answer sent, the task's outcome) expires on
    // its own clock: the screens compared are taken once none is shown.
    ui.wait_until("no passing message", Duration::from_secs(15), no_message);
    let before = ui.text();

    ui.press("v");
    ui.wait_until("the list of attempts", Duration::from_secs(10), |s| {
        let text = s.contents();
        text.contains("Recorded attempts · ask-first") && text.contains("attempt 1")
    });
    assert!(ui.text().contains("completed ·"), "{}", ui.text());

    ui.press("\r");
    ui.wait_until("the player", Duration::from_secs(10), |s| {
        let text = s.contents();
        text.contains("ask-first · attempt 1 · ")
            && text.contains("rec ")
            && text.contains("space play")
    });
    // The queue stays in view beside the player.
    assert!(ui.text().contains("✔ ask-first"), "{}", ui.text());
    ui.wait_until(
        "the replay to reach the verdict",
        Duration::from_secs(30),
        |s| s.contents().contains("verdict: completed"),
    );

    ui.press("q");
    ui.wait_until("the dashboard again", Duration::from_secs(10), |s| {
        let text = s.contents();
        !text.contains("space play") && text.contains("The batch is done") && no_message(s)
    });
    assert!(!ui.text().contains("rec "), "{}", ui.text());
    let keep = |t: &str| -> Vec<String> {
        // The run clock ticks; everything else is as it was.
        t.lines()
            .filter(|l| !l.contains('⏱'))
            .map(str::to_string)
            .collect()
    };
    assert_eq!(keep(&ui.text()), keep(&before), "the dashboard as it was");

    let cast = dir.path().join("runs/ask-first/attempt_1.cast");
    let header = std::fs::read_to_string(&cast).expect("cast");
    let header: serde_json::Value =
        serde_json::from_str(header.lines().next().expect("header")).expect("json");
    // A lone agent on a 120x40 terminal: its pane's inside is 76x36 (not --pty-size's 120x40).
    assert_eq!(
        (header["width"].as_u64(), header["height"].as_u64()),
        (Some(76), Some(36))
    );

    ui.press("q");
    assert_eq!(
        ui.wait_for_exit(Duration::from_secs(10)),
        0,
        "{}",
        ui.text()
    );
}

#[test]
fn questions_are_answered_with_m_and_the_session_resumes_to_completion() {
    let dir = tempfile::tempdir().expect("temp dir");
    let tasks = dir.path().join("tasks.json");
    std::fs::write(&tasks, ASKING).expect("write tasks");
    let mut ui = Dashboard::start(&tasks, Launch::size(ROWS, COLS));

    ui.wait_until("the task to need input", Duration::from_secs(30), |s| {
        let text = s.contents();
        text.contains("? ask-db") && text.contains("needs input")
    });
    // The only task is selected: its details show the questions.
    ui.wait_until("the questions", Duration::from_secs(5), |s| {
        let text = s.contents();
        text.contains("? Which database should I use?")
            && text.contains("? May I drop the old table?")
    });
    wait_for_status(&tasks, "needs_input");
    let notification = b"\x07\x1b]9;herd: ask-db has 2 questions for you\x07";
    let rang = ui
        .raw()
        .windows(notification.len())
        .filter(|w| w == notification)
        .count();
    assert_eq!(
        rang, 1,
        "one bell and desktop notification for the questions"
    );

    ui.press("m");
    ui.wait_until("the answer editor", Duration::from_secs(10), |s| {
        let text = s.contents();
        text.contains("Answer ask-db's questions")
            && text.contains("1. Which database should I use?")
    });
    ui.press("Postgres, and yes");
    ui.wait_until("the typed answer", Duration::from_secs(10), |s| {
        s.contents().contains("Postgres, and yes")
    });
    // Ctrl-S sends.
    ui.press("\x13");
    ui.wait_until(
        "the resumed task to complete",
        Duration::from_secs(30),
        |s| {
            let text = s.contents();
            text.contains("✔ ask-db") && text.contains("DONE")
        },
    );
    wait_for_status(&tasks, "completed");
    let task = first_task_in_file(&tasks);
    assert_eq!(task["status"], "completed", "{task:#}");
    assert_eq!(task["attempts"], 2, "{task:#}");
    let result = &task["result"];
    // The simulator echoes its whole prompt: the answer, then the engine's note of the new
    // attempt's signal file.
    let text = result["result_text"].as_str().unwrap_or_default();
    assert_eq!(
        text.lines().next(),
        Some("answered: Postgres, and yes"),
        "{task:#}"
    );
    assert_eq!(result["resumed"], true, "{task:#}");
    assert_eq!(result["session_id"], "sim-ask-db-1", "{task:#}");
    assert!(
        task.get("resume_message").is_none_or(|m| m.is_null()),
        "{task:#}"
    );

    ui.press("q");
    assert_eq!(
        ui.wait_for_exit(Duration::from_secs(10)),
        0,
        "the task completed; the screen was:\n{}",
        ui.text()
    );
}

/// The events the `notify` command appended to `file`, once `enough` holds of them; on
/// timeout, fails showing them and the last screen.
fn wait_for_events(
    ui: &mut Dashboard,
    file: &Path,
    what: &str,
    enough: impl Fn(&[serde_json::Value]) -> bool,
) -> Vec<serde_json::Value> {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let events: Vec<serde_json::Value> = std::fs::read_to_string(file)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect();
        if enough(&events) {
            return events;
        }
        assert!(
            Instant::now() < deadline,
            "timed out waiting for {what}; the events were {events:#?}\nthe screen was:\n{}",
            ui.text()
        );
        ui.read_some(Duration::from_millis(20));
    }
}

fn count(events: &[serde_json::Value], kind: &str) -> usize {
    events.iter().filter(|e| e["event"] == kind).count()
}

#[test]
fn notify_hears_each_wait_in_the_dashboard_once_and_the_batch_end() {
    let dir = tempfile::tempdir().expect("temp dir");
    let scenario = dir.path().join("again.toml");
    std::fs::write(
        &scenario,
        r#"description = "a dialog that comes back once after its answer"
[[step]]
claude_header = {}
[[step]]
echo = "claude"
[[step]]
dialog = { style = "claude", command = "npm test", description = "Run the tests", repeat = 2, gap = 1.5 }
[[step]]
say = "Tests pass."
[[step]]
marker = "claude"
[[step]]
idle = "claude"
"#,
    )
    .expect("write scenario");
    let events = dir.path().join("events.jsonl");
    let tasks = dir.path().join("tasks.json");
    let doc = serde_json::json!({
        "notify": ["sh", "-c", format!("cat >> '{}'", events.display())],
        "tasks": [{
            "task_id": "again", "agent": "sim", "timeout_sec": 120,
            "inputs": {"scenario": scenario.display().to_string()},
            "prompt_template": "Run the tests. When complete, print exactly: TASK_COMPLETE:{task_id}"
        }]
    });
    std::fs::write(&tasks, doc.to_string()).expect("write tasks");
    let mut ui = Dashboard::start(&tasks, Launch::size(ROWS, COLS));

    let dialog_shown = |s: &vt100::Screen| {
        s.contents().contains("⚠ again: [1/Enter] Yes")
            && row_of(s, "1. Yes")
                .and_then(|row| s.cell(row, COLS - 10))
                .is_some_and(|cell| cell.bgcolor() == vt100::Color::Idx(58))
    };
    ui.wait_until("the prompt", Duration::from_secs(30), dialog_shown);
    let first = wait_for_events(&mut ui, &events, "the first wait", |e| {
        count(e, "prompt_waiting") == 1
    });
    assert_eq!(first[0]["task_id"], "again");
    assert_eq!(first[0]["request"], "Bash(npm test)", "{first:#?}");
    ui.press("1");
    // Answered, the dialog comes back: a new wait, told again.
    let second = wait_for_events(&mut ui, &events, "the second wait", |e| {
        count(e, "prompt_waiting") == 2
    });
    assert_ne!(first[0]["at"], serde_json::Value::Null);
    assert_eq!(second[1]["request"], "Bash(npm test)", "{second:#?}");
    // The key answers the dialog the operator sees: press it once the new one is drawn (the
    // scenario's gap outlasts the dashboard's hold on keys right after an answer).
    ui.wait_until("the prompt again", Duration::from_secs(10), dialog_shown);
    ui.press("1");
    ui.wait_until("the task to complete", Duration::from_secs(30), |s| {
        s.contents().contains("✔ again")
    });
    let ended = wait_for_events(&mut ui, &events, "the batch's end", |e| {
        count(e, "batch_ended") == 1
    });
    ui.press("q");
    let code = ui.wait_for_exit(Duration::from_secs(20));
    assert_eq!(code, 0, "the screen was:\n{}", ui.text());
    let all = wait_for_events(&mut ui, &events, "nothing more", |_| true);
    assert_eq!(all.len(), 3, "two waits and the end, each once: {all:#?}");
    assert_eq!(ended[2]["counts"], serde_json::json!({"completed": 1}));
}

#[test]
fn the_queue_note_says_who_answered_through_which_channel() {
    let dir = tempfile::tempdir().expect("temp dir");
    // In place of Claude Code: a tool call sent to herd through its hook, as Claude sends it,
    // then a wait. The guard refuses it there; no dialog and no key on the screen.
    let payload = r#"{"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": "rm -rf ~"}}"#;
    let script = dir.path().join("hooked.sh");
    std::fs::write(
        &script,
        format!(
            "printf '%s' '{payload}' | '{}' hook >/dev/null\necho asked\nsleep 60\n",
            env!("CARGO_BIN_EXE_herd")
        ),
    )
    .expect("script");
    let profiles = dir.path().join("profiles.toml");
    std::fs::write(
        &profiles,
        format!(
            "[profiles.hooked]\ncommand = [\"sh\", \"{}\"]\nhooks = \"claude\"\n",
            script.display()
        ),
    )
    .expect("profiles");
    let tasks = dir.path().join("tasks.json");
    std::fs::write(
        &tasks,
        r#"{"tasks": [{"task_id": "h", "agent": "hooked", "prompt_template": "p"}]}"#,
    )
    .expect("write tasks");
    let profiles = profiles.display().to_string();
    let args = ["--profiles", profiles.as_str()];
    let mut ui = Dashboard::start(
        &tasks,
        Launch {
            args: &args,
            ..Launch::size(ROWS, 160)
        },
    );
    // The task's row in the queue (the details box below lists the approval anyway).
    ui.wait_until_text("the row's note", Duration::from_secs(30), |text| {
        text.lines()
            .any(|l| l.contains("▶ h ") && l.contains("hooked") && l.contains("auto via hook"))
    });
    assert!(!ui.text().contains("auto press_1"), "{}", ui.text());
    ui.press("q");
    ui.press("y");
    ui.wait_for_exit(Duration::from_secs(10));
}

#[test]
fn the_guards_reason_is_read_whole_in_the_details_window() {
    let dir = tempfile::tempdir().expect("temp dir");
    // A dialog the guard refuses: its reason is longer than a detail's three rows.
    let scenario = dir.path().join("refused.toml");
    std::fs::write(
        &scenario,
        r#"description = "a Bash dialog the guard refuses"
[[step]]
claude_header = {}
[[step]]
dialog = { style = "claude", command = "rm -rf ~", description = "Delete everything", on_reject = "idle" }
[[step]]
idle = "claude"
"#,
    )
    .expect("scenario");
    let tasks = dir.path().join("tasks.json");
    std::fs::write(
        &tasks,
        format!(
            r#"{{"tasks": [{{"task_id": "r", "agent": "sim", "inputs": {{"scenario": "{}"}}, "prompt_template": "p"}}]}}"#,
            scenario.display()
        ),
    )
    .expect("write tasks");
    // Narrow: the reason wraps to more rows than a detail's three.
    let mut ui = Dashboard::start(&tasks, Launch::size(14, 40));
    ui.wait_for("refuse", Duration::from_secs(30));
    ui.press("d");
    ui.wait_for("guard", Duration::from_secs(10));
    // The arrows scroll the window to the reason's last words.
    for _ in 0..20 {
        ui.press("\x1b[B");
    }
    ui.wait_for("the whole system", Duration::from_secs(10));
    assert!(
        ui.text().contains("guard"),
        "the window is open: {}",
        ui.text()
    );
    // Any other key closes it; then leave.
    ui.press("x");
    ui.press("q");
    ui.press("y");
    ui.wait_for_exit(Duration::from_secs(10));
}

/// Processes (other than this test) whose working folder is in `dir`: the task's agent runs
/// there.
fn processes_in(dir: &Path) -> Vec<String> {
    let dir = dir.canonicalize().expect("folder");
    let me = std::process::id().to_string();
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").expect("/proc").flatten() {
        let pid = entry.file_name().to_string_lossy().into_owned();
        if !pid.bytes().all(|b| b.is_ascii_digit()) || pid == me {
            continue;
        }
        if std::fs::read_link(entry.path().join("cwd")).is_ok_and(|cwd| cwd.starts_with(&dir)) {
            let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
            found.push(format!(
                "{pid}: {}",
                String::from_utf8_lossy(&cmdline).replace('\0', " ")
            ));
        }
    }
    found
}

/// The operator's terminal closes under a running batch (a window closed, an ssh session
/// dropped): herd stops as the operator's confirmed quit would, ends the agent, and leaves the
/// tasks file whole with the task no longer running.
#[test]
fn a_closed_terminal_stops_herd_and_its_agent_and_keeps_the_file_whole() {
    let (dir, tasks, mut ui) = on_the_dialog();
    assert_eq!(status_in_file(&tasks), "running");
    let herd = ui.pid().expect("herd's pid").to_string();
    let agents: Vec<String> = processes_in(dir.path())
        .into_iter()
        .filter(|p| !p.starts_with(&format!("{herd}:")))
        .collect();
    assert!(!agents.is_empty(), "the agent runs in the task's folder");

    let exited = ui.hang_up(Duration::from_secs(30));
    assert!(
        exited.is_some(),
        "herd did not exit after its terminal closed"
    );
    let status = status_in_file(&tasks);
    assert!(
        !status.is_empty() && status != "running",
        "the task's status after the hang-up: {status:?}"
    );
    let deadline = Instant::now() + Duration::from_secs(10);
    while !processes_in(dir.path()).is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(
        processes_in(dir.path()),
        Vec::<String>::new(),
        "left running"
    );
}
