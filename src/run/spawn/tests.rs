//! The spawned child as the agent sees it: its own session, the terminal as its controlling
//! terminal and stdio, the task's folder and environment, default signals, no stray descriptors.

use std::io::Read;
use std::time::{Duration, Instant};

use portable_pty::{PtySize, native_pty_system};

use super::*;

/// Runs `script` under `/bin/sh -c` in a fresh terminal; returns its output and exit status.
fn run_in_terminal(script: &str, env: &[(&str, &str)], cwd: &Path) -> (String, ExitStatus) {
    let pty = native_pty_system()
        .openpty(PtySize {
            rows: 24,
            cols: 200,
            pixel_width: 0,
            pixel_height: 0,
        })
        .expect("openpty");
    let terminal = pty.master.tty_name().expect("tty name");
    let argv = vec!["/bin/sh".to_string(), "-c".to_string(), script.to_string()];
    let overrides: Vec<(String, String)> = env
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let pid = spawn_in_terminal(&SpawnRequest {
        program: Path::new("/bin/sh"),
        argv: &argv,
        cwd,
        env: agent_environment(overrides.iter().map(|(k, v)| (k, v))),
        terminal: &terminal,
    })
    .expect("spawn");
    drop(pty.slave);
    let mut reader = pty.master.try_clone_reader().expect("reader");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut all = Vec::new();
        let mut buf = [0u8; 4096];
        while let Ok(n) = reader.read(&mut buf) {
            if n == 0 {
                break;
            }
            all.extend_from_slice(&buf[..n]);
        }
        let _ = tx.send(all);
    });
    let status = wait_for_exit(pid);
    let deadline = Instant::now() + Duration::from_secs(10);
    let output = rx
        .recv_timeout(deadline.saturating_duration_since(Instant::now()))
        .expect("the terminal closes after the child exits");
    (String::from_utf8_lossy(&output).replace('\r', ""), status)
}

fn field<'a>(output: &'a str, name: &str) -> &'a str {
    output
        .lines()
        .find_map(|line| line.strip_prefix(&format!("{name}=")))
        .unwrap_or_else(|| panic!("no {name}= in output:\n{output}"))
        .trim()
}

#[test]
fn the_child_leads_its_own_session_with_the_terminal_as_controlling_terminal() {
    let script = "echo pid=$$; echo sid=$(ps -o sid= -p $$); echo pgid=$(ps -o pgid= -p $$); \
                  echo tty=$(tty); echo ctty=$(ps -o tty= -p $$); echo size=$(stty size)";
    let (out, status) = run_in_terminal(script, &[], Path::new("/"));
    assert!(status.success(), "{out}");
    let pid = field(&out, "pid");
    assert_eq!(field(&out, "sid"), pid, "{out}");
    assert_eq!(field(&out, "pgid"), pid, "{out}");
    let tty = field(&out, "tty");
    assert!(tty.starts_with("/dev/pts/"), "{out}");
    // ps names the controlling terminal without /dev/; "?" would mean none.
    assert_eq!(format!("/dev/{}", field(&out, "ctty")), tty, "{out}");
    assert_eq!(field(&out, "size"), "24 200", "{out}");
}

#[test]
fn the_child_gets_the_folder_and_environment_asked_for() {
    let folder = tempfile::tempdir().expect("tempdir");
    let (out, status) = run_in_terminal(
        "echo cwd=$(pwd -P); echo agent=$AGENT_VAR; echo shell=${SHELL:+set}",
        &[("AGENT_VAR", "from the plan")],
        folder.path(),
    );
    assert!(status.success(), "{out}");
    let expected = folder.path().canonicalize().expect("canonical");
    assert_eq!(field(&out, "cwd"), expected.display().to_string(), "{out}");
    assert_eq!(field(&out, "agent"), "from the plan", "{out}");
    assert_eq!(field(&out, "shell"), "set", "{out}");
}

