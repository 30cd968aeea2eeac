//! Helpers shared by the end-to-end tests: the real `herd` binary, readable failure output, and
//! the agent processes herd started (found by the `HERD_RUN_DIR` it gives every agent).
#![allow(dead_code, clippy::unwrap_used)]

use std::path::Path;
use std::process::{Command, Output};

pub fn herd() -> Command {
    Command::new(env!("CARGO_BIN_EXE_herd"))
}

/// Exit code, stdout and stderr of a finished command, for assertion messages.
pub fn describe(out: &Output) -> String {
    format!(
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// `pid: cmdline` of every process whose environment has `HERD_RUN_DIR` inside `dir`.
pub fn agents_under(dir: &Path) -> Vec<String> {
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
