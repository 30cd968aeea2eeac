//! Helpers shared by the end-to-end tests: the real `herd` binary, readable failure output, and
//! the agent processes herd started (found by the `HERD_RUN_DIR` it gives every agent), and the
//! dashboard driven in a pseudo-terminal ([`dashboard`]).
#![allow(dead_code, clippy::unwrap_used)]

pub(crate) mod dashboard;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// What `probe` finds, asked until it finds something (30 s at most, then the test fails
/// naming `what`).
pub(crate) fn wait_for<T>(what: &str, mut probe: impl FnMut() -> Option<T>) -> T {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        if let Some(found) = probe() {
            return found;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "timed out waiting for {what}"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

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

/// Whether this process may run a program as another user (only root can switch to `nobody`);
/// when it may not, says that `test` is skipped.
pub(crate) fn can_run_as_another_user(test: &str) -> bool {
    let root = rustix::process::getuid().is_root();
    if !root {
        println!("skipped {test}: only root can run herd as another user (nobody)");
    }
    root
}

/// A copy of the herd binary that any user may run, in a folder of its own (the build folder
/// may be closed to others: a clone kept in a 0700 folder). Keep the folder while the copy runs.
pub(crate) fn herd_for_any_user() -> (tempfile::TempDir, PathBuf) {
    use std::os::unix::fs::PermissionsExt;
    let folder = tempfile::tempdir().unwrap();
    let bin = folder.path().join("herd");
    std::fs::copy(env!("CARGO_BIN_EXE_herd"), &bin).unwrap();
    std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::set_permissions(folder.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    (folder, bin)
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
