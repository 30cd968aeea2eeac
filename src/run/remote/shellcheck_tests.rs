//! `shellcheck` on every shell program herd runs on a host, as herd writes it: each script of
//! `core::remote` rendered with awkward values (quotes, spaces, `$`) in every branch, and every
//! file of `src/core/remote/scripts/` shown to be part of at least one of them. Skipped, and
//! said so, when `shellcheck` is not installed (`.ci/run` installs it).

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use crate::core::remote::files::{
    RemoteEnd, RemotePrepare, RemoteRead, RemoteTranscript, RolloutSearch, end_script,
    follow_script, prepare_script, read_script,
};
use crate::core::remote::script::{
    RemoteLaunch, SweepScope, launch_script, probe_script, sweep_script,
};

/// Findings left alone, each on purpose:
/// - SC2034 (a variable set but not used): the scripts are put together from pieces, and a
///   variable one piece sets (`stamp`, `cwd`) is read only by another that may be left out.
/// - SC2016 (no expansion in single quotes): the preamble's `trap 'rm -rf "$t"' EXIT` expands
///   `$t` when the trap runs.
/// - SC2086 (unquoted variable): the sweep splits its list of `/proc/PID/environ` files.
/// - SC2140 (`"A"B"C"`): the worktree error message holds the quoted branch name inside it.
const EXCLUDED: &str = "SC2034,SC2016,SC2086,SC2140";

fn samples() -> Vec<(String, String)> {
    let mut out = Vec::new();
    let clear = vec!["attempt_1.signal.json".to_string(), "it's.log".to_string()];
    for worktree in [None, Some("t1")] {
        let script = prepare_script(&RemotePrepare {
            cwd: "/srv/it's here $x",
            run_dir: ".herd/runs/ab/t1",
            clear: &clear,
            stamp: "attempt_1.start",
            worktree,
            host: "box$1'\"`",
        });
        out.push((format!("prepare (worktree {worktree:?})"), script));
    }
    let search = RolloutSearch {
        codex_home: Some("/c h"),
        stamp: "/s t",
        cwd: "/w'd",
    };
    let default_home = RolloutSearch {
        codex_home: None,
        ..search
    };
    let reads = [
        (Some("/h/s ig.json"), Some(("/h/x y.log", 12)), None),
        (None, None, Some(search)),
        (Some("/a"), None, Some(default_home)),
    ];
    for (i, (signal, log, rollouts)) in reads.into_iter().enumerate() {
        let read = RemoteRead {
            signal,
            log,
            signal_max: 1024,
            log_max: 4096,
            rollouts,
        };
        out.push((format!("read {i}"), read_script(&read)));
        out.push((format!("follow {i}"), follow_script(&read, 3)));
    }
    let fetch = vec!["acp client.log".to_string()];
    let ends = [(None, Some("abc-1"), true), (Some("/cfg dir"), None, false)];
    for (i, (config_dir, session, flags)) in ends.into_iter().enumerate() {
        let end = end_script(&RemoteEnd {
            cwd: "/w x",
            git_status: flags,
            transcript: Some(RemoteTranscript {
                config_dir,
                project: "-w-x".into(),
                session,
                max_bytes: 100,
            }),
            finish_worktree: flags,
            run_dir: ".herd/runs/ab/t1",
            remove: &clear,
            fetch: &fetch,
            fetch_max: 10,
            stamp: "attempt_1.start",
        });
        out.push((format!("end {i}"), end));
    }
    out.push((
        "sweep (file)".into(),
        sweep_script(SweepScope::File("0123abcd"), 2),
    ));
    let attempt = SweepScope::Attempt("0123abcd.1.ff.t-1");
    out.push(("sweep (attempt)".into(), sweep_script(attempt, 5)));
    out.push(("probe".into(), probe_script(&["claude", "it's"])));
    let argv = ["herd".to_string(), "sim".into(), "it's ok".into()];
    let env = BTreeMap::from([("API_KEY".to_string(), "s3cr'et $x".to_string())]);
    let launch = launch_script(&RemoteLaunch {
        argv: &argv,
        cwd: "/srv/my repo",
        env: &env,
        cookie: "abc.1.ff.t1",
        host: "box1",
    });
    out.push(("launch".into(), launch));
    out
}

/// Every file of `scripts/` is in some sample: its first line, up to its first hole.
#[test]
fn the_samples_hold_every_script_file_and_no_hole_is_left() {
    let samples = samples();
    for (name, text) in &samples {
        assert!(!text.contains("{{"), "a hole left in {name}:\n{text}");
    }
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/core/remote/scripts");
    let mut files = 0;
    for entry in std::fs::read_dir(&dir).expect("scripts folder") {
        let path = entry.expect("entry").path();
        let text = std::fs::read_to_string(&path).expect("script");
        let first = text.lines().next().unwrap_or_default();
        let fixed = first.split("{{").next().unwrap_or_default();
        assert!(
            samples.iter().any(|(_, s)| s.contains(fixed)),
            "{} is in no sample",
            path.display()
        );
        files += 1;
    }
    assert!(
        files >= 10,
        "only {files} script files in {}",
        dir.display()
    );
}

#[test]
fn every_script_passes_shellcheck() {
    let found = Command::new("shellcheck")
        .arg("--version")
        .stdout(Stdio::null())
        .status();
    if !found.is_ok_and(|s| s.success()) {
        eprintln!("SKIPPED every_script_passes_shellcheck: shellcheck is not installed");
        return;
    }
    let mut failures = Vec::new();
    for (name, text) in samples() {
        let mut child = Command::new("shellcheck")
            .args(["--shell=sh", "--exclude", EXCLUDED, "-"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("shellcheck");
        child
            .stdin
            .take()
            .expect("stdin")
            .write_all(text.as_bytes())
            .expect("write the script");
        let out = child.wait_with_output().expect("shellcheck ran");
        if !out.status.success() {
            let report = String::from_utf8_lossy(&out.stdout).into_owned();
            failures.push(format!("== {name}\n{report}\n-- the script:\n{text}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
