//! The scripts run for real, through an exec launcher that is this machine (`env HOME=...`), on
//! a temporary repository: what the hosts' `sh` and `git` do with them. Longer than ~400 lines
//! on purpose: one scenario per script, each readable top to bottom.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

use super::*;
use crate::core::remote::files::RemoteTranscript;
use crate::core::remote::frames::WorktreeEnd;
use crate::core::remote::hosts::Launcher;

fn here(home: &Path) -> Host {
    Host {
        name: "here".into(),
        launcher: Launcher::Exec {
            template: vec!["env".into(), format!("HOME={}", home.display())],
        },
        max_agents: None,
        env: Default::default(),
        workdir: None,
        groups: Vec::new(),
        out_of_rotation_sec: 60,
    }
}

/// Dates `path` a few seconds ahead, so it is newer than an attempt's start stamp made just
/// before it, whatever the file system's timestamp granularity (a sleep would only make it
/// likely).
fn written_after_the_stamp(path: &Path) {
    let later = std::time::SystemTime::now() + std::time::Duration::from_secs(5);
    std::fs::File::options()
        .append(true)
        .open(path)
        .and_then(|file| file.set_modified(later))
        .unwrap();
}

fn git(dir: &Path, args: &[&str]) {
    let ok = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .output()
        .unwrap();
    assert!(ok.status.success(), "git {args:?}: {ok:?}");
}

fn repo(dir: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    git(dir, &["init", "-q", "-b", "main"]);
    git(dir, &["config", "user.email", "t@example.com"]);
    git(dir, &["config", "user.name", "t"]);
    std::fs::write(dir.join("a.txt"), "a\n").unwrap();
    git(dir, &["add", "a.txt"]);
    git(dir, &["commit", "-q", "-m", "first"]);
}

#[test]
fn a_worktree_is_made_read_and_removed_on_the_host() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let work = tmp.path().join("my repo");
    repo(&work);
    std::fs::write(work.join("dirty.txt"), "x").unwrap();
    let host = here(&home);
    let clear = vec!["attempt_1.signal.json".to_string()];
    let run_dir = remote::files::run_dir_under_home("ab", "t1");
    std::fs::create_dir_all(home.join(&run_dir)).unwrap();
    std::fs::write(home.join(&run_dir).join("attempt_1.signal.json"), "old").unwrap();
    let cwd = work.display().to_string();
    let prepare = |worktree| RemotePrepare {
        cwd: &cwd,
        run_dir: &run_dir,
        clear: &clear,
        stamp: "attempt_1.start",
        worktree,
        host: "here",
    };
    let outcome = super::prepare(&host, &prepare(Some("t1")));
    let PrepareOutcome::Ready(Prepared::Ready {
        run_dir: abs,
        cwd: wt,
        git_before,
    }) = outcome
    else {
        panic!("{outcome:?}");
    };
    assert_eq!(Path::new(&abs), home.join(&run_dir));
    assert!(
        !home.join(&run_dir).join("attempt_1.signal.json").exists(),
        "cleared"
    );
    assert!(
        home.join(&run_dir).join("attempt_1.start").exists(),
        "stamped"
    );
    assert_eq!(Path::new(&wt), work.join(".herd/worktrees/t1"));
    assert!(Path::new(&wt).join("a.txt").exists());
    assert_eq!(git_before, Some(BTreeSet::new()), "the worktree is clean");
    // Made once: a retry finds it.
    assert!(matches!(
        super::prepare(&host, &prepare(Some("t1"))),
        PrepareOutcome::Ready(Prepared::Ready { cwd, .. }) if cwd == wt
    ));
    // The repository's own folder, and its own status, are left alone (herd's folder excluded).
    let PrepareOutcome::Ready(Prepared::Ready { git_before, .. }) =
        super::prepare(&host, &prepare(None))
    else {
        panic!()
    };
    assert_eq!(git_before, Some(BTreeSet::from(["dirty.txt".to_string()])));

    // While it runs: the signal file, and the log from an offset.
    let signal = format!("{abs}/attempt_1.signal.json");
    let log = format!("{abs}/attempt_1.agent.log");
    let read = |offset| RemoteRead {
        signal: Some(&signal),
        log: Some((&log, offset)),
        signal_max: 64,
        log_max: 5,
        rollouts: None,
    };
    let back = super::read(&host, &read(0), READ_TIMEOUT).unwrap();
    assert_eq!((back.signal, back.log), (None, None), "nothing yet");
    std::fs::write(&signal, "{\"status\":\"done\"}").unwrap();
    std::fs::write(&log, b"one\ntwo\n\xff").unwrap();
    let back = super::read(&host, &read(0), READ_TIMEOUT).unwrap();
    assert_eq!(back.signal, Some(Ok(b"{\"status\":\"done\"}".to_vec())));
    assert_eq!(back.log, Some((0, b"one\nt".to_vec())), "at most log_max");
    let back = super::read(&host, &read(5), READ_TIMEOUT).unwrap();
    assert_eq!(back.log, Some((5, b"wo\n\xff".to_vec())));
    let back = super::read(&host, &read(50), READ_TIMEOUT).unwrap();
    assert_eq!(
        back.log,
        Some((0, b"one\nt".to_vec())),
        "a shorter file is read again"
    );
    std::fs::write(&signal, "x".repeat(65)).unwrap();
    let back = super::read(&host, &read(9), READ_TIMEOUT).unwrap();
    assert_eq!(back.signal, Some(Err(65)));

    // The end: a transcript written since the start, the clean worktree removed, files gone.
    let project = crate::core::facts::transcript::project_dir_name(&wt);
    let projects = home.join(".claude/projects").join(&project);
    std::fs::create_dir_all(&projects).unwrap();
    std::fs::write(projects.join("s-1.jsonl"), "{\"type\":\"user\"}\n").unwrap();
    written_after_the_stamp(&projects.join("s-1.jsonl"));
    let remove = vec![
        "attempt_1.signal.json".to_string(),
        "attempt_1.agent.log".into(),
    ];
    let fetch = vec![
        "attempt_1.acp.jsonl".to_string(),
        "attempt_1.none.jsonl".into(),
    ];
    std::fs::write(
        home.join(&run_dir).join("attempt_1.acp.jsonl"),
        "0123456789",
    )
    .unwrap();
    let end = |session, finish| RemoteEnd {
        cwd: &wt,
        git_status: true,
        transcript: Some(RemoteTranscript {
            config_dir: None,
            project: project.clone(),
            session,
            max_bytes: 1 << 20,
        }),
        finish_worktree: finish,
        run_dir: &run_dir,
        remove: &remove,
        fetch: &fetch,
        fetch_max: 4,
        stamp: "attempt_1.start",
    };
    let back = super::end(&host, &end(None, true)).unwrap();
    assert_eq!(back.git_after, Some(BTreeSet::new()));
    let (path, bytes) = back.transcript.unwrap();
    assert!(path.ends_with("s-1.jsonl"), "{path}");
    assert_eq!(bytes, b"{\"type\":\"user\"}\n");
    assert_eq!(back.worktree, Some(WorktreeEnd::Removed));
    assert_eq!(
        back.fetched,
        vec![("attempt_1.acp.jsonl".to_string(), b"6789".to_vec())],
        "its last bytes, only the files that are there"
    );
    assert!(!Path::new(&wt).exists());
    for name in [
        "attempt_1.signal.json",
        "attempt_1.agent.log",
        "attempt_1.acp.jsonl",
        "attempt_1.start",
    ] {
        assert!(!home.join(&run_dir).join(name).exists(), "{name} removed");
    }
    assert!(!home.join(&run_dir).exists(), "the empty folder too");
}

