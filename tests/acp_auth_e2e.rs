//! Authentication as an operator meets it, through the real binary and the scripted fake agent
//! (`acp/fake_agent.rs`, this test binary under `HERD_FAKE_ACP`): an agent that logs in by
//! itself (`agent` method), one that requires an API key in a variable (`env_var`) and a task
//! that sets it, the same task without it, and one that needs a terminal login and says so.
//! No method usable ends the attempt at once, its evidence the methods and the fix; the key's
//! value is in none of herd's records; `herd acp login` runs the terminal login once, after
//! which the same task completes.
#![allow(clippy::unwrap_used)]

#[allow(dead_code)]
#[path = "acp/fake_agent.rs"]
mod fake_agent;
#[allow(dead_code)]
#[path = "acp/harness.rs"]
mod harness;
#[allow(dead_code)]
#[path = "conformance/mock_api/mod.rs"]
mod mock_api;

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

use harness::{Case, check, run_batch_with};
use serde_json::{Value, json};

/// The API key a task sets: it must reach the agent and nothing herd writes.
const SECRET: &str = "sk-fake-never-recorded-4f2a9c";

/// Not a test: the entry point through which this binary plays the fake ACP agent
/// (`HERD_FAKE_ACP=<script>`); without the variable it returns at once.
#[test]
fn fake_acp_agent_entry_point() {
    if let Ok(script) = std::env::var("HERD_FAKE_ACP") {
        fake_agent::run(&script);
    }
}

/// A profiles file with the fake agent as the ACP profile `fake-acp`, its login's credentials
/// at `credentials`.
fn profiles(dir: &Path, credentials: &Path) -> std::path::PathBuf {
    let me = std::env::current_exe().unwrap().display().to_string();
    let path = dir.join("profiles.toml");
    let text = format!(
        "[profiles.fake-acp]\nprotocol = \"acp\"\n\
         command = [{me:?}, \"fake_acp_agent_entry_point\", \"--exact\", \"--nocapture\"]\n\
         env = {{ HERD_FAKE_ACP = \"login_required\", {} = {:?} }}\n",
        fake_agent::CREDENTIALS_VAR,
        credentials.display().to_string()
    );
    std::fs::write(&path, text).unwrap();
    path
}

fn case(
    dir: &Path,
    script: &str,
    name: &str,
    env: Value,
    expect: &'static str,
    evidence: &'static str,
) -> Case {
    let id = format!("auth-{name}");
    let cwd = dir.join("work").join(&id);
    std::fs::create_dir_all(&cwd).unwrap();
    let mut env = env;
    env["HERD_FAKE_ACP"] = json!(script);
    Case {
        task: json!({
            "task_id": id, "agent": "fake-acp", "cwd": cwd.display().to_string(),
            "timeout_sec": 60, "max_retries": 0, "env": env,
            "permission_policy": {"auto_press_1": true},
            "prompt_template": "Say done: TASK_COMPLETE:{task_id}",
        }),
        id,
        expect,
        evidence,
        tool_ran: None,
        approval: None,
    }
}

/// Every file under `dir` whose text holds `needle`.
fn files_holding(dir: &Path, needle: &str) -> Vec<String> {
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return found;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            found.extend(files_holding(&path, needle));
        } else if std::fs::read(&path)
            .is_ok_and(|bytes| String::from_utf8_lossy(&bytes).contains(needle))
        {
            found.push(path.display().to_string());
        }
    }
    found
}

#[test]
fn each_kind_of_auth_method_ends_as_an_operator_expects() {
    let dir = tempfile::Builder::new()
        .prefix("herd-acp-auth-")
        .tempdir()
        .unwrap();
    let credentials = dir.path().join("fake-acp-credentials");
    let profiles = profiles(dir.path(), &credentials);
    let key = fake_agent::API_KEY_VAR;
    let cases = vec![
        case(
            dir.path(),
            "agent_auth",
            "agent",
            json!({}),
            "completed",
            "",
        ),
        case(
            dir.path(),
            "env_auth",
            "env-set",
            json!({key: SECRET}),
            "completed",
            "",
        ),
        case(
            dir.path(),
            "env_auth",
            "env-unset",
            json!({}),
            "failed_auth",
            "fake-api-key (env_var: set FAKE_ACP_API_KEY in the task's env)",
        ),
        case(
            dir.path(),
            "login_required",
            "login",
            json!({fake_agent::CREDENTIALS_VAR: credentials.display().to_string()}),
            "failed_auth",
            "fake-login (terminal: run `herd acp login fake-acp` once)",
        ),
    ];
    let tasks = cases.iter().map(|c| c.task.clone()).collect();
    let path = std::env::var("PATH").unwrap_or_default();
    let started = Instant::now();
    let more = [std::ffi::OsStr::new("--profiles"), profiles.as_os_str()];
    let (doc, said) = run_batch_with(dir.path(), tasks, &path, 4, &more);
    let took = started.elapsed().as_secs_f64();
    check(dir.path(), &doc, &cases, &said);
    // No usable method is a verdict at once, not a wait for the task's timeout.
    assert!(took < 30.0, "the batch took {took:.1} s");
    let log = harness::acp_log(dir.path(), "auth-env-set");
    assert!(log.contains("\"methodId\":\"fake-api-key\""), "{log}");
    let leaked = files_holding(&dir.path().join("runs"), SECRET);
    assert!(leaked.is_empty(), "the key's value is in {leaked:?}");

    // The operator logs in once, typing into the agent's own login…
    let mut login = Command::new(env!("CARGO_BIN_EXE_herd"))
        .args(["acp", "login", "fake-acp", "--profiles"])
        .arg(&profiles)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    login.stdin.take().unwrap().write_all(b"yes\n").unwrap();
    let out = login.wait_with_output().unwrap();
    let shown = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{shown}");
    assert!(shown.contains("fake-acp: logged in"), "{shown}");
    assert!(credentials.exists());
    // …and the same task completes.
    let again = vec![case(
        dir.path(),
        "login_required",
        "after-login",
        json!({fake_agent::CREDENTIALS_VAR: credentials.display().to_string()}),
        "completed",
        "",
    )];
    let tasks = again.iter().map(|c| c.task.clone()).collect();
    let (doc, said) = run_batch_with(dir.path(), tasks, &path, 1, &more);
    check(dir.path(), &doc, &again, &said);
}

#[test]
fn login_says_so_when_the_agent_has_no_terminal_login() {
    let dir = tempfile::Builder::new()
        .prefix("herd-acp-login-")
        .tempdir()
        .unwrap();
    let profiles = profiles(dir.path(), &dir.path().join("unused"));
    let text = std::fs::read_to_string(&profiles)
        .unwrap()
        .replace("login_required", "agent_auth");
    std::fs::write(&profiles, text).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_herd"))
        .args(["acp", "login", "fake-acp", "--profiles"])
        .arg(&profiles)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(
        said.contains("offers no terminal login (its methods: fake-self (agent))"),
        "{said}"
    );
}
