//! Hosts agents may run on (machines, containers, pods), read from TOML (`[hosts.NAME]` with
//! `ssh = "user@host"` or `exec = [...]`, `port`, `identity`, `max_agents`, `groups`), and the argv
//! that reaches each through its launcher. Pure: `run::remote` runs them.

use std::collections::{BTreeMap, BTreeSet};

use serde::Deserialize;
use thiserror::Error;

use crate::core::guard::shell_words::{is_env_name, quote};

/// The placeholder of an exec template: `-t` when a terminal is wanted, else dropped.
pub const TTY_PLACEHOLDER: &str = "{tty}";
/// How long a host that could not be reached stays out of rotation by default.
pub const DEFAULT_OUT_OF_ROTATION_SEC: u64 = 60;
/// Bound on `max_agents`, as for `--concurrency`.
pub const MAX_AGENTS_LIMIT: usize = 256;

/// How herd reaches a host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Launcher {
    Ssh(SshTarget),
    /// An argv prefix (`docker exec -i {tty} box`): herd appends `sh -c SCRIPT`.
    Exec {
        template: Vec<String>,
    },
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SshTarget {
    /// `user@host` or an alias of the user's ssh config.
    pub destination: String,
    pub port: Option<u16>,
    pub identity: Option<String>,
    /// Extra `-o` options (`StrictHostKeyChecking=accept-new`, `UserKnownHostsFile=...`).
    pub options: Vec<String>,
    /// An ssh config file (`-F`).
    pub config: Option<String>,
}

/// One host of the hosts file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Host {
    pub name: String,
    pub launcher: Launcher,
    /// Agents at once on this host (besides the global `--concurrency`).
    pub max_agents: Option<usize>,
    /// Variables set for every agent on this host (never on a command line).
    pub env: BTreeMap<String, String>,
    /// Where relative task folders are found on the host (default: the same path as locally).
    pub workdir: Option<String>,
    pub groups: Vec<String>,
    /// How long the host stays out of rotation after it could not be reached.
    pub out_of_rotation_sec: u64,
}

impl Host {
    /// The local program the launcher needs (`ssh`, `docker`, `kubectl`).
    pub fn program(&self) -> &str {
        match &self.launcher {
            Launcher::Ssh(_) => "ssh",
            Launcher::Exec { template } => template.first().map_or("", String::as_str),
        }
    }
}

/// A problem in a hosts text.
#[derive(Debug, Clone, Error, PartialEq, Eq)]
#[error("{}{message}", location.map(|(l, c)| format!("{l}:{c}: ")).unwrap_or_default())]
pub struct HostsError {
    /// 1-based line and column, where known.
    pub location: Option<(usize, usize)>,
    pub message: String,
}

/// What is wrong with one host's table, and which field.
#[derive(Debug, Clone, Error, PartialEq, Eq)]
pub enum HostError {
    #[error("a host name may hold letters, digits, '-', '_' and '.' only")]
    BadName,
    #[error("give either \"ssh\" or \"exec\", not both")]
    SshAndExec,
    #[error(
        "give \"ssh\" (\"user@host\") or \"exec\" (an argv such as [\"docker\", \"exec\", \"-i\", \"{{tty}}\", \"box\"])"
    )]
    NoLauncher,
    #[error("ssh destination \"{destination}\" must be user@host or a host alias")]
    BadDestination { destination: String },
    #[error("\"exec\" must start with the launcher program")]
    ExecWithoutProgram,
    #[error("port, identity and ssh_options apply to \"ssh\" hosts only")]
    SshFieldsOnExec,
    #[error("max_agents must be from 1 to {MAX_AGENTS_LIMIT}")]
    MaxAgentsOutOfRange,
    #[error("env name \"{key}\" is not a valid variable name")]
    BadEnvName { key: String },
}

