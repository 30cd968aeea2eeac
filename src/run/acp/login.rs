//! `herd acp login <agent>`: the agent's `terminal` auth method, run once in the operator's
//! terminal: herd asks `initialize`, ends the agent, then runs the login command attached to the
//! terminal. Exit 0 is a success.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use color_eyre::eyre::{Result, WrapErr, bail, eyre};
use serde_json::Value;

use crate::core::wire::acp::auth::{self, AuthKind, AuthMethod};
use crate::core::wire::acp::{rpc, wire};
use crate::run::jobs;

/// How long the agent has to answer `initialize`.
const INITIALIZE_WITHIN: Duration = Duration::from_secs(60);

/// The agent to log in to: its command and variables (its profile's).
pub struct LoginAgent {
    pub name: String,
    pub command: Vec<String>,
    pub env: BTreeMap<String, String>,
}

/// Runs the agent's terminal login; the login's exit code.
pub fn login(agent: &LoginAgent) -> Result<i32> {
    let methods = methods_of(agent)?;
    let Some(method) = auth::terminal_method(&methods) else {
        let offered: Vec<String> = methods.iter().map(describe).collect();
        bail!(
            "{} offers no terminal login (its methods: {}); nothing to run",
            agent.name,
            if offered.is_empty() {
                "none".into()
            } else {
                offered.join(", ")
            }
        );
    };
    let AuthKind::Terminal { args, env } = &method.kind else {
        bail!("{} is not a terminal method", method.id);
    };
    println!(
        "herd: {}: {} — the terminal is the agent's until it exits",
        agent.name, method.name
    );
    let (program, rest) = split(&agent.command)?;
    let status = Command::new(program)
        .args(rest)
        .args(args)
        .envs(&agent.env)
        .envs(env.iter().map(|(k, v)| (k, v)))
        .status()
        .wrap_err_with(|| format!("cannot start {program}"))?;
    let code = status.code().unwrap_or(1);
    if status.success() {
        println!("herd: logged in to {}", agent.name);
    } else {
        println!("herd: the login of {} failed ({status})", agent.name);
    }
    Ok(code)
}

fn describe(method: &AuthMethod) -> String {
    let kind = match &method.kind {
        AuthKind::Agent => "agent".to_string(),
        AuthKind::EnvVar { vars } => format!("env_var {}", vars.join(" ")),
        AuthKind::Terminal { .. } => "terminal".to_string(),
        AuthKind::Other { kind } => kind.clone(),
    };
    format!("{} ({kind})", method.id)
}

fn split(command: &[String]) -> Result<(&String, &[String])> {
    command
        .split_first()
        .ok_or_else(|| eyre!("the agent's profile has no command"))
}

/// The agent's authentication methods, from its answer to `initialize`.
fn methods_of(agent: &LoginAgent) -> Result<Vec<AuthMethod>> {
    let (program, rest) = split(&agent.command)?;
    let mut child = Command::new(program)
        .args(rest)
        .envs(&agent.env)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .wrap_err_with(|| format!("cannot start {program}"))?;
    let answer = initialize(&mut child);
    let _ = child.kill();
    let _ = child.wait();
    Ok(auth::methods(&answer?))
}

/// Sends `initialize` and waits for its result.
fn initialize(child: &mut Child) -> Result<Value> {
    let request = rpc::request(0, wire::INITIALIZE, wire::initialize());
    let mut stdin = child.stdin.take().ok_or_else(|| eyre!("no stdin"))?;
    writeln!(stdin, "{request}").wrap_err("writing initialize to the agent")?;
    let stdout = child.stdout.take().ok_or_else(|| eyre!("no stdout"))?;
    let (lines, inbox) = mpsc::channel();
    jobs::spawn_thread("acp-login-stdout", move || {
        for line in BufReader::new(stdout)
            .lines()
            .map_while(std::io::Result::ok)
        {
            if lines.send(line).is_err() {
                break;
            }
        }
    })
    .map_err(|e| eyre!("{e}"))?;
    let by = Instant::now() + INITIALIZE_WITHIN;
    loop {
        let left = by.saturating_duration_since(Instant::now());
        let line = inbox
            .recv_timeout(left)
            .map_err(|_| eyre!("the agent did not answer initialize"))?;
        let Ok(message) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        if message.get("id") == Some(&Value::from(0)) {
            if let Some(error) = message.get("error") {
                bail!("initialize failed: {error}");
            }
            return Ok(message.get("result").cloned().unwrap_or(Value::Null));
        }
    }
}
