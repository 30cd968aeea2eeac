//! Helpers shared by the end-to-end tests: the real `herd` binary, readable failure output, and
//! the agent processes herd started (found by the `HERD_RUN_DIR` it gives every agent), and the
//! dashboard driven in a pseudo-terminal ([`dashboard`]).
#![allow(dead_code, clippy::unwrap_used)]

pub(crate) mod dashboard;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The task `id` of a tasks document.
pub(crate) fn task<'a>(doc: &'a serde_json::Value, id: &str) -> &'a serde_json::Value {
    doc["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["task_id"] == id)
        .unwrap_or_else(|| panic!("no task {id}"))
}

pub(crate) fn herd() -> Command {
    Command::new(env!("CARGO_BIN_EXE_herd"))
}

/// Exit code, stdout and stderr of a finished command, for assertion messages.
pub(crate) fn describe(out: &Output) -> String {
    format!(
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// `pid: cmdline` of every process whose environment has `HERD_RUN_DIR` inside `dir`.
pub(crate) fn agents_under(dir: &Path) -> Vec<String> {
    let needle = format!("HERD_RUN_DIR={}/", dir.display());
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if !name.chars().all(|c| c.is_ascii_digit()) {
            continue;
        }
        let Ok(environ) = std::fs::read(entry.path().join("environ")) else {
            continue;
        };
        let environ = String::from_utf8_lossy(&environ);
        if environ.split('\0').any(|kv| kv.starts_with(&needle)) {
            let cmd = std::fs::read_to_string(entry.path().join("cmdline")).unwrap_or_default();
            found.push(format!("{name}: {}", cmd.replace('\0', " ")));
        }
    }
    found
}

/// claudeless: `$HERD_CLAUDELESS`, else on `PATH`, else `~/.cargo/bin/claudeless`. Missing is a
/// failure, never a skip: CI installs it, and a skip would hide a broken setup.
pub(crate) fn claudeless() -> PathBuf {
    const HOW: &str = "install it with `cargo install claudeless --locked` \
                       (or set HERD_CLAUDELESS=/path/to/claudeless)";
    if let Some(path) = std::env::var_os("HERD_CLAUDELESS").filter(|p| !p.is_empty()) {
        let path = PathBuf::from(path);
        assert!(
            path.is_file(),
            "HERD_CLAUDELESS={} is not a file; {HOW}",
            path.display()
        );
        return path;
    }
    let on_path = std::env::var_os("PATH")
        .map(|paths| std::env::split_paths(&paths).collect::<Vec<_>>())
        .unwrap_or_default()
        .into_iter()
        .map(|dir| dir.join("claudeless"));
    let in_cargo_home =
        std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo/bin/claudeless"));
    on_path
        .chain(in_cargo_home)
        .find(|p| p.is_file())
        .unwrap_or_else(|| {
            panic!(
                "claudeless (the Claude Code simulator) is not installed: not on PATH nor in \
                 ~/.cargo/bin; {HOW}"
            )
        })
}
