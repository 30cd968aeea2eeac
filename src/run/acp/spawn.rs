//! Starting the agent's side of a session: the policy the engine passed, and the threads that
//! move its output, exit, keys and stdin (a writer thread, so an agent that does not read cannot
//! block the client).

use std::io::{IsTerminal, Write};
use std::process::Child;
use std::sync::mpsc::{self, Sender};

use serde_json::Value;

use super::inbox::Event;
use super::lines::{self, AgentLine};
use super::terminal::describe_exit;
use crate::core::wire::acp::permission::PermissionPolicy;
use crate::run::jobs;

/// The guard's rules and switches the engine passed in `HERD_ACP_POLICY`, judged in `cwd`.
pub(super) fn policy(text: Option<&str>, cwd: &std::path::Path) -> PermissionPolicy {
    let value: Value = text
        .and_then(|t| serde_json::from_str(t).ok())
        .unwrap_or(Value::Null);
    let list = |key: &str| -> Vec<String> {
        value
            .get(key)
            .and_then(Value::as_array)
            .map(|l| {
                l.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default()
    };
    let switch = |key: &str| value.get(key).and_then(Value::as_bool) == Some(true);
    let compile = |l: &[String]| -> Vec<crate::core::guard::Rule> {
        l.iter()
            .filter_map(|r| crate::core::guard::Rule::parse(r).ok())
            .collect()
    };
    let rules = crate::core::guard::RuleSet {
        allow: compile(&list("allow")),
        ask: compile(&list("ask")),
        deny: compile(&list("deny")),
    };
    PermissionPolicy {
        guard: crate::core::approval::GuardSetup {
            rules,
            context: crate::run::guard_context::context_for(cwd),
        },
        auto_once: switch("auto_press_1"),
        auto_always: switch("auto_press_p"),
    }
}

/// How long the exit waits for the agent's last lines (the reason it gives up), without a
/// grandchild's open pipe holding it back.
const LAST_LINES_WAIT: std::time::Duration = std::time::Duration::from_secs(1);

pub(super) fn start_threads(mut child: Child, events: &Sender<Event>) -> Sender<Vec<u8>> {
    // Each reader says when its pipe is at its end, so the exit comes after the last lines.
    let (read_out, pipes_done) = mpsc::channel::<()>();
    let mut pipes = 0;
    if let Some(stdout) = child.stdout.take() {
        let (to_client, done) = (events.clone(), read_out.clone());
        pipes += 1;
        pump("acp-stdout", events, move || {
            lines::read_lines(stdout, lines::MAX_LINE_BYTES, |line| {
                to_client.send(Event::Line(line)).is_ok()
            });
            let _ = done.send(());
        });
    }
    if let Some(stderr) = child.stderr.take() {
        let (to_client, done) = (events.clone(), read_out.clone());
        pipes += 1;
        pump("acp-stderr", events, move || {
            lines::read_lines(stderr, 64 * 1024, |line| {
                let text = match line {
                    AgentLine::Line(text) => text,
                    AgentLine::Oversized { head, .. } => head,
                };
                to_client.send(Event::Stderr(text)).is_ok()
            });
            let _ = done.send(());
        });
    }
    drop(read_out);
    let (to_agent, writes) = mpsc::channel::<Vec<u8>>();
    if let Some(mut stdin) = child.stdin.take() {
        pump("acp-stdin", events, move || {
            for bytes in writes {
                if stdin
                    .write_all(&bytes)
                    .and_then(|()| stdin.flush())
                    .is_err()
                {
                    break;
                }
            }
        });
    }
    if std::io::stdin().is_terminal() {
        let keys = events.clone();
        pump("acp-keys", events, move || {
            let mut buf = [0u8; 1024];
            let mut stdin = std::io::stdin();
            while let Ok(n @ 1..) = std::io::Read::read(&mut stdin, &mut buf) {
                if keys.send(Event::Keys(buf[..n].to_vec())).is_err() {
                    break;
                }
            }
        });
    }
    let exits = events.clone();
    pump("acp-exit", events, move || {
        let how = match child.wait() {
            Ok(status) => describe_exit(status),
            Err(error) => format!("wait failed: {error}"),
        };
        let deadline = std::time::Instant::now() + LAST_LINES_WAIT;
        for _ in 0..pipes {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            if pipes_done.recv_timeout(left).is_err() {
                break;
            }
        }
        let _ = exits.send(Event::Exited(how));
    });
    to_agent
}

/// Runs one of the session's threads; one that cannot start ends the session.
fn pump(name: &str, events: &Sender<Event>, work: impl FnOnce() + Send + 'static) {
    if let Err(not) = jobs::spawn_thread(name, work) {
        let _ = events.send(Event::Exited(format!("herd could not go on: {not}")));
    }
}
