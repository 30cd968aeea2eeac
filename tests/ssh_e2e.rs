//! Agents on other hosts through ssh, end to end: the real binary against real OpenSSH servers
//! on 127.0.0.1 (two "hosts" as two ports, see `sshd/`), with the built-in simulator as the
//! remote agent. Each test skips with a loud message only where sshd cannot run.

#![allow(clippy::unwrap_used)]

use herd::run::clock::Now;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

mod common;
mod sshd;
use common::{describe, herd, task};
use sshd::{Keys, Sshd};

/// Two hosts in group "fleet", with herd's folder on their PATH (for `herd sim`).
struct Lab {
    dir: tempfile::TempDir,
    keys: Keys,
    hosts: Vec<Sshd>,
}

impl Lab {
    fn new(extra: &str) -> Option<Lab> {
        let dir = tempfile::tempdir().unwrap();
        let keys = Keys::new(dir.path())?;
        let mut hosts = Vec::new();
        for name in ["box1", "box2"] {
            hosts.push(Sshd::start(&keys, name)?);
        }
        let lab = Lab { dir, keys, hosts };
        lab.write_hosts(extra, "");
        Some(lab)
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    fn write_hosts(&self, extra: &str, more: &str) -> PathBuf {
        let herd_dir = Path::new(env!("CARGO_BIN_EXE_herd")).parent().unwrap();
        let common = format!(
            "groups = [\"fleet\"]\nenv = {{ PATH = \"{}:/usr/local/bin:/usr/bin:/bin\" }}\n{extra}",
            herd_dir.display()
        );
        let mut text: String = self
            .hosts
            .iter()
            .map(|h| h.host_entry(&self.keys, &common))
            .collect();
        text.push_str(more);
        let path = self.path().join("hosts.toml");
        std::fs::write(&path, text).unwrap();
        path
    }

    /// A sim task on `host` (a host or "fleet"), marked so its remote processes can be found.
    fn task(&self, id: &str, scenario: &str, host: &str, extra: &str) -> String {
        format!(
            r#"{{"task_id": "{id}", "agent": "sim", "host": "{host}", "cwd": "{cwd}",
  "inputs": {{"scenario": "{scenario}"}}, "env": {{"SSH_E2E_DIR": "{cwd}"}},
  "prompt_template": "Do {{task_id}}, then print {{completion_marker}}"{extra}}}"#,
            cwd = self.path().display()
        )
    }

    fn write_tasks(&self, tasks: &[String]) -> PathBuf {
        let path = self.path().join("tasks.json");
        std::fs::write(
            &path,
            format!(
                "{{\"run_id\": \"ssh\", \"tasks\": [\n{}\n]}}\n",
                tasks.join(",\n")
            ),
        )
        .unwrap();
        path
    }

    fn run(&self, tasks: &Path, args: &[&str]) -> Command {
        let mut cmd = herd();
        cmd.args(["run", "--headless", "--tasks"])
            .arg(tasks)
            .arg("--hosts")
            .arg(self.path().join("hosts.toml"))
            .args(args);
        cmd
    }

    /// Processes (on any "host") that carry this lab's marker: (pid, HERD_HOST, cmdline).
    fn remote_processes(&self) -> Vec<(u32, String, String)> {
        let needle = format!("SSH_E2E_DIR={}", self.path().display());
        let mut found = Vec::new();
        for entry in std::fs::read_dir("/proc").unwrap().flatten() {
            let Some(pid) = entry
                .file_name()
                .to_str()
                .and_then(|s| s.parse::<u32>().ok())
            else {
                continue;
            };
            let Ok(environ) = std::fs::read(entry.path().join("environ")) else {
                continue;
            };
            let vars: Vec<&[u8]> = environ.split(|b| *b == 0).collect();
            if !vars.contains(&needle.as_bytes()) {
                continue;
            }
            let host = vars
                .iter()
                .find_map(|v| v.strip_prefix(b"HERD_HOST="))
                .map(|h| String::from_utf8_lossy(h).into_owned())
                .unwrap_or_default();
            let cmd = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
            found.push((pid, host, String::from_utf8_lossy(&cmd).replace('\0', " ")));
        }
        found
    }
}

impl Drop for Lab {
    fn drop(&mut self) {
        for (pid, _, _) in self.remote_processes() {
            let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
        }
    }
}

