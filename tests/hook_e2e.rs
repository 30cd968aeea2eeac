//! `herd hook`, the command Claude Code runs for each of herd's hooks: it passes the hook's
//! input to the running herd over the attempt's socket with the attempt's token and prints the
//! answer; without a herd to ask it prints no decision (`{}`) and exits 0, so the CLI goes on
//! as without the hook.
#![allow(clippy::unwrap_used)]

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixListener;
use std::process::{Command, Stdio};

fn run_hook(env: &[(&str, &str)], input: &str) -> (String, i32) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_herd"))
        .arg("hook")
        .env_remove("HERD_HOOK_SOCKET")
        .env_remove("HERD_HOOK_TOKEN")
        .envs(env.iter().copied())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        out.status.code().unwrap_or(-1),
    )
}

const INPUT: &str =
    r#"{"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": "ls"}}"#;

#[test]
fn without_a_herd_to_ask_it_gives_no_decision() {
    assert_eq!(run_hook(&[], INPUT), ("{}".to_string(), 0));
    let gone = [
        ("HERD_HOOK_SOCKET", "/nonexistent/hook.sock"),
        ("HERD_HOOK_TOKEN", "t"),
    ];
    assert_eq!(run_hook(&gone, INPUT), ("{}".to_string(), 0));
}

#[test]
fn it_relays_the_call_with_the_token_and_prints_the_answer() {
    let dir = tempfile::tempdir().unwrap();
    let socket = dir.path().join("hook.sock");
    let listener = UnixListener::bind(&socket).unwrap();
    let server = std::thread::spawn(move || {
        let (stream, _) = listener.accept().unwrap();
        let mut line = String::new();
        BufReader::new(&stream).read_line(&mut line).unwrap();
        let answer = r#"{"hookSpecificOutput": {"permissionDecision": "deny"}}"#;
        (&stream).write_all(answer.as_bytes()).unwrap();
        line
    });
    let socket_text = socket.display().to_string();
    let env = [
        ("HERD_HOOK_SOCKET", socket_text.as_str()),
        ("HERD_HOOK_TOKEN", "the-token"),
    ];
    let (out, code) = run_hook(&env, INPUT);
    assert_eq!(code, 0);
    assert_eq!(
        out,
        r#"{"hookSpecificOutput": {"permissionDecision": "deny"}}"#
    );
    let call: serde_json::Value = serde_json::from_str(&server.join().unwrap()).unwrap();
    assert_eq!(call["token"], "the-token");
    assert_eq!(call["input"]["tool_input"]["command"], "ls");
}
