//! End to end: the morning after a detached run, in the operator's terms (issue #35). Five
//! simulated tasks run in the background (one asks and nobody answers, one hangs, one hits its
//! quota, one succeeds, one waits for its quota to reset); then `herd status` says each task's
//! start, end and length in local time, a "why" that names the deciding event (the unanswered
//! prompt, what the agent showed last, the quota's reset as a clock time), how the run ended and
//! where its log is, and "since you left"; a second look says nothing new; `herd attach` to the
//! ended run says when and how it ended. The dashboard's queue says a quota wait as a clock time.
//! Times are in `TZ=UTC`; the quota's reset in the zone the agent named (Europe/Berlin).

// Test code: a failed `expect` is the test failing, with its message.
#![allow(clippy::expect_used, clippy::unwrap_used)]

use std::path::PathBuf;
use std::process::Output;
use std::time::{Duration, Instant};

mod common;
use common::dashboard::{Dashboard, Launch};
use common::{describe, herd};

const TASKS: &str = r#"{
  "run_id": "overnight",
  "tasks": [
    {"task_id": "ask", "agent": "sim", "timeout_sec": 6, "max_retries": 0,
     "inputs": {"scenario": "permission"},
     "prompt_template": "Run the tests. When complete, print exactly: TASK_COMPLETE:{task_id}"},
    {"task_id": "hang", "agent": "sim", "timeout_sec": 4, "max_retries": 0,
     "inputs": {"scenario": "hang"},
     "prompt_template": "Run the tests. When complete, print exactly: TASK_COMPLETE:{task_id}"},
    {"task_id": "limit", "agent": "sim", "max_retries": 0,
     "inputs": {"scenario": "quota"},
     "prompt_template": "Run the tests. When complete, print exactly: TASK_COMPLETE:{task_id}"},
    {"task_id": "ok", "agent": "sim", "inputs": {"scenario": "success"},
     "prompt_template": "Say hello. When complete, print exactly: TASK_COMPLETE:{task_id}"}
  ]
}
"#;

const WAIT: Duration = Duration::from_secs(60);

struct Night {
    dir: tempfile::TempDir,
    runtime: tempfile::TempDir,
}

impl Night {
    fn new(tasks: &str) -> Night {
        let dir = tempfile::tempdir().expect("temp dir");
        std::fs::write(dir.path().join("tasks.json"), tasks).expect("write tasks");
        let runtime = tempfile::tempdir().expect("runtime dir");
        Night { dir, runtime }
    }

    fn herd(&self, args: &[&str]) -> Output {
        herd()
            .args(args)
            .current_dir(self.dir.path())
            .env("XDG_RUNTIME_DIR", self.runtime.path())
            .env("TZ", "UTC")
            .output()
            .expect("herd runs")
    }