#[test]
fn a_dirty_worktree_is_kept_and_a_folder_outside_git_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let work = tmp.path().join("repo");
    repo(&work);
    let host = here(&home);
    let run_dir = remote::files::run_dir_under_home("ab", "t2");
    let cwd = work.display().to_string();
    let p = RemotePrepare {
        cwd: &cwd,
        run_dir: &run_dir,
        clear: &[],
        stamp: "attempt_1.start",
        worktree: Some("t2"),
        host: "here",
    };
    let PrepareOutcome::Ready(Prepared::Ready { cwd: wt, .. }) = super::prepare(&host, &p) else {
        panic!()
    };
    std::fs::write(Path::new(&wt).join("new.txt"), "x").unwrap();
    let back = super::end(
        &host,
        &RemoteEnd {
            cwd: &wt,
            git_status: false,
            transcript: None,
            finish_worktree: true,
            run_dir: &run_dir,
            remove: &[],
            fetch: &[],
            fetch_max: 0,
            stamp: "attempt_1.start",
        },
    )
    .unwrap();
    assert_eq!(
        back.worktree,
        Some(WorktreeEnd::KeptDirty {
            files: vec!["new.txt".into()]
        })
    );
    assert!(Path::new(&wt).join("new.txt").exists());

    let plain = tmp.path().join("plain").display().to_string();
    std::fs::create_dir_all(&plain).unwrap();
    let outcome = super::prepare(&host, &RemotePrepare { cwd: &plain, ..p });
    let PrepareOutcome::Refused(problem) = outcome else {
        panic!("{outcome:?}")
    };
    assert!(problem.contains("needs a git repository"), "{problem}");
    assert!(problem.contains("on host here"), "{problem}");
}

