//! The wrapper, the launch script, sweeps and probes through a launcher that runs the shell
//! code on this machine (`exec = ["env"]`): what ssh or docker would carry, without them.

use super::*;
use crate::core::remote::hosts::HostSet;
use crate::core::task::Completion;
use crate::run::launch::CompletionRule;

fn local_host(extra: &str) -> Host {
    let text = format!("[hosts.here]\nexec = [\"env\"]\n{extra}");
    HostSet::parse(&text).unwrap().get("here").unwrap().clone()
}

fn plan(argv: &[&str], env: &[(&str, &str)]) -> LaunchPlan {
    LaunchPlan {
        argv: argv.iter().map(ToString::to_string).collect(),
        cwd: PathBuf::from("/nonexistent/local/path"),
        env: env
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        prompt: String::new(),
        marker: "TASK_COMPLETE:t".into(),
        completion: CompletionRule {
            completion: Completion::Marker,
            marker_required: true,
        },
        added_instruction: None,
        resumed_session: None,
        signal_file: None,
        agent_log: None,
        trust_folder: None,
    }
}

/// Runs a wrapped plan as the PTY would (its argv and env), with HOME in `home`.
fn run_wrapped(wrapped: &LaunchPlan, home: &Path) -> std::process::Output {
    Command::new(&wrapped.argv[0])
        .args(&wrapped.argv[1..])
        .current_dir(&wrapped.cwd)
        .envs(&wrapped.env)
        .env("HOME", home)
        .output()
        .unwrap()
}

#[test]
fn the_agent_runs_in_its_folder_with_its_env_and_no_secret_on_any_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("my work");
    std::fs::create_dir(&work).unwrap();
    let host = local_host("env = { HOST_VAR = \"from-host\" }\n");
    let p = plan(
        &[
            "sh",
            "-c",
            "echo \"$API_KEY|$HOST_VAR|$HERD_ATTEMPT_ID|$(pwd)\"; exit 3",
        ],
        &[("API_KEY", "sk-'secret' $x"), ("TERM", "xterm-256color")],
    );
    let log = dir.path().join("a.log");
    let wrapped = wrap(
        &p,
        &host,
        &work.display().to_string(),
        "tag.1.n.t",
        &log,
        dir.path(),
    );
    for arg in &wrapped.argv {
        assert!(!arg.contains("sk-"), "a secret on the command line: {arg}");
    }
    assert!(!wrapped.env.contains_key("API_KEY"));
    assert_eq!(wrapped.env[COOKIE_VAR], "tag.1.n.t");
    let out = run_wrapped(&wrapped, dir.path());
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(3), "{stdout}");
    assert!(
        stdout.contains(&format!(
            "sk-'secret' $x|from-host|tag.1.n.t|{}",
            work.display()
        )),
        "{stdout}"
    );
    let mut carry = Vec::new();
    assert_eq!(
        crate::core::remote::script::scan_trailer(&mut carry, &out.stdout),
        Some(3)
    );
    // The script deleted itself before the agent ran.
    let left: Vec<_> = std::fs::read_dir(dir.path().join(".herd/run"))
        .unwrap()
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn a_folder_missing_on_the_host_is_said_and_a_launcher_that_fails_is_unreachable() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("a.log");
    let p = plan(&["true"], &[]);
    let wrapped = wrap(
        &p,
        &local_host(""),
        "/no/such/folder",
        "c.1.n.t",
        &log,
        dir.path(),
    );
    let out = run_wrapped(&wrapped, dir.path());
    assert_eq!(out.status.code(), Some(126));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("cannot enter /no/such/folder on host here")
    );
    let broken = HostSet::parse(
        "[hosts.gone]\nexec = [\"sh\", \"-c\", \"echo no such container >&2; exit 1\", \"x\"]\n",
    )
    .unwrap()
    .get("gone")
    .unwrap()
    .clone();
    let wrapped = wrap(&p, &broken, "/", "c.1.n.t", &log, dir.path());
    let out = run_wrapped(&wrapped, dir.path());
    assert_eq!(out.status.code(), Some(255));
    let log_text = std::fs::read_to_string(&log).unwrap();
    assert!(log_text.contains("no such container"), "{log_text}");
    assert_eq!(
        crate::core::remote::script::launcher_end(Some(255), None, false, &log_text),
        crate::core::remote::script::LauncherEnd::Unreachable {
            reason: "no such container".into()
        }
    );
}