#[derive(Debug, Deserialize)]
struct HostsText {
    #[serde(default)]
    hosts: BTreeMap<String, HostSource>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct HostSource {
    ssh: Option<String>,
    exec: Option<Vec<String>>,
    port: Option<u16>,
    identity: Option<String>,
    #[serde(default)]
    ssh_options: Vec<String>,
    ssh_config: Option<String>,
    max_agents: Option<usize>,
    #[serde(default)]
    env: BTreeMap<String, String>,
    workdir: Option<String>,
    #[serde(default)]
    groups: Vec<String>,
    out_of_rotation_sec: Option<u64>,
}

/// Every host and group of the run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HostSet {
    hosts: BTreeMap<String, Host>,
}

/// What a task's `host` names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target<'a> {
    Host(&'a Host),
    /// A group: its members, by name.
    Group(Vec<&'a Host>),
}

impl HostSet {
    /// Parses a hosts text (other tables ignored), collecting every problem.
    pub fn parse(text: &str) -> Result<HostSet, Vec<HostsError>> {
        let file: HostsText = toml::from_str(&only_hosts(text)).map_err(|e| {
            vec![HostsError {
                location: e.span().map(|s| line_col(text, s.start)),
                message: e.message().trim().to_string(),
            }]
        })?;
        let mut errors = Vec::new();
        let mut hosts = BTreeMap::new();
        for (name, source) in file.hosts {
            match compile(&name, source) {
                Ok(host) => {
                    hosts.insert(name, host);
                }
                Err(message) => errors.push(HostsError {
                    location: locate(text, &name),
                    message: format!("host '{name}': {message}"),
                }),
            }
        }
        let set = HostSet { hosts };
        for group in set.group_names() {
            if set.hosts.contains_key(&group) {
                errors.push(HostsError {
                    location: locate(text, &group),
                    message: format!("'{group}' is both a host and a group; rename one"),
                });
            }
        }
        if errors.is_empty() {
            Ok(set)
        } else {
            Err(errors)
        }
    }

    pub fn is_empty(&self) -> bool {
        self.hosts.is_empty()
    }

    pub fn get(&self, name: &str) -> Option<&Host> {
        self.hosts.get(name)
    }

    pub fn iter(&self) -> impl Iterator<Item = &Host> {
        self.hosts.values()
    }

    /// Every group name, sorted.
    pub fn group_names(&self) -> BTreeSet<String> {
        self.hosts
            .values()
            .flat_map(|h| h.groups.iter().cloned())
            .collect()
    }

    /// The host or group `name` stands for; `None` when it is neither.
    pub fn target(&self, name: &str) -> Option<Target<'_>> {
        if let Some(host) = self.hosts.get(name) {
            return Some(Target::Host(host));
        }
        let members: Vec<&Host> = self
            .hosts
            .values()
            .filter(|h| h.groups.iter().any(|g| g == name))
            .collect();
        (!members.is_empty()).then_some(Target::Group(members))
    }

    /// What `validate` says of a task's `host` that names nothing.
    pub fn unknown_target_message(&self, name: &str) -> String {
        let mut known: Vec<String> = self.hosts.keys().cloned().collect();
        known.extend(self.group_names());
        if known.is_empty() {
            format!(
                "host \"{name}\" is not defined: no hosts file was given (--hosts FILE, or [hosts] in the profiles file)"
            )
        } else {
            format!(
                "host \"{name}\" is not a known host or group; use one of {}",
                known.join(", ")
            )
        }
    }
}

/// Keeps only what a hosts file may hold: a profiles file also has `[profiles.*]` tables.
fn only_hosts(text: &str) -> String {
    match text.parse::<toml::Table>() {
        Ok(mut table) => {
            table.retain(|key, _| key == "hosts");
            toml::to_string(&table).unwrap_or_default()
        }
        // Let the typed parse report the syntax error with its position.
        Err(_) => text.to_string(),
    }
}

