//! Agents on other hosts through ssh, end to end: the real binary against real OpenSSH servers
//! on 127.0.0.1 (two "hosts" as two ports, see `sshd/`), with the built-in simulator as the
//! remote agent. Each test skips with a loud message only where sshd cannot run.

#![allow(clippy::unwrap_used)]
// The batch tests join these helpers once the engine runs attempts on hosts.
#![allow(dead_code, unused_imports)]

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