#[test]
fn the_child_starts_with_default_signals_and_an_empty_mask() {
    // Rust ignores SIGPIPE in herd; an agent must not inherit that.
    let script = "echo ign=$(grep SigIgn /proc/$$/status | cut -f2); \
                  echo blk=$(grep SigBlk /proc/$$/status | cut -f2)";
    let (out, status) = run_in_terminal(script, &[], Path::new("/"));
    assert!(status.success(), "{out}");
    // The standard signals (1-31). glibc's spawn leaves its two internal real-time signals (32,
    // 33) ignored in the child; the C library installs its own handlers for them when it needs
    // them (thread cancellation, set*id), so the agent never sees the difference.
    let ignored = u64::from_str_radix(field(&out, "ign"), 16).expect("hex mask");
    assert_eq!(ignored & 0x7fff_ffff, 0, "{out}");
    assert_eq!(field(&out, "blk"), "0000000000000000", "{out}");
}

/// The descriptors child `pid` holds once it has exec'd `sleep` and sits in its sleep. Right
/// after the exec, `sleep` itself opens and closes files (the C library's locale archive), so
/// the list is read only while the process sleeps, and only when two reads 20 ms apart agree.
fn descriptors_once_asleep(pid: u32) -> Vec<u32> {
    let read_fds = || -> Vec<u32> {
        let mut fds: Vec<u32> = std::fs::read_dir(format!("/proc/{pid}/fd"))
            .expect("fd folder")
            .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse().ok())
            .collect();
        fds.sort_unstable();
        fds
    };
    let asleep = || {
        let exe = std::fs::read_link(format!("/proc/{pid}/exe")).unwrap_or_default();
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        // The state is the first field after the command name's closing parenthesis.
        let state = stat
            .rsplit_once(") ")
            .and_then(|(_, rest)| rest.chars().next());
        exe.ends_with("sleep") && state == Some('S')
    };
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut last: Option<Vec<u32>> = None;
    while Instant::now() < deadline {
        if asleep() {
            let fds = read_fds();
            if last.as_ref() == Some(&fds) && asleep() {
                return fds;
            }
            last = Some(fds);
        } else {
            last = None;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    panic!("child {pid} never settled into its sleep");
}

#[test]
fn the_child_inherits_no_descriptor_but_its_terminal() {
    let pty = native_pty_system()
        .openpty(PtySize::default())
        .expect("openpty");
    let terminal = pty.master.tty_name().expect("tty name");
    let argv = vec!["/bin/sleep".to_string(), "30".to_string()];
    let pid = spawn_in_terminal(&SpawnRequest {
        program: Path::new("/bin/sleep"),
        argv: &argv,
        cwd: Path::new("/"),
        env: agent_environment(std::iter::empty()),
        terminal: &terminal,
    })
    .expect("spawn");
    let fds = descriptors_once_asleep(pid);
    crate::run::pty::signal_group(pid, crate::core::attempt::StopSignal::Kill);
    let status = wait_for_exit(pid);
    assert_eq!(
        fds,
        vec![0, 1, 2],
        "herd's descriptors leaked into the agent"
    );
    assert_eq!(status.signal.as_deref(), Some("Killed"));
}

#[test]
fn exit_codes_and_signals_are_reported_as_such() {
    let (_, status) = run_in_terminal("exit 3", &[], Path::new("/"));
    assert_eq!((status.code, status.signal.as_deref()), (Some(3), None));
    let (_, status) = run_in_terminal("kill -TERM $$", &[], Path::new("/"));
    assert_eq!(
        (status.code, status.signal.as_deref()),
        (None, Some("Terminated"))
    );
}

#[test]
fn a_program_that_cannot_run_is_the_os_error() {
    let pty = native_pty_system()
        .openpty(PtySize::default())
        .expect("openpty");
    let terminal = pty.master.tty_name().expect("tty name");
    let argv = vec!["/nonexistent/agent".to_string()];
    let error = spawn_in_terminal(&SpawnRequest {
        program: Path::new("/nonexistent/agent"),
        argv: &argv,
        cwd: Path::new("/"),
        env: agent_environment(std::iter::empty()),
        terminal: &terminal,
    })
    .expect_err("no such program");
    assert_eq!(error.raw_os_error(), Some(libc::ENOENT), "{error}");
    let argv = vec!["a\0b".to_string()];
    let error = spawn_in_terminal(&SpawnRequest {
        program: Path::new("/bin/sh"),
        argv: &argv,
        cwd: Path::new("/"),
        env: Vec::new(),
        terminal: &terminal,
    })
    .expect_err("NUL in an argument");
    assert_eq!(error.kind(), io::ErrorKind::InvalidInput);
}
