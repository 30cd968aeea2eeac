//! Finding an attempt's processes by cookie and ending them, with real processes that escape
//! their group and session and ignore TERM.

use super::*;
use std::process::{Child, Command};

fn info(pid: u32, ppid: u32, cookie: Option<&str>) -> ProcessInfo {
    ProcessInfo {
        pid,
        ppid,
        sid: pid,
        start_time: u64::from(pid) * 10,
        argv: vec![format!("p{pid}")],
        cookie: cookie.map(str::to_string),
    }
}

#[test]
fn stat_fields_are_counted_from_the_last_parenthesis() {
    let stat = "4242 (we ird) (name)) S 17 4242 4240 34816 4242 4194560 0 0 0 0 0 0 0 0 20 0 1 0 987654 1234 56";
    assert_eq!(parse_stat(stat), Some((17, 4240, 987654, 'S')));
    assert_eq!(parse_stat("garbage"), None);
}

#[test]
fn a_cookie_names_its_task_even_with_dots_in_the_id() {
    let cookie = new_cookie("00ff", "pkg.mod.task-1", 3);
    assert!(cookie.starts_with("00ff.3."));
    assert_eq!(cookie_task(&cookie), Some("pkg.mod.task-1"));
    assert_ne!(cookie, new_cookie("00ff", "pkg.mod.task-1", 3), "unique");
    assert_eq!(
        cookie_in(b"A=1\0HERD_ATTEMPT_ID=x.1.n.t\0B=2\0"),
        Some("x.1.n.t".into())
    );
    assert_eq!(cookie_in(b"A=1\0HERD_ATTEMPT_ID_NOT=x\0"), None);
    // Started on a host through a launcher: ended there, through the launcher.
    assert_eq!(
        cookie_in(b"HERD_HOST=box1\0HERD_ATTEMPT_ID=x.1.n.t\0"),
        None
    );
}

#[test]
fn the_file_tag_is_stable_and_tells_files_apart() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a.json"), dir.path().join("b.json"));
    assert_eq!(file_tag(&a), file_tag(&a));
    assert_ne!(file_tag(&a), file_tag(&b));
    assert_eq!(file_tag(&a).len(), 16);
}

#[test]
fn selection_takes_cookie_holders_their_descendants_and_the_roots_descendants() {
    let procs = vec![
        info(1, 0, None),
        info(10, 1, Some("c")),     // the agent
        info(11, 10, None),         // cleared its environment
        info(12, 11, None),         // and its child
        info(20, 1, Some("c")),     // a daemon reparented to init
        info(30, 1, Some("other")), // another attempt's
        info(40, 1, None),          // unrelated
        info(50, 41, None),         // child of a root that has no cookie
        info(41, 1, None),
    ];
    let owned = |p: &ProcessInfo| p.cookie.as_deref() == Some("c");
    let pids: Vec<u32> = select(&procs, &owned, &[41])
        .iter()
        .map(|p| p.pid)
        .collect();
    assert_eq!(pids, [10, 11, 12, 20, 50]);
}

/// Waits (bounded) until `check` holds, polling.
fn wait_for(what: &str, mut check: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while !check() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn with_cookie(cookie: &str) -> Vec<ProcessInfo> {
    scan(CookieScan::Everyone)
        .into_iter()
        .filter(|p| p.cookie.as_deref() == Some(cookie))
        .collect()
}

fn spawn_escaping(cookie: &str) -> Child {
    // A setsid'd grandchild that ignores TERM and HUP, a double-forked nohup daemon, and a
    // child that cleared its environment; the shell itself waits.
    let script = r#"
setsid sh -c 'trap "" TERM HUP; while :; do sleep 1; done' &
( nohup sh -c 'while :; do sleep 1; done' >/dev/null 2>&1 & ) &
env -i sleep 300 &
wait
"#;
    Command::new("sh")
        .arg("-c")
        .arg(script)
        .env(COOKIE_VAR, cookie)
        .spawn()
        .unwrap()
}

/// Whether `pid` ignores TERM (its `SigIgn` mask in `/proc/PID/status`).
fn ignores_term(pid: u32) -> bool {
    let term_bit = 1u64 << (Signal::TERM.as_raw() - 1);
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|status| {
            let mask = status.lines().find_map(|l| l.strip_prefix("SigIgn:"))?;
            u64::from_str_radix(mask.trim(), 16).ok()
        })
        .is_some_and(|mask| mask & term_bit != 0)
}

