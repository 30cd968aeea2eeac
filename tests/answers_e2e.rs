//! End to end: an operator's key answers the dialog the operator sees. The real `herd run`
//! binary in a pseudo-terminal, simulator agents with permission dialogs, and keys sent as a
//! person types them (a double tap half a second apart, Esc after `z`):
//! - a double tap, or Enter with a completed task selected, never approves another task's
//!   dialog; the banner names the task an answer goes to;
//! - Esc leaves zoom and says nothing to the agent; `n` says No;
//! - Enter is not sent to a question that highlights no option, and a dialog still on screen
//!   after an answer waits for the operator again;
//! - the dialog's own keys (`2`, Codex's `y`) are passed to it and recorded as the operator's.

// Test code: a failed `expect` is the test failing, with its message.
#![allow(clippy::expect_used, clippy::unwrap_used)]

use std::path::Path;
use std::time::Duration;

mod common;
use common::dashboard::{Dashboard, Launch};

const ROWS: u16 = 40;
const COLS: u16 = 120;

/// How long a person's double tap takes, between the two keys.
const DOUBLE_TAP: Duration = Duration::from_millis(500);

/// A Claude-style dialog asking `command`; refused, the agent goes back to its prompt.
fn dialog_scenario(command: &str) -> String {
    format!(
        r#"description = "Claude Bash dialog for {command}"

[[step]]
claude_header = {{}}

[[step]]
echo = "claude"

[[step]]
spinner = {{ text = "Thinking…", seconds = 0.3 }}

[[step]]
dialog = {{ style = "claude", command = "{command}", description = "Run it", on_reject = "idle" }}

[[step]]
say = "Ran {command}."

[[step]]
marker = "claude"

[[step]]
idle = "claude"
"#
    )
}

/// A tasks file of simulator tasks: (task id, scenario name or path).
fn tasks_file(dir: &Path, tasks: &[(&str, &str)]) -> std::path::PathBuf {
    let list: Vec<serde_json::Value> = tasks
        .iter()
        .map(|(id, scenario)| {
            serde_json::json!({
                "task_id": id,
                "agent": "sim",
                "timeout_sec": 120,
                "inputs": { "scenario": scenario },
                "prompt_template": "Do the work. When complete, print exactly: TASK_COMPLETE:{task_id}"
            })
        })
        .collect();
    let doc = serde_json::json!({ "run_id": "answers", "tasks": list });
    let path = dir.join("tasks.json");
    std::fs::write(&path, serde_json::to_string_pretty(&doc).unwrap()).expect("write tasks");
    path
}

/// Two presses of `key` a person's double tap apart (the screen read in between).
fn double_tap(ui: &mut Dashboard, key: &str) {
    ui.press(key);
    ui.holds_for("the dashboard runs", DOUBLE_TAP, |_| true);
    ui.press(key);
}

