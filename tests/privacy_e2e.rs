//! End to end: the real `herd run` binary with its dashboard in a pseudo-terminal. The agent asks
//! for a password at a prompt that does not echo (`stty -echo; read`); the operator takes it over
//! (`i`), types the password and Enter, gives the keyboard back (Ctrl-]) and the task completes.
//! The password is nowhere under `runs/` (only a count of keys is, as a marker that `herd explain`
//! and `herd replay` read), and nothing under `runs/` has group or other access. With
//! `--record-input` the keys are recorded, as asked.

// Test code: a failed `expect` is the test failing, with its message.
#![allow(clippy::expect_used, clippy::unwrap_used)]

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

mod common;
use common::dashboard::{Dashboard, Launch};
use common::{describe, herd};

const ROWS: u16 = 40;
const COLS: u16 = 120;
const PASSWORD: &str = "hunter2-Secret";

/// An agent that reads a password without echo and says only how long it was.
const TASKS: &str = r#"{"tasks": [{"task_id": "pw", "agent": "generic", "prompt_template": "x",
  "timeout_sec": 120,
  "command": ["sh", "-c", "printf 'Password: '; stty -echo; read p; stty echo; echo; echo \"got ${{#p}} characters\"; echo TASK_COMPLETE:$HERD_TASK_ID"]}]}
"#;

/// Takes the task over, types the password one key at a time, gives the keyboard back, and
/// waits for the run to end; returns the runs folder.
fn type_the_password(dir: &Path, extra: &[&str]) -> PathBuf {
    let tasks = dir.join("tasks.json");
    std::fs::write(&tasks, TASKS).expect("write tasks");
    let mut ui = Dashboard::start(
        &tasks,
        Launch {
            args: extra,
            ..Launch::size(ROWS, COLS)
        },
    );
    ui.wait_for("Password:", Duration::from_secs(30));
    ui.press("i");
    ui.wait_for("leave take-over", Duration::from_secs(10));
    for key in PASSWORD.chars() {
        ui.press(&key.to_string());
    }
    ui.press("\r");
    ui.wait_for(
        &format!("got {} characters", PASSWORD.len()),
        Duration::from_secs(30),
    );
    ui.press("\x1d");
    ui.wait_for("✔ pw", Duration::from_secs(30));
    ui.press("q");
    let code = ui.wait_for_exit(Duration::from_secs(20));
    assert_eq!(code, 0, "{}", ui.text());
    dir.join("runs")
}

/// Every file and folder under `dir`, `dir` itself included.
fn everything_under(dir: &Path) -> Vec<PathBuf> {
    let mut found = vec![dir.to_path_buf()];
    let mut i = 0;
    while i < found.len() {
        if found[i].is_dir() {
            for entry in std::fs::read_dir(&found[i]).expect("list") {
                found.push(entry.expect("entry").path());
            }
        }
        i += 1;
    }
    found
}

fn holds(path: &Path, text: &str) -> bool {
    path.is_file()
        && std::fs::read(path)
            .expect("read")
            .windows(text.len())
            .any(|w| w == text.as_bytes())
}

#[test]
fn a_password_typed_in_take_over_is_nowhere_under_runs_and_runs_is_private() {
    let dir = tempfile::tempdir().expect("temp dir");
    let runs = type_the_password(dir.path(), &[]);
    let everything = everything_under(&runs);
    assert!(everything.len() >= 5, "{everything:#?}");
    for path in &everything {
        assert!(
            !holds(path, PASSWORD),
            "{} holds the password",
            path.display()
        );
        // Not even spread over "i" events one key at a time.
        assert!(
            !holds(path, r#""i","h"]"#),
            "{} holds a key",
            path.display()
        );
        let mode = std::fs::symlink_metadata(path)
            .expect("meta")
            .permissions()
            .mode();
        assert_eq!(mode & 0o077, 0, "{} is {:o}", path.display(), mode & 0o777);
    }
    let cast = std::fs::read_to_string(runs.join("pw/attempt_1.cast")).expect("cast");
    let keys = PASSWORD.len() + 1;
    assert!(
        cast.contains(&format!(
            "\"operator typed {keys} keys ({keys} bytes) from "
        )),
        "{cast}"
    );

    // What herd explain and herd replay make of it.
    let explain = herd()
        .arg("explain")
        .arg(runs.join("pw"))
        .output()
        .expect("explain");
    let text = String::from_utf8_lossy(&explain.stdout);
    assert!(explain.status.success(), "{}", describe(&explain));
    assert!(
        text.lines()
            .any(|l| l.contains("typed") && l.contains(&format!("operator typed {keys} keys"))),
        "{text}"
    );
    let replay = herd()
        .args(["replay", "--print"])
        .arg(runs.join("pw"))
        .output()
        .expect("replay");
    assert!(replay.status.success(), "{}", describe(&replay));
    let screen = String::from_utf8_lossy(&replay.stdout);
    assert!(
        screen.contains(&format!("got {} characters", PASSWORD.len())),
        "{screen}"
    );
}

#[test]
fn record_input_records_the_keys_as_asked() {
    let dir = tempfile::tempdir().expect("temp dir");
    let runs = type_the_password(dir.path(), &["--record-input"]);
    let cast = std::fs::read_to_string(runs.join("pw/attempt_1.cast")).expect("cast");
    let typed: String = cast
        .lines()
        .skip(1)
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|e| e[1] == "i")
        .filter_map(|e| e[2].as_str().map(str::to_string))
        .collect();
    assert!(typed.starts_with(PASSWORD), "{cast}");
    assert!(!cast.contains("operator typed"), "{cast}");
}