/// Whether every process of `spawn_escaping` has taken its final shape: the setsid'd loop
/// ignores TERM (its trap is set), the nohup'd loop runs, and the child with a cleared
/// environment is `sleep 300` (exec'd, so its cookie is gone).
fn escaping_in_place(cookie: &str, agent: u32) -> bool {
    let holders = with_cookie(cookie);
    let trapped = holders
        .iter()
        .any(|p| ignores_term(p.pid) && read_argv(p.pid).iter().any(|a| a.contains("trap")));
    let looping = holders
        .iter()
        .any(|p| read_argv(p.pid) == ["sh", "-c", "while :; do sleep 1; done"]);
    let cleared = descendants_of(agent).iter().any(|(pid, _)| {
        read_argv(*pid) == ["sleep", "300"] && holders.iter().all(|p| p.pid != *pid)
    });
    trapped && looping && cleared
}

#[test]
fn every_escaping_process_of_an_attempt_is_ended() {
    let cookie = new_cookie("test", "escape", 1);
    let mut agent = spawn_escaping(&cookie);
    let agent_pid = agent.id();
    // The shell, the setsid'd loop and the nohup'd loop carry the cookie (each with a sleep);
    // what the test checks needs each in its final shape, not only started.
    wait_for("the escaping processes to take their shape", || {
        escaping_in_place(&cookie, agent_pid)
    });
    let other = new_cookie("test", "bystander", 1);
    let mut bystander = Command::new("sleep")
        .arg("300")
        .env(COOKIE_VAR, &other)
        .spawn()
        .unwrap();

    let known = descendants_of(agent_pid);
    assert!(known.len() >= 3, "{known:?}");
    let ended = end_attempt(&cookie, &known, None, Duration::from_millis(500));
    let _ = agent.wait();
    assert!(
        with_cookie(&cookie).is_empty(),
        "left: {:?}",
        with_cookie(&cookie)
    );
    assert!(
        ended.iter().any(|e| e.signal == "KILL"),
        "the TERM-ignoring loop needed KILL: {ended:?}"
    );
    assert!(
        ended
            .iter()
            .any(|e| e.cookie.is_none() && e.argv == ["sleep", "300"]),
        "the child with a cleared environment was found through its parent: {ended:?}"
    );
    assert_eq!(
        with_cookie(&other).len(),
        1,
        "another attempt's process is left alone"
    );
    let _ = bystander.kill();
    let _ = bystander.wait();
}

#[test]
fn survivors_of_a_tasks_file_are_found_by_its_tag() {
    let tag = file_tag(Path::new("/nonexistent/survivors.json"));
    let cookie = new_cookie(&tag, "t", 2);
    let mut agent = spawn_escaping(&cookie);
    let agent_pid = agent.id();
    wait_for("the survivors to take their shape", || {
        escaping_in_place(&cookie, agent_pid)
    });
    let ended = end_survivors(&tag, Duration::from_millis(300));
    let _ = agent.wait();
    assert!(with_cookie(&cookie).is_empty());
    assert!(
        ended
            .iter()
            .all(|e| e.cookie.as_deref().is_none_or(|c| c == cookie))
    );
}

#[test]
fn a_scan_reads_cookies_only_of_processes_started_since_its_bound() {
    let before = start_time_now();
    let cookie = new_cookie("feed", "bound", 1);
    let mut child = Command::new("sleep")
        .arg("30")
        .env(COOKIE_VAR, &cookie)
        .spawn()
        .unwrap();
    let pid = child.id();
    let found = |cookies| {
        scan(cookies)
            .into_iter()
            .find(|p| p.pid == pid)
            .expect("the child is listed")
    };
    // Its environment is readable once the exec has settled (under load, a moment after
    // `spawn` returns).
    wait_for("the child's environment", || {
        found(CookieScan::Everyone).cookie.is_some()
    });
    let seen = found(CookieScan::StartedSince(before));
    assert!(seen.start_time >= before, "{seen:?} vs {before}");
    assert_eq!(seen.cookie.as_deref(), Some(cookie.as_str()));
    assert_eq!(
        found(CookieScan::StartedSince(seen.start_time + 1)).cookie,
        None
    );
    assert_eq!(found(CookieScan::Nobody).cookie, None);
    assert_eq!(
        found(CookieScan::Everyone).cookie.as_deref(),
        Some(cookie.as_str())
    );
    child.kill().unwrap();
    child.wait().unwrap();
}