/// The answers recorded in an ended attempt's facts file: (by, rule, request text).
fn approvals(dir: &Path, task_id: &str) -> Vec<(String, String, String)> {
    let path = dir.join(format!("runs/{task_id}/attempt_1.json"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
    let doc: serde_json::Value = serde_json::from_str(&text).expect("facts");
    let field = |a: &serde_json::Value, k: &str| a[k].as_str().unwrap_or_default().to_string();
    doc["approvals"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .map(|a| {
            let request = a["request"]["text"]
                .as_str()
                .unwrap_or_default()
                .to_string();
            (field(a, "by"), field(a, "rule"), request)
        })
        .collect()
}

#[test]
fn a_double_tap_answers_one_dialog_of_one_task() {
    let dir = tempfile::tempdir().expect("temp dir");
    let first = dir.path().join("npm_test.toml");
    let second = dir.path().join("make_deploy.toml");
    std::fs::write(&first, dialog_scenario("npm test")).expect("scenario");
    std::fs::write(&second, dialog_scenario("make deploy")).expect("scenario");
    let tasks = tasks_file(
        dir.path(),
        &[
            ("a-test", first.to_str().expect("path")),
            ("b-deploy", second.to_str().expect("path")),
        ],
    );
    let mut ui = Dashboard::start(&tasks, Launch::size(ROWS, COLS));
    // The banner names the task its keys answer, and says which keys its dialog takes; the
    // other pane's dialog waits too.
    ui.wait_until_text("both dialogs", Duration::from_secs(30), |t| {
        t.contains("⚠ a-test: [1/Enter] Yes") && t.contains("/n] No") && t.contains("w: go to it")
    });

    // Enter, and Enter again half a second later, as a person double-taps.
    double_tap(&mut ui, "\r");
    ui.wait_until_text("a-test to complete", Duration::from_secs(30), |t| {
        t.contains("✔ a-test")
    });
    // a-test's pane closed and b-deploy's pane took the focus: a-test is still the selected
    // row, so b-deploy's banner says how to answer it instead of taking keys.
    ui.wait_until_text(
        "b-deploy's pane to say it is not selected",
        Duration::from_secs(10),
        |t| t.contains("⚠ b-deploy waits") && t.contains("w or Tab selects it to answer"),
    );
    // Enter with the completed task selected answers nothing, and says so.
    ui.press("\r");
    ui.wait_until_text(
        "the refusal on the status line",
        Duration::from_secs(5),
        |t| t.contains("not sent: a-test is selected; w selects b-deploy"),
    );
    ui.holds_for(
        "b-deploy's dialog stays unanswered",
        Duration::from_millis(1500),
        |t| t.contains("make deploy") && !t.contains("Ran make deploy"),
    );

    // Selected deliberately, its dialog takes the keys; `n` says No.
    ui.press("w");
    ui.wait_until_text("b-deploy's banner", Duration::from_secs(5), |t| {
        t.contains("⚠ b-deploy: [1/Enter] Yes")
    });
    ui.press("n");
    ui.wait_until_text(
        "b-deploy's dialog to be refused",
        Duration::from_secs(10),
        |t| t.contains("sent n (No) → b-deploy"),
    );
    let code = ui.quit();
    assert_ne!(code, 101, "herd did not panic:\n{}", ui.text());
    let a = approvals(dir.path(), "a-test");
    assert_eq!(
        a,
        [("operator".into(), "Enter".into(), "npm test".into())],
        "one answer, to a-test's dialog"
    );
    let b = approvals(dir.path(), "b-deploy");
    assert_eq!(
        b,
        [("operator".into(), "No (Esc)".into(), "make deploy".into())],
        "b-deploy's only answer is the operator's No"
    );
}

#[test]
fn esc_leaves_zoom_and_windows_and_says_nothing_to_the_agent() {
    let dir = tempfile::tempdir().expect("temp dir");
    let scenario = dir.path().join("rm_build.toml");
    std::fs::write(&scenario, dialog_scenario("rm -rf build")).expect("scenario");
    let tasks = tasks_file(
        dir.path(),
        &[("ask-first", scenario.to_str().expect("path"))],
    );
    let mut ui = Dashboard::start(&tasks, Launch::size(ROWS, COLS));
    ui.wait_until_text("the banner", Duration::from_secs(30), |t| {
        t.contains("⚠ ask-first: [1/Enter] Yes")
    });
    let queue_shown = |t: &str| t.contains("Queue");
    assert!(queue_shown(&ui.text()), "{}", ui.text());
    ui.press("z");
    ui.wait_until_text("the pane zoomed", Duration::from_secs(5), |t| {
        !queue_shown(t)
    });
    ui.press("\x1b");
    ui.wait_until_text("zoom left", Duration::from_secs(5), queue_shown);
    // Esc closes a window the same way, and says nothing to the agent either.
    ui.press("?");
    ui.wait_until_text("the help", Duration::from_secs(5), |t| {
        t.contains("herd · keys")
    });
    ui.press("\x1b");
    ui.wait_until_text("the help closed", Duration::from_secs(5), |t| {
        !t.contains("herd · keys")
    });
    // The agent got nothing: its dialog is still there and still waits (past the moment a
    // dialog still on screen after an answer would be held again).
    ui.holds_for(
        "the dialog stays, unanswered",
        Duration::from_millis(2500),
        |t| t.contains("⚠ ask-first: [1/Enter] Yes") && !t.contains("→ ask-first"),
    );
    // `n` is the No key: the agent gets Esc and refuses the tool call.
    ui.press("n");
    ui.wait_until_text("the refusal", Duration::from_secs(10), |t| {
        t.contains("sent n (No) → ask-first") && !t.contains("⚠ ask-first:")
    });
    ui.quit();
    let recorded = approvals(dir.path(), "ask-first");
    assert_eq!(
        recorded,
        [("operator".into(), "No (Esc)".into(), "rm -rf build".into())]
    );
}

#[test]
fn enter_is_not_sent_where_no_option_is_highlighted_and_an_untaken_answer_waits_again() {
    let dir = tempfile::tempdir().expect("temp dir");
    let tasks = tasks_file(dir.path(), &[("plain", "press_keys")]);
    let mut ui = Dashboard::start(&tasks, Launch::size(ROWS, COLS));
    ui.wait_until_text(
        "the first question's banner",
        Duration::from_secs(30),
        |t| t.contains("⚠ plain: [1] Continue  [n] No"),
    );
    assert!(!ui.text().contains("[Enter]"), "{}", ui.text());
    ui.press("\r");
    ui.wait_until_text("Enter refused with a word", Duration::from_secs(5), |t| {
        t.contains("Enter not sent: plain's dialog highlights no option")
    });
    // `1`, then Enter as a double tap: whether the next question is up yet or not, the Enter
    // is not sent.
    ui.press("1");
    ui.holds_for("the dashboard runs", DOUBLE_TAP, |_| true);
    ui.press("\r");
    ui.wait_until_text(
        "the second Enter answered with a word",
        Duration::from_secs(5),
        |t| {
            t.contains("not sent: a second key right after your answer")
                || t.contains("Enter went nowhere")
                || t.contains("Enter not sent: plain's dialog highlights no option")
        },
    );
    ui.wait_until_text("the second question", Duration::from_secs(10), |t| {
        t.contains("⚠ plain: [p] press p  [n] No")
    });
    ui.holds_for("the dashboard runs", Duration::from_millis(1100), |_| true);
    ui.press("\r");
    ui.wait_until_text("Enter refused with a word", Duration::from_secs(5), |t| {
        t.contains("Enter not sent: plain's dialog highlights no option")
    });
    // No (Esc) is not what this question takes: still on screen a moment later, it waits for
    // the operator again instead of looking like it runs.
    ui.press("n");
    ui.wait_until_text("the answer sent", Duration::from_secs(5), |t| {
        t.contains("sent n (No) → plain") && !t.contains("⚠ plain:")
    });
    ui.wait_until_text("the question waiting again", Duration::from_secs(10), |t| {
        // The guard's doubt has rows of its own above the agent's screen (`? ask: …`).
        t.contains("⚠ plain: [p]") && t.contains("? ask: the dialog stayed after your answer")
    });
    ui.press("p");
    ui.wait_until_text("the task to complete", Duration::from_secs(30), |t| {
        t.contains("✔ plain")
    });
    assert_eq!(ui.quit(), 0, "{}", ui.text());
    let rules: Vec<String> = approvals(dir.path(), "plain")
        .into_iter()
        .map(|(by, rule, _)| format!("{by} {rule}"))
        .collect();
    assert_eq!(
        rules,
        ["operator continue", "operator No (Esc)", "operator always"],
        "no Enter was ever sent"
    );
}

#[test]
fn the_dialogs_own_keys_are_passed_to_it_and_recorded() {
    let dir = tempfile::tempdir().expect("temp dir");
    let tasks = tasks_file(dir.path(), &[("codex-y", "codex_approval")]);
    let mut ui = Dashboard::start(&tasks, Launch::size(ROWS, COLS));
    // Codex's `y` is the first option's own key; Enter picks the highlighted one.
    ui.wait_until_text("the Codex dialog's banner", Duration::from_secs(30), |t| {
        t.contains("⚠ codex-y: [1/y/Enter] Yes")
    });
    ui.press("7");
    ui.wait_until_text(
        "a key the dialog does not offer",
        Duration::from_secs(5),
        |t| t.contains("7 not sent: codex-y's dialog has no option 7"),
    );
    ui.holds_for("the dashboard runs", Duration::from_millis(1100), |_| true);
    ui.press("y");
    ui.wait_until_text("the answer sent", Duration::from_secs(5), |t| {
        t.contains("sent y (Yes) → codex-y")
    });
    ui.wait_until_text("the agent took it", Duration::from_secs(30), |t| {
        t.contains("Created created_by_agent.txt")
    });
    ui.quit();
    let recorded = approvals(dir.path(), "codex-y");
    assert_eq!(recorded.len(), 1, "{recorded:?}");
    assert_eq!(
        (recorded[0].0.as_str(), recorded[0].1.as_str()),
        ("operator", "y")
    );
    assert_eq!(recorded[0].2, "touch created_by_agent.txt");
}