fn compile(name: &str, s: HostSource) -> Result<Host, HostError> {
    if name.is_empty()
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
    {
        return Err(HostError::BadName);
    }
    let launcher = match (s.ssh, s.exec) {
        (Some(_), Some(_)) => return Err(HostError::SshAndExec),
        (None, None) => {
            return Err(HostError::NoLauncher);
        }
        (Some(destination), None) => {
            if destination.is_empty() || destination.starts_with('-') {
                return Err(HostError::BadDestination { destination });
            }
            Launcher::Ssh(SshTarget {
                destination,
                port: s.port,
                identity: s.identity,
                options: s.ssh_options,
                config: s.ssh_config,
            })
        }
        (None, Some(template)) => {
            if template.first().is_none_or(|p| p.is_empty()) {
                return Err(HostError::ExecWithoutProgram);
            }
            if s.port.is_some() || s.identity.is_some() || !s.ssh_options.is_empty() {
                return Err(HostError::SshFieldsOnExec);
            }
            Launcher::Exec { template }
        }
    };
    if let Some(max) = s.max_agents
        && !(1..=MAX_AGENTS_LIMIT).contains(&max)
    {
        return Err(HostError::MaxAgentsOutOfRange);
    }
    for key in s.env.keys() {
        if !is_env_name(key) {
            return Err(HostError::BadEnvName { key: key.clone() });
        }
    }
    Ok(Host {
        name: name.to_string(),
        launcher,
        max_agents: s.max_agents,
        env: s.env,
        workdir: s.workdir,
        groups: s.groups,
        out_of_rotation_sec: s
            .out_of_rotation_sec
            .unwrap_or(DEFAULT_OUT_OF_ROTATION_SEC)
            .min(24 * 3600),
    })
}

fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, column)
}

fn locate(text: &str, literal: &str) -> Option<(usize, usize)> {
    text.find(literal).map(|offset| line_col(text, offset))
}

/// The argv that runs `script` on `host`: with a terminal for an agent, without for uploads,
/// probes and sweeps. `log_file` gets ssh's own messages (`-E`), away from the agent's output.
pub fn launcher_argv(host: &Host, tty: bool, log_file: Option<&str>, script: &str) -> Vec<String> {
    match &host.launcher {
        Launcher::Ssh(target) => ssh_argv(target, tty, log_file, script),
        Launcher::Exec { template } => {
            let mut argv: Vec<String> = template
                .iter()
                .filter_map(|part| {
                    if part == TTY_PLACEHOLDER {
                        tty.then(|| "-t".to_string())
                    } else {
                        Some(part.clone())
                    }
                })
                .collect();
            argv.extend(["sh".to_string(), "-c".to_string(), script.to_string()]);
            argv
        }
    }
}

fn ssh_argv(target: &SshTarget, tty: bool, log_file: Option<&str>, script: &str) -> Vec<String> {
    let mut argv: Vec<String> = vec!["ssh".into(), if tty { "-tt" } else { "-T" }.into()];
    if let Some(config) = &target.config {
        argv.extend(["-F".into(), config.clone()]);
    }
    // No password prompt (it would hang); keepalives notice a lost host; no INFO in the pane.
    for option in [
        "BatchMode=yes",
        "ConnectTimeout=10",
        "ServerAliveInterval=5",
        "ServerAliveCountMax=3",
        "LogLevel=ERROR",
    ] {
        argv.extend(["-o".into(), option.into()]);
    }
    for option in &target.options {
        argv.extend(["-o".into(), option.clone()]);
    }
    if let Some(port) = target.port {
        argv.extend(["-p".into(), port.to_string()]);
    }
    if let Some(identity) = &target.identity {
        argv.extend(["-i".into(), identity.clone()]);
    }
    if let Some(log) = log_file {
        argv.extend(["-E".into(), log.to_string()]);
    }
    // `sh -c '...'` runs the same under any login shell, as long as the script holds no quote.
    argv.extend([
        "--".into(),
        target.destination.clone(),
        format!("sh -c {}", quote(script)),
    ]);
    argv
}

#[cfg(test)]
#[path = "hosts_tests.rs"]
mod tests;
