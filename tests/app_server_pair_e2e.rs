//! `herd app-server-pair`, the launcher of a Codex attempt's own app server and TUI, with a
//! stand-in `codex` (a Python script: `app-server --listen unix://…` listens on the socket,
//! anything else is the TUI): the TUI starts only once the server listens, gets the TUI's
//! exit status, and the server does not outlive the TUI. The real pair is covered by the
//! conformance suite (`HERD_CONFORMANCE_ONLY=codex`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

const FAKE_CODEX: &str = r#"#!/usr/bin/env python3
import os, socket, sys, time
args = sys.argv[1:]
if args[:1] == ["app-server"]:
    if os.environ.get("FAKE_SERVER_FAILS"):
        print("no config", file=sys.stderr)
        sys.exit(4)
    path = args[2][len("unix://"):]
    time.sleep(0.3)  # the TUI must wait for this
    with open(os.path.join(os.path.dirname(path), "server.pid"), "w") as f:
        f.write(str(os.getpid()))
    s = socket.socket(socket.AF_UNIX)
    s.bind(path)
    s.listen(8)
    while True:
        conn, _ = s.accept()
        conn.close()
else:
    url = args[args.index("--remote") + 1]
    c = socket.socket(socket.AF_UNIX)
    c.connect(url[len("unix://"):])
    print("TUI connected to", url, "with", args[-1])
    sys.exit(3)
"#;

fn fake_codex(dir: &Path) -> std::path::PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join("codex");
    std::fs::write(&path, FAKE_CODEX).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

fn alive(pid: i32) -> bool {
    // A zombie is gone for our purpose; /proc/PID/stat's third field says.
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        stat.rsplit(')')
            .next()
            .is_some_and(|s| !s.trim_start().starts_with('Z'))
    })
}

#[test]
fn the_tui_runs_once_the_server_listens_and_the_server_goes_with_it() {
    let dir = tempfile::tempdir().unwrap();
    let codex = fake_codex(dir.path());
    let url = format!("unix://{}/codex.sock", dir.path().display());
    let out = Command::new(env!("CARGO_BIN_EXE_herd"))
        .args(["app-server-pair", "--listen", &url, "--"])
        .arg(&codex)
        .args(["--remote", &url, "the prompt"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(3),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains(&format!("TUI connected to {url} with the prompt")),
        "{stdout}"
    );
    let pid: i32 = std::fs::read_to_string(dir.path().join("server.pid"))
        .unwrap()
        .parse()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(5);
    while alive(pid) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(!alive(pid), "the app server {pid} outlived the TUI");
}

#[test]
fn a_server_that_ends_before_it_listens_is_reported_and_no_tui_starts() {
    let dir = tempfile::tempdir().unwrap();
    let codex = fake_codex(dir.path());
    let url = format!("unix://{}/codex.sock", dir.path().display());
    let out = Command::new(env!("CARGO_BIN_EXE_herd"))
        .args(["app-server-pair", "--listen", &url, "--"])
        .arg(&codex)
        .args(["--remote", &url, "the prompt"])
        .env("FAKE_SERVER_FAILS", "1")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("app-server ended") && stderr.contains("no config"),
        "{stderr}"
    );
    assert!(!String::from_utf8_lossy(&out.stdout).contains("TUI connected"));
}