    fn status(&self) -> String {
        let out = self.herd(&["status", "--tasks", "tasks.json"]);
        assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    fn log(&self) -> PathBuf {
        self.dir.path().join("runs").join("background.log")
    }

    /// Waits until the background run has ended, as `herd status --json` sees the file (every
    /// task ended) and the rendezvous folder (no herd runs it; its end recorded).
    fn wait_for_the_end(&self) {
        let deadline = Instant::now() + WAIT;
        loop {
            let out = self.herd(&["status", "--tasks", "tasks.json", "--json"]);
            let rows: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
            let ended = rows.as_array().is_some_and(|rows| {
                rows.iter()
                    .all(|r| r["status"] == "completed" || r["status"] == "failed")
            });
            let recorded = self.dir.path().join("runs/last_run.json").is_file();
            if ended && recorded {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "the run did not end: {rows:#}\n{}",
                std::fs::read_to_string(self.log()).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    }
}

fn line_of<'a>(text: &'a str, start: &str) -> &'a str {
    text.lines()
        .find(|l| l.starts_with(start))
        .unwrap_or_else(|| panic!("no line starting {start:?} in:\n{text}"))
}

#[test]
fn the_morning_after_a_detached_run_says_what_happened() {
    let night = Night::new(TASKS);
    let out = night.herd(&[
        "run",
        "--detach",
        "--tasks",
        "tasks.json",
        "--concurrency",
        "4",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    night.wait_for_the_end();

    let first = night.status();
    // Times of each task's last attempt, on the local (UTC) clock.
    assert!(
        line_of(&first, "TASK").contains("STARTED  ENDED  TOOK"),
        "{first}"
    );
    let ask = line_of(&first, "ask ");
    assert!(ask.contains(" 6 s "), "{first}");
    // The why names the event: the prompt nobody answered, not the echo of the prompt.
    assert!(
        ask.contains("waited ")
            && ask.contains("for an answer to Bash: touch created_by_agent.txt"),
        "{first}"
    );
    assert!(!first.contains("❯ Run the tests"), "{first}");
    let hang = line_of(&first, "hang ");
    assert!(
        hang.contains("last seen: ")
            && hang.contains("Thinking")
            && hang.contains("(timeout after 4 s)"),
        "{first}"
    );
    let limit = line_of(&first, "limit ");
    assert!(limit.contains("quota: resets "), "{first}");
    assert!(limit.contains("15:00 Europe/Berlin (in "), "{first}");
    // How the run ended and where its log is.
    assert!(
        first.contains("The last run (in the background) ended at "),
        "{first}"
    );
    assert!(
        first.contains("exit 1, some task ended otherwise than completed."),
        "{first}"
    );
    assert!(
        first.contains(&format!("Its log: {}", night.log().display())),
        "{first}"
    );
    // Never looked since the start: the digest starts there and has every end.
    let digest = &first[first.find("Since the run started (").expect(&first)..];
    assert!(digest.contains("\n  completed  ok\n"), "{digest}");
    assert!(digest.contains("\n  failed     ask: waited "), "{digest}");
    assert!(
        digest.contains("nobody answered (timeout after 6 s)"),
        "{digest}"
    );
    assert!(
        digest.contains("\n             hang: last seen: "),
        "{digest}"
    );
    assert!(
        digest.contains("\n             limit: quota: resets "),
        "{digest}"
    );

    // The JSON rows carry ISO times with the local offset and the length in seconds.
    let out = night.herd(&["status", "--tasks", "tasks.json", "--json"]);
    let rows: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    let ask = &rows[0];
    assert!(
        ask["started_at"].as_str().unwrap().ends_with("+00:00"),
        "{ask:#}"
    );
    assert!(
        ask["ended_at"].as_str().unwrap().ends_with("+00:00"),
        "{ask:#}"
    );
    let took = ask["duration_sec"].as_f64().unwrap();
    assert!((5.0..8.0).contains(&took), "{ask:#}");
    assert!(
        ask["quota_resets_at"].is_null() && rows[2]["quota_resets_at"].is_string(),
        "{rows:#}"
    );

    // The second look: nothing new since the first.
    let second = night.status();
    assert!(second.contains("Since you last looked ("), "{second}");
    assert!(
        second.contains("  nothing ended and nothing waits for you"),
        "{second}"
    );

    // Attaching to the ended run says when and how it ended, and where its log is.
    let out = night.herd(&["attach", "--tasks", "tasks.json"]);
    assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains(
            "herd: no herd runs tasks.json now. The last run (in the background) ended at "
        ),
        "{said}"
    );
    assert!(said.contains("exit 1, some task ended otherwise"), "{said}");
    assert!(said.contains("background.log"), "{said}");
    assert!(said.contains("Since you last looked ("), "{said}");
    assert!(
        said.contains("To run what is left: herd run --detach --tasks tasks.json"),
        "{said}"
    );
}

#[test]
fn a_quota_wait_reads_as_a_clock_time_in_the_queue_and_the_digest() {
    let night = Night::new(
        r#"{"tasks": [
        {"task_id": "limit", "agent": "sim", "wait_for_quota_reset": true,
         "inputs": {"scenario": "quota"},
         "prompt_template": "Run the tests. When complete, print exactly: TASK_COMPLETE:{task_id}"}
    ]}"#,
    );
    let tasks = night.dir.path().join("tasks.json");
    let runtime = night.runtime.path().to_str().unwrap().to_string();
    let env = [("XDG_RUNTIME_DIR", runtime.as_str()), ("TZ", "UTC")];
    let mut dashboard = Dashboard::start(
        &tasks,
        Launch {
            rows: 40,
            cols: 120,
            args: &[],
            env: &env,
        },
    );
    // 15:00 in Berlin is 14:00 UTC: the queue says the clock time, never a count of seconds.
    dashboard.wait_for("14:00 (in ", WAIT);
    let screen = dashboard.text();
    assert!(!counts_seconds(&screen), "{screen}");
    // `herd status` beside the running dashboard, once the file has the retry: the run's start
    // and the wait on the local clock.
    let deadline = Instant::now() + WAIT;
    let status = loop {
        let status = night.status();
        if status.contains("retryable") || Instant::now() > deadline {
            break status;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    assert!(
        status.contains(", with its dashboard in a terminal, since ")
            && status.contains(" ago) (herd "),
        "{status}"
    );
    assert!(
        status.contains("  waits      limit: quota: resets ")
            && status.contains("15:00 Europe/Berlin (in ")
            && status.contains("), then retries"),
        "{status}"
    );
    dashboard.quit();
}

/// Whether `screen` says a retry as a count of seconds (`retry 54569s`).
fn counts_seconds(screen: &str) -> bool {
    screen.split("retry ").skip(1).any(|rest| {
        let digits = rest.chars().take_while(char::is_ascii_digit).count();
        digits > 0 && rest[digits..].starts_with('s')
    })
}

#[test]
fn attach_shows_since_you_left_first_then_the_dashboard() {
    let night = Night::new(
        r#"{"tasks": [
        {"task_id": "ask", "agent": "sim", "timeout_sec": 300,
         "inputs": {"scenario": "permission"},
         "prompt_template": "Delete the build folder. When complete, print exactly: TASK_COMPLETE:{task_id}"},
        {"task_id": "ok", "agent": "sim", "inputs": {"scenario": "plain_success"},
         "prompt_template": "Say hello. When complete, print exactly: TASK_COMPLETE:{task_id}"}
    ]}"#,
    );
    let out = night.herd(&[
        "run",
        "--detach",
        "--tasks",
        "tasks.json",
        "--concurrency",
        "2",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    // Wait until `ok` has ended and `ask`'s prompt waits, as the control socket says.
    let deadline = Instant::now() + WAIT;
    loop {
        let out = night.herd(&["ctl", "--tasks", "tasks.json", "prompts.list", "{}"]);
        let listed = String::from_utf8_lossy(&out.stdout).into_owned();
        let status = night.herd(&["status", "--tasks", "tasks.json", "--json"]);
        let rows: serde_json::Value = serde_json::from_slice(&status.stdout).unwrap_or_default();
        if listed.contains("\"ask/") && rows[1]["status"] == "completed" {
            break;
        }
        assert!(Instant::now() < deadline, "{listed}\n{rows:#}");
        std::thread::sleep(Duration::from_millis(100));
    }

    let mut command = portable_pty::CommandBuilder::new(env!("CARGO_BIN_EXE_herd"));
    command.args(["attach", "--tasks", "tasks.json", "--digest"]);
    command.cwd(night.dir.path());
    let runtime = night.runtime.path().to_str().unwrap().to_string();
    let env = [("XDG_RUNTIME_DIR", runtime.as_str()), ("TZ", "UTC")];
    let mut attached = Dashboard::spawn(
        command,
        &Launch {
            rows: 24,
            cols: 140,
            args: &[],
            env: &env,
        },
    );
    attached.wait_for("Press any key to open the dashboard.", WAIT);
    let first = attached.text();
    println!("the first screen:\n{first}");
    assert!(first.contains("Since the run started ("), "{first}");
    assert!(first.contains("  completed  ok"), "{first}");
    assert!(
        first.contains("  needs you  ask: a prompt waits: Bash"),
        "{first}"
    );
    assert!(
        first.contains("answer: herd ctl --tasks tasks.json answer ask/1/"),
        "{first}"
    );
    // Any key dismisses it: the dashboard with the waiting prompt.
    attached.press(" ");
    attached.wait_for("⚠ ask: [1/Enter] Yes", WAIT);

    let out = night.herd(&["stop", "--tasks", "tasks.json"]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    attached.wait_for_exit(WAIT);
}
