//! `herd sim` as a process: built-in scenarios run with piped stdin and stdout, the way unit
//! tests and scripts use it (the PTY runs live in the end-to-end tests of `herd run`).

use std::io::Write;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

fn herd() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_herd"));
    command
        .env_remove("HERD_TASK_ID")
        .env_remove("HERD_ATTEMPT")
        .env_remove("HERD_COMPLETION_MARKER");
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
    // Give the children a moment to register their handlers.
    std::thread::sleep(Duration::from_millis(300));
    let before = processes_in_group(group_id);
    let _ = kill_process_group(group, Signal::TERM);
    std::thread::sleep(Duration::from_millis(300));
    let after = processes_in_group(group_id);
    let _ = kill_process_group(group, Signal::KILL);
    let _ = child.wait();
    assert_eq!(before.len(), 3, "parent and 2 children: {before:?}");
    assert_eq!(after, before, "TERM was ignored by all of them");
}