#[test]
fn a_host_that_does_not_answer_is_said_so() {
    let mut host = here(Path::new("/nonexistent"));
    host.launcher = Launcher::Exec {
        template: vec![
            "sh".into(),
            "-c".into(),
            "echo 'ssh: connect: refused' >&2; exit 255".into(),
            "x".into(),
        ],
    };
    let read = RemoteRead {
        signal: Some("/x"),
        log: None,
        signal_max: 1,
        log_max: 1,
        rollouts: None,
    };
    let why = super::read(&host, &read, READ_TIMEOUT).unwrap_err();
    assert_eq!(
        why,
        NoAnswer::Unfinished {
            ended: Ended::Exit(255),
            said: Some("ssh: connect: refused".into())
        }
    );
    assert_eq!(why.to_string(), "exit 255: ssh: connect: refused");
    let mut missing = host.clone();
    missing.launcher = Launcher::Exec {
        template: vec!["/nonexistent/launcher".into()],
    };
    let why = super::read(&missing, &read, READ_TIMEOUT).unwrap_err();
    assert!(
        matches!(&why, NoAnswer::Launcher { program, .. } if program == "/nonexistent/launcher"),
        "{why}"
    );
    host.launcher = Launcher::Exec {
        template: vec![
            "sh".into(),
            "-c".into(),
            "sleep 30; true".into(),
            "x".into(),
        ],
    };
    let started = std::time::Instant::now();
    let why = super::read(&host, &read, Duration::from_millis(300)).unwrap_err();
    assert!(
        matches!(
            why,
            NoAnswer::Unfinished {
                ended: Ended::TimedOut,
                ..
            }
        ),
        "{why}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "a hung host does not hold herd"
    );
}

#[test]
fn a_codex_rollout_of_the_tasks_folder_is_found_on_the_host_and_followed() {
    use crate::core::remote::files::RolloutSearch;
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let real = tmp.path().join("real");
    std::fs::create_dir_all(&real).unwrap();
    let link = tmp.path().join("link");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    let stamp = tmp.path().join("attempt_1.start");
    let day = home.join(".codex/sessions/2026/11/25");
    std::fs::create_dir_all(&day).unwrap();
    let old = day.join("rollout-old.jsonl");
    std::fs::write(&old, "{}\n").unwrap();
    let touched = Command::new("touch")
        .args(["-d", "2000-01-01"])
        .arg(&old)
        .status()
        .unwrap();
    assert!(touched.success());
    std::fs::write(&stamp, "").unwrap();
    let meta = format!(
        "{{\"type\":\"session_meta\",\"payload\":{{\"cwd\":\"{}\"}}}}\n",
        real.display()
    );
    let mine = day.join("rollout-mine.jsonl");
    std::fs::write(&mine, format!("{meta}{{\"x\":1}}\n")).unwrap();
    written_after_the_stamp(&mine);
    let host = here(&home);
    let (stamp_text, cwd) = (stamp.display().to_string(), link.display().to_string());
    let read = RemoteRead {
        signal: None,
        log: None,
        signal_max: 1,
        log_max: 1 << 20,
        rollouts: Some(RolloutSearch {
            codex_home: None,
            stamp: &stamp_text,
            cwd: &cwd,
        }),
    };
    let back = super::read(&host, &read, READ_TIMEOUT).unwrap();
    assert_eq!(back.cwd_real, Some(real.display().to_string()));
    assert_eq!(
        back.rollouts,
        vec![(mine.display().to_string(), meta.trim_end().to_string())],
        "only what was written since the stamp"
    );

    // The worker finds it, then follows it.
    use crate::run::attempt_files::{FileSource, FileWatch, FilesReport, RemoteRollouts};
    use std::sync::{Arc, Mutex};
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = seen.clone();
    let copy = tmp.path().join("attempt_1.agent.log");
    let source = FileSource::Remote {
        host: Box::new(host),
        signal: None,
        log: None,
        copy_signal: None,
        copy_log: Some(copy.clone()),
        rollouts: Some(RemoteRollouts {
            codex_home: None,
            stamp: stamp_text.clone(),
            cwd: cwd.clone(),
        }),
    };
    let watch = FileWatch::start("t".into(), source, Duration::from_secs(1), move |r| {
        sink.lock().unwrap().push(r);
        true
    })
    .unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    let joined = |seen: &Mutex<Vec<FilesReport>>| -> Vec<u8> {
        seen.lock()
            .unwrap()
            .iter()
            .flat_map(|r| match r {
                FilesReport::AgentLog(bytes) => bytes.clone(),
                _ => Vec::new(),
            })
            .collect()
    };
    while std::time::Instant::now() < deadline && !joined(&seen).ends_with(b"{\"x\":1}\n") {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(
        joined(&seen).ends_with(b"{\"x\":1}\n"),
        "{:?}",
        seen.lock().unwrap()
    );
    std::fs::write(&mine, format!("{meta}{{\"x\":1}}\n{{\"y\":2}}\n")).unwrap();
    assert!(watch.ask_last());
    while std::time::Instant::now() < deadline
        && !seen
            .lock()
            .unwrap()
            .iter()
            .any(|r| matches!(r, FilesReport::Last { .. }))
    {
        std::thread::sleep(Duration::from_millis(50));
    }
    let all = joined(&seen);
    let last = seen.lock().unwrap().iter().find_map(|r| match r {
        FilesReport::Last { log, trouble, .. } => Some((log.clone(), trouble.clone())),
        _ => None,
    });
    let (last_log, trouble) = last.expect("the last read came");
    assert_eq!(trouble, None);
    let mut whole = all;
    whole.extend(last_log);
    assert_eq!(
        String::from_utf8_lossy(&whole),
        format!("{meta}{{\"x\":1}}\n{{\"y\":2}}\n"),
        "every byte once, in order"
    );
    assert_eq!(
        std::fs::read(&copy).unwrap(),
        whole,
        "kept in the recordings"
    );
}