fn read_doc(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn wait_until(
    what: &str,
    limit: Duration,
    mut done: impl FnMut() -> bool,
    seen: impl Fn() -> String,
) {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        if done() {
            return;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    panic!("waited {limit:?} for {what}; saw:\n{}", seen());
}

fn scenario(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(format!("{name}.toml"));
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

#[test]
fn hosts_check_prints_a_table_of_reachable_hosts_and_their_programs() {
    let Some(lab) = Lab::new("") else { return };
    let closed = sshd::free_port();
    let hosts = lab.write_hosts(
        "",
        &format!(
            "[hosts.down]\nssh = \"nobody@127.0.0.1\"\nport = {closed}\nssh_config = \"/dev/null\"\n"
        ),
    );
    let out = herd()
        .args(["hosts", "check", "--hosts"])
        .arg(&hosts)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    println!("{stdout}");
    assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
    let line = |name: &str| {
        stdout
            .lines()
            .find(|l| l.starts_with(name))
            .unwrap_or_else(|| panic!("no row for {name}: {stdout}"))
            .to_string()
    };
    for name in ["box1", "box2"] {
        let row = line(name);
        assert!(row.contains(" yes "), "{row}");
        assert!(row.contains("herd"), "herd is on the host's PATH: {row}");
    }
    let row = line("down");
    assert!(row.contains(" no "), "{row}");
    assert!(row.contains("Connection refused"), "{row}");
}

#[test]
fn validate_names_unknown_hosts() {
    let Some(lab) = Lab::new("") else { return };
    let tasks = lab.write_tasks(&[
        lab.task("a", "success", "fleet", ""),
        lab.task("b", "success", "box9", ""),
    ]);
    let out = herd()
        .args(["validate", "--tasks"])
        .arg(&tasks)
        .arg("--hosts")
        .arg(lab.path().join("hosts.toml"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
    assert!(
        stderr.contains(
            "task \"b\": host \"box9\" is not a known host or group; use one of box1, box2, fleet"
        ),
        "{stderr}"
    );
    assert!(!stderr.contains("task \"a\""), "{stderr}");
}
#[test]
fn a_batch_spreads_over_two_hosts_answers_prompts_there_and_replays() {
    let Some(lab) = Lab::new("max_agents = 2\n") else {
        return;
    };
    let mut tasks: Vec<String> = (0..5)
        .map(|i| lab.task(&format!("t{i}"), "success", "fleet", ""))
        .collect();
    tasks.push(lab.task(
        "ask",
        "permission",
        "box2",
        r#", "permission_policy": {"auto_press_1": true}"#,
    ));
    let path = lab.write_tasks(&tasks);
    let started = Instant::now();
    let out = lab.run(&path, &["--concurrency", "4"]).output().unwrap();
    let took = started.elapsed();
    let doc = read_doc(&path);
    assert_eq!(out.status.code(), Some(0), "{}\n{doc:#}", describe(&out));
    let mut per_host = std::collections::BTreeMap::new();
    for t in doc["tasks"].as_array().unwrap() {
        assert_eq!(t["status"], "completed", "{t:#}");
        *per_host
            .entry(t["ran_on"].as_str().unwrap_or("?").to_string())
            .or_insert(0) += 1;
    }
    println!("6 tasks over two ssh hosts in {took:?}: {per_host:?}");
    assert!(
        per_host.get("box1").is_some_and(|n| *n >= 2),
        "{per_host:?}"
    );
    assert!(
        per_host.get("box2").is_some_and(|n| *n >= 2),
        "{per_host:?}"
    );
    // The remote agent's dialog was answered through ssh (without the answer it ends idle
    // without the marker, not completed).
    let ask = task(&doc, "ask");
    assert_eq!(ask["ran_on"], "box2", "{ask:#}");
    let answers = ask["result"]["auto_inputs"].as_array().unwrap();
    assert!(answers.iter().any(|a| a["count"] == 1), "{ask:#}");
    // The recording replays like a local one.
    let replay = herd()
        .args(["replay", "--print"])
        .arg(lab.path().join("runs/t0"))
        .output()
        .unwrap();
    let screen = String::from_utf8_lossy(&replay.stdout);
    assert!(screen.contains("TASK_COMPLETE:t0"), "{}", describe(&replay));
    assert!(
        lab.remote_processes().is_empty(),
        "{:#?}",
        lab.remote_processes()
    );
}

#[test]
fn a_timeout_leaves_no_remote_process() {
    let Some(lab) = Lab::new("") else { return };
    let path = lab.write_tasks(&[lab.task(
        "hang",
        "hang_ignore_term",
        "box1",
        r#", "timeout_sec": 20, "max_retries": 0"#,
    )]);
    let child = lab
        .run(&path, &[])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The agent and its two TERM-ignoring workers run on the host before the timeout (20 s from
    // the attempt's start: room for herd, ssh and the remote shell on a loaded machine). Waited
    // for past it: were the timeout to come first, they would never all be there.
    wait_until(
        "the agent and its workers on box1",
        Duration::from_secs(60),
        || lab.remote_processes().len() >= 3,
        || format!("{:#?}", lab.remote_processes()),
    );
    let out = child.wait_with_output().unwrap();
    let doc = read_doc(&path);
    assert_eq!(out.status.code(), Some(1), "{}\n{doc:#}", describe(&out));
    let t = task(&doc, "hang");
    assert_eq!(t["result"]["failure_type"], "failed_timeout", "{t:#}");
    assert!(
        lab.remote_processes().is_empty(),
        "{:#?}",
        lab.remote_processes()
    );
    let facts: Value = serde_json::from_str(
        &std::fs::read_to_string(lab.path().join("runs/hang/attempt_1.json")).unwrap(),
    )
    .unwrap();
    let ended = facts["ended_processes"].as_array().unwrap();
    assert!(
        ended
            .iter()
            .any(|p| p["argv"][0] == "box1:" && p["signal"] == "KILL"),
        "the TERM-ignoring remote processes were killed on the host: {ended:#?}"
    );
}

#[test]
fn a_host_that_goes_away_mid_run_loses_no_task() {
    let Some(mut lab) = Lab::new("max_agents = 2\n") else {
        return;
    };
    let tasks: Vec<String> = (0..4)
        .map(|i| {
            lab.task(
                &format!("s{i}"),
                "demo_slow",
                "fleet",
                r#", "max_retries": 0"#,
            )
        })
        .collect();
    let path = lab.write_tasks(&tasks);
    let mut child = lab
        .run(&path, &["--concurrency", "4"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_until(
        "two agents on box1",
        Duration::from_secs(60),
        || {
            lab.remote_processes()
                .iter()
                .filter(|(_, h, c)| h == "box1" && c.contains(" sim "))
                .count()
                >= 2
        },
        || format!("{:#?}", lab.remote_processes()),
    );
    let stopped_at = Instant::now();
    lab.hosts[0].stop();
    let status = wait_child(&mut child, Duration::from_secs(120));
    let out = child.wait_with_output().unwrap();
    let doc = read_doc(&path);
    println!(
        "box1 stopped; the run ended {:?} later",
        stopped_at.elapsed()
    );
    assert_eq!(status, Some(0), "{}\n{doc:#}", describe(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("box1"),
        "the host's trouble is said: {stdout}"
    );
    for t in doc["tasks"].as_array().unwrap() {
        assert_eq!(t["status"], "completed", "{t:#}");
    }
    let moved: Vec<&Value> = doc["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["result"]["host"] == "box2")
        .collect();
    assert_eq!(moved.len(), 4, "every task finished on box2: {doc:#}");
    assert!(
        lab.remote_processes().is_empty(),
        "{:#?}",
        lab.remote_processes()
    );
}

fn wait_child(child: &mut std::process::Child, limit: Duration) -> Option<i32> {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        if let Some(status) = child.try_wait().unwrap() {
            return status.code();
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let _ = child.kill();
    panic!("herd did not finish within {limit:?}");
}

#[test]
fn the_next_herd_ends_the_remote_agents_of_a_killed_one() {
    let Some(lab) = Lab::new("") else { return };
    let stubborn = scenario(
        lab.path(),
        "stubborn",
        r#"description = "attempt 1 ignores every signal and hangs; later attempts finish"
[[step]]
when_attempt_below = 2
ignore_signals = true
[[step]]
when_attempt_below = 2
line = "working"
[[step]]
when_attempt_below = 2
hang = true
[[step]]
echo = "claude"
[[step]]
marker = "claude"
[[step]]
idle = "claude"
"#,
    );
    let path = lab.write_tasks(&[lab.task("k", &stubborn, "box1", "")]);
    let mut first = lab.run(&path, &[]).stdout(Stdio::null()).spawn().unwrap();
    wait_until(
        "the remote agent to run",
        Duration::from_secs(60),
        || {
            lab.remote_processes()
                .iter()
                .any(|(_, _, c)| c.contains(" sim "))
        },
        || format!("{:#?}", lab.remote_processes()),
    );
    // Past its ignore_signals step: the agent has printed the line after it.
    let log = lab.path().join("runs/k/attempt_1.log");
    wait_until(
        "the remote agent to ignore signals",
        Duration::from_secs(30),
        || std::fs::read_to_string(&log).is_ok_and(|l| l.contains("working")),
        || std::fs::read_to_string(&log).unwrap_or_default(),
    );
    first.kill().unwrap();
    first.wait().unwrap();
    let survivors: Vec<u32> = lab.remote_processes().iter().map(|(p, _, _)| *p).collect();
    assert!(
        !survivors.is_empty(),
        "the agent ignores SIGHUP: it outlives herd and its ssh"
    );
    let out = lab.run(&path, &[]).output().unwrap();
    let doc = read_doc(&path);
    assert_eq!(out.status.code(), Some(0), "{}\n{doc:#}", describe(&out));
    for pid in &survivors {
        assert!(
            !Path::new(&format!("/proc/{pid}")).exists()
                || std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| s
                    .rsplit(')')
                    .next()
                    .unwrap()
                    .trim_start()
                    .starts_with('Z')),
            "survivor {pid} still runs"
        );
    }
    let t = task(&doc, "k");
    assert_eq!(t["status"], "completed", "{t:#}");
    let ended = t["result"]["survivors_ended"].as_array().unwrap();
    assert!(
        ended.iter().any(|p| p["argv"][0] == "box1:"),
        "the record says what was ended on box1: {ended:#?}"
    );
    assert!(
        lab.remote_processes().is_empty(),
        "{:#?}",
        lab.remote_processes()
    );
}

#[test]
fn ctrl_c_ends_the_agents_on_every_host() {
    let Some(lab) = Lab::new("") else { return };
    let tasks: Vec<String> = (0..2)
        .map(|i| lab.task(&format!("h{i}"), "hang_ignore_term", "fleet", ""))
        .collect();
    let path = lab.write_tasks(&tasks);
    let child = lab
        .run(&path, &[])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_until(
        "an agent and its children on each host",
        Duration::from_secs(60),
        || {
            let seen = lab.remote_processes();
            ["box1", "box2"]
                .iter()
                .all(|h| seen.iter().filter(|(_, host, _)| host == h).count() >= 3)
        },
        || format!("{:#?}", lab.remote_processes()),
    );
    let interrupted = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(interrupted.success());
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "{}", describe(&out));
    assert!(
        lab.remote_processes().is_empty(),
        "{:#?}",
        lab.remote_processes()
    );
    let doc = read_doc(&path);
    for t in doc["tasks"].as_array().unwrap() {
        assert_eq!(t["status"], "retryable", "{t:#}");
    }
}

/// The remote agent's terminal follows the pane: a resize of the local terminal reaches it as
/// ssh's window-change (engine level, the way the dashboard resizes a pane).
#[test]
fn a_resize_reaches_the_remote_terminal() {
    use herd::core::attempt::Event;
    use herd::run::engine::{Engine, EngineOptions};
    let Some(lab) = Lab::new("") else { return };
    let agent = "stty size; trap 'stty size' WINCH; while :; do sleep 0.1; done";
    let tasks = lab.write_tasks(&[format!(
        r#"{{"task_id": "r", "agent": "generic", "host": "box1", "cwd": "{cwd}",
  "command": ["sh", "-c", {agent}], "prompt_template": "p", "timeout_sec": 60,
  "env": {{"SSH_E2E_DIR": "{cwd}"}}}}"#,
        cwd = lab.path().display(),
        agent = serde_json::to_string(agent).unwrap(),
    )]);
    let hosts_text = std::fs::read_to_string(lab.path().join("hosts.toml")).unwrap();
    let opts = EngineOptions {
        concurrency: 1,
        rows: 40,
        cols: 120,
        runs_dir: lab.path().join("runs"),
        only: Vec::new(),
        operator_present: true,
        hosts: herd::core::remote::hosts::HostSet::parse(&hosts_text).unwrap(),
        record_input: false,
    };
    let store = herd::run::store::TaskStore::open(&tasks).unwrap();
    let profiles =
        herd::core::profile::ProfileSet::build(&herd::assets::built_in_profile_texts(), None)
            .unwrap();
    let (tx, mut reports) = tokio::sync::mpsc::channel(64);
    let mut engine = Engine::new(store, profiles, opts, tx, Now::read()).unwrap();
    engine.fill_slots(Now::read()).unwrap();
    let mut feed_until = |engine: &mut Engine, what: &str| {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let text = engine
                .view()
                .live_attempt(0)
                .map(|l| l.attempt().screen().text())
                .unwrap_or_default();
            if text.contains(what) {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "no {what:?} on the screen:\n{text}"
            );
            match reports.try_recv() {
                Ok(report) => engine.on_report(report, Now::read()).unwrap(),
                Err(_) => std::thread::sleep(Duration::from_millis(20)),
            }
        }
    };
    feed_until(&mut engine, "40 120");
    assert_eq!(engine.view().live_attempt(0).unwrap().host(), Some("box1"));
    engine
        .send_to_task(
            0,
            Event::Resize {
                rows: 30,
                cols: 100,
            },
            Now::read(),
        )
        .unwrap();
    feed_until(&mut engine, "30 100");
    engine.kill_all();
    assert!(
        lab.remote_processes().is_empty(),
        "{:#?}",
        lab.remote_processes()
    );
}

/// An agent that ignores SIGHUP outlives a connection that went away; the host cannot be swept
/// then. It is ended once the host is back: here by the next herd, which sweeps the hosts its
/// tasks had trouble with before anything starts.
#[test]
fn what_a_lost_host_kept_running_is_ended_when_it_is_back() {
    let Some(mut lab) = Lab::new("max_agents = 1\n") else {
        return;
    };
    let agent = r#"if [ "$HERD_HOST" = box1 ]; then trap '' HUP; sleep 600; fi; sleep 2; echo "TASK_COMPLETE:$1""#;
    let tasks: Vec<String> = (0..2)
        .map(|i| {
            format!(
                r#"{{"task_id": "g{i}", "agent": "generic", "host": "fleet", "cwd": "{cwd}",
  "command": ["sh", "-c", {agent}, "agent", "g{i}"], "prompt_template": "p",
  "env": {{"SSH_E2E_DIR": "{cwd}"}}}}"#,
                cwd = lab.path().display(),
                agent = serde_json::to_string(agent).unwrap(),
            )
        })
        .collect();
    let path = lab.write_tasks(&tasks);
    let mut child = lab
        .run(&path, &["--concurrency", "2"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_until(
        "the agent on box1",
        Duration::from_secs(60),
        || {
            lab.remote_processes()
                .iter()
                .any(|(_, h, c)| h == "box1" && c.contains("sleep 600"))
        },
        || format!("{:#?}", lab.remote_processes()),
    );
    lab.hosts[0].stop();
    let status = wait_child(&mut child, Duration::from_secs(120));
    let out = child.wait_with_output().unwrap();
    let doc = read_doc(&path);
    assert_eq!(status, Some(0), "{}\n{doc:#}", describe(&out));
    let left: Vec<u32> = lab
        .remote_processes()
        .iter()
        .filter(|(_, h, _)| h == "box1")
        .map(|(p, _, _)| *p)
        .collect();
    assert!(
        !left.is_empty(),
        "the SIGHUP-ignoring agent outlived its connection"
    );
    let moved = doc["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["lost_on"] == "box1")
        .unwrap_or_else(|| panic!("a task says box1 was lost while it ran there: {doc:#}"));
    assert_eq!(moved["ran_on"], "box2", "{moved:#}");
    assert_eq!(moved["status"], "completed", "{moved:#}");
    assert_eq!(
        moved["attempts"], 1,
        "the lost attempt was not counted: {moved:#}"
    );
    let id = moved["task_id"].as_str().unwrap().to_string();
    assert!(
        lab.path().read_dir().is_ok()
            && std::fs::read_dir(lab.path().join("runs").join(&id))
                .unwrap()
                .flatten()
                .any(|e| e.file_name().to_string_lossy().contains(".host-lost-")),
        "the lost attempt's recording is kept"
    );
    assert!(lab.hosts[0].restart(), "box1 is back");
    let out = lab.run(&path, &[]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    assert!(
        lab.remote_processes().is_empty(),
        "{:#?}",
        lab.remote_processes()
    );
    let doc = read_doc(&path);
    let t = task(&doc, &id);
    assert!(
        t.get("lost_on").is_none(),
        "swept, so no longer noted: {t:#}"
    );
    let ended = t["result"]["survivors_ended"].as_array().unwrap();
    assert!(ended.iter().any(|p| p["argv"][0] == "box1:"), "{ended:#?}");
}
