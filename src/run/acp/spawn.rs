//! Starting the agent's side of a session: the permission policy the engine passed, and the
//! threads that move the agent's stdout, stderr and exit, the operator's keys, and herd's
//! writes to the agent's stdin (a writer thread, so an agent that does not read cannot block
//! the client).

use std::io::{IsTerminal, Write};
use std::process::Child;
use std::sync::mpsc::{self, Sender};

use serde_json::Value;

use super::inbox::Event;
use super::lines::{self, AgentLine};
use super::terminal::describe_exit;
use crate::core::acp::permission::PermissionPolicy;

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

/// How long the exit waits for the agent's last stdout and stderr lines once it has exited: a
/// line written just before the exit (the reason it gives up) is read before the exit is told,
/// while a pipe a surviving grandchild holds open does not hold the exit back.
const LAST_LINES_WAIT: std::time::Duration = std::time::Duration::from_secs(1);

pub(super) fn start_threads(mut child: Child, events: &Sender<Event>) -> Sender<Vec<u8>> {
    // Each reader says when its pipe is at its end, so the exit comes after the last lines.
    let (read_out, pipes_done) = mpsc::channel::<()>();
    let mut pipes = 0;
    if let Some(stdout) = child.stdout.take() {
        let (events, done) = (events.clone(), read_out.clone());
        pipes += 1;
        std::thread::spawn(move || {
            lines::read_lines(stdout, lines::MAX_LINE_BYTES, |line| {
                events.send(Event::Line(line)).is_ok()
            });
            let _ = done.send(());
        });
    }
    if let Some(stderr) = child.stderr.take() {
        let (events, done) = (events.clone(), read_out.clone());
        pipes += 1;
        std::thread::spawn(move || {
            lines::read_lines(stderr, 64 * 1024, |line| {
                let text = match line {
                    AgentLine::Line(text) => text,
                    AgentLine::Oversized { head, .. } => head,
                };
                events.send(Event::Stderr(text)).is_ok()
            });
            let _ = done.send(());
        });
    }
    drop(read_out);
    let (to_agent, writes) = mpsc::channel::<Vec<u8>>();
    if let Some(mut stdin) = child.stdin.take() {
        std::thread::spawn(move || {
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
        let events = events.clone();
        std::thread::spawn(move || {
            let mut buf = [0u8; 1024];
            let mut stdin = std::io::stdin();
            while let Ok(n @ 1..) = std::io::Read::read(&mut stdin, &mut buf) {
                if events.send(Event::Keys(buf[..n].to_vec())).is_err() {
                    break;
                }
            }
        });
    }
    let events = events.clone();
    std::thread::spawn(move || {
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
        let _ = events.send(Event::Exited(how));
    });
    to_agent
}