#[test]
fn a_sweep_ends_what_carries_the_cookie_even_when_it_ignores_term() {
    let cookie = format!("ffff{}.1.n.sweep-test", std::process::id());
    let mut child = Command::new("sh")
        .args(["-c", "trap '' TERM; sleep 60 & wait; sleep 60"])
        .env(COOKIE_VAR, &cookie)
        .spawn()
        .unwrap();
    let host = local_host("");
    // Until the shell has started its sleep.
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while crate::run::hygiene::descendants_of(child.id()).is_empty() {
        assert!(
            std::time::Instant::now() < deadline,
            "the shell never started its sleep"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    let ended = sweep(&host, SweepScope::Attempt(&cookie), Duration::from_secs(1)).unwrap();
    let status = child.wait().unwrap();
    assert!(status.code().is_none(), "the shell was killed: {status:?}");
    assert!(
        ended
            .iter()
            .any(|e| e.signal == "KILL" && e.pid == child.id()),
        "{ended:?}"
    );
    assert!(ended.iter().all(|e| e.cookie == cookie));
    assert!(ended.len() >= 2, "the shell and its sleep: {ended:?}");
    let tag = cookie.split('.').next().unwrap();
    assert_eq!(
        sweep(&host, SweepScope::File(tag), Duration::from_secs(1)).unwrap(),
        []
    );
    let records = as_ended(&host, ended);
    assert_eq!(records[0].argv[0], "here:");
}

#[test]
fn a_probe_finds_programs_and_says_why_a_host_is_unreachable() {
    let facts = probe(&local_host(""), &["sh", "surely-not-a-program"]).unwrap();
    assert!(facts.programs["sh"].ends_with("/sh"), "{facts:?}");
    assert_eq!(facts.programs["surely-not-a-program"], "");
    let broken = HostSet::parse(
        "[hosts.gone]\nexec = [\"sh\", \"-c\", \"echo refused >&2; exit 255\", \"x\"]\n",
    )
    .unwrap()
    .get("gone")
    .unwrap()
    .clone();
    assert_eq!(
        probe(&broken, &["sh"]).unwrap_err().to_string(),
        "exit 255: refused"
    );
    assert!(launcher_installed(&local_host("")));
}

#[test]
fn relative_folders_go_under_the_hosts_workdir() {
    let with = local_host("workdir = \"/srv/w/\"\n");
    let without = local_host("");
    let local = Path::new("/home/me/repo");
    assert_eq!(remote_cwd(Some("/abs"), &with, local), "/abs");
    assert_eq!(remote_cwd(Some("sub/x"), &with, local), "/srv/w/sub/x");
    assert_eq!(remote_cwd(None, &with, local), "/srv/w/");
    assert_eq!(remote_cwd(Some("sub"), &without, local), "/home/me/repo");
}

#[test]
fn task_hosts_are_checked_by_name_and_launcher_program() {
    let set = HostSet::parse(
        "[hosts.a]\nexec = [\"sh\"]\ngroups = [\"g\"]\n[hosts.b]\nexec = [\"surely-no-such-launcher\"]\ngroups = [\"g\"]\n",
    )
    .unwrap();
    assert_eq!(host_problem("a", &set), None);
    assert_eq!(
        host_problem("g", &set).unwrap(),
        "host \"g\": the launcher program is not installed here (b needs \"surely-no-such-launcher\"); install it or fix the hosts file"
    );
    assert!(
        host_problem("zz", &set)
            .unwrap()
            .contains("not a known host or group")
    );
    let task = |json: &str| {
        let text = format!("{{\"tasks\": [{json}]}}");
        crate::core::taskfile::TaskFile::parse(&text)
            .unwrap()
            .tasks()[0]
            .clone()
    };
    let here = task(r#"{"task_id": "t", "agent": "a", "prompt_template": "p"}"#);
    assert_eq!(task_problem(&here, &set), None);
    let tree = task(
        r#"{"task_id": "t", "agent": "a", "prompt_template": "p", "host": "a", "worktree": true}"#,
    );
    assert_eq!(
        task_problem(&tree, &set),
        None,
        "a worktree is made on the host"
    );
    assert!(
        host_problem("zz", &HostSet::default())
            .unwrap()
            .contains("no hosts file was given")
    );
}
