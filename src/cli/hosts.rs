//! `herd hosts check`, and the hosts file loaded for the other commands.

use std::path::PathBuf;

use clap::{Args, Subcommand};
use color_eyre::eyre::Result;

use super::inputs::{EXIT_INVALID, loaded};
use crate::core::profile::ProfileSet;
use crate::core::remote::hosts::{Host, HostSet, Launcher};
use crate::core::remote::script::ProbeFacts;
use crate::run::inputs::load_profiles;
use crate::run::jobs::{self, Job};
use crate::run::remote;

#[derive(Debug, Args, Clone)]
pub struct HostsArgs {
    #[command(subcommand)]
    pub command: HostsCommand,
}

#[derive(Debug, Subcommand, Clone)]
pub enum HostsCommand {
    /// Probe each host through its launcher: reachable, the agent programs present, Node's
    /// version; prints a table (exit 1 when a host cannot be reached)
    Check(HostsCheckArgs),
}

#[derive(Debug, Args, Clone)]
pub struct HostsCheckArgs {
    /// The hosts file (TOML: [hosts.NAME] with ssh = "user@host" or exec = [...])
    #[arg(long, value_name = "FILE")]
    pub hosts: Option<PathBuf>,
    /// The profiles file, for its [hosts] table and the agent programs to look for
    #[arg(long, value_name = "FILE")]
    pub profiles: Option<PathBuf>,
    /// Check only these hosts (repeatable)
    #[arg(long = "only", value_name = "HOST")]
    pub only: Vec<String>,
}

pub fn hosts(args: &HostsArgs) -> Result<i32> {
    match &args.command {
        HostsCommand::Check(check) => hosts_check(check),
    }
}

fn hosts_check(args: &HostsCheckArgs) -> Result<i32> {
    let Some((set, profiles)) = check_inputs(args) else {
        return Ok(EXIT_INVALID);
    };
    let programs = agent_programs(&profiles);
    let chosen: Vec<Host> = set
        .iter()
        .filter(|h| args.only.is_empty() || args.only.contains(&h.name))
        .cloned()
        .collect();
    let handles = start_probes(chosen, &programs);
    let mut rows = vec![vec![
        "HOST".to_string(),
        "LAUNCHER".into(),
        "REACHABLE".into(),
        "AGENTS PRESENT".into(),
        "NODE".into(),
        "NOTE".into(),
    ]];
    let mut unreachable = 0;
    for handle in handles {
        let Some((host, result)) = handle.join() else {
            continue;
        };
        if result.is_err() {
            unreachable += 1;
        }
        rows.push(probe_row(&host, result));
    }
    // The probes (which write into the launchers' pipes) are done: a closed stdout may end us.
    super::closed_pipe::end_quietly_when_stdout_closes();
    print!("{}", table(&rows));
    Ok(if unreachable == 0 { 0 } else { 1 })
}

/// The hosts and profiles `args` name, checked; `None` when there is a problem (said on stderr).
fn check_inputs(args: &HostsCheckArgs) -> Option<(HostSet, ProfileSet)> {
    let set = loaded(crate::run::inputs::load_hosts(
        args.hosts.as_deref(),
        args.profiles.as_deref(),
    ))?;
    let profiles = loaded(load_profiles(args.profiles.as_deref()))?;
    if set.is_empty() {
        eprintln!("herd: no hosts: give --hosts FILE (or a [hosts] table in --profiles FILE)");
        return None;
    }
    for name in &args.only {
        if set.get(name).is_none() {
            eprintln!("herd: --only {name}: no such host");
            return None;
        }
    }
    Some((set, profiles))
}

/// The agent programs to look for on a host: each profile's program, sorted, once each.
fn agent_programs(profiles: &ProfileSet) -> Vec<String> {
    let mut programs: Vec<String> = profiles
        .iter()
        .filter_map(|p| p.command.first().cloned())
        .filter(|p| !p.is_empty() && !p.contains('{'))
        .collect();
    programs.sort();
    programs.dedup();
    programs
}

/// What a probe of a host found, or why it could not reach it.
type Probe = (Host, Result<ProbeFacts, remote::ProbeError>);

/// Each host probed on a thread of its own (here, in turn, when it gets none).
fn start_probes(hosts: Vec<Host>, programs: &[String]) -> Vec<Job<Probe>> {
    hosts
        .into_iter()
        .map(|host| {
            let programs = programs.to_vec();
            let name = format!("probe-{}", host.name);
            jobs::spawn_thread(name, move || {
                let names: Vec<&str> = programs.iter().map(String::as_str).collect();
                let result = if remote::launcher_installed(&host) {
                    remote::probe(&host, &names)
                } else {
                    Err(remote::ProbeError::NoLauncher {
                        launcher: host.program().to_string(),
                    })
                };
                (host, result)
            })
            .unwrap_or_else(|not| Job::done((not.work)()))
        })
        .collect()
}

/// The table's row for `host`: its launcher, whether it was reached, what was found.
fn probe_row(host: &Host, result: Result<ProbeFacts, remote::ProbeError>) -> Vec<String> {
    let launcher = match &host.launcher {
        Launcher::Ssh(t) => format!("ssh {}", t.destination),
        Launcher::Exec { template } => template.join(" "),
    };
    match result {
        Ok(facts) => {
            let present: Vec<&str> = facts
                .programs
                .iter()
                .filter(|(_, path)| !path.is_empty())
                .map(|(name, _)| name.as_str())
                .collect();
            vec![
                host.name.clone(),
                launcher,
                "yes".into(),
                if present.is_empty() {
                    "none".into()
                } else {
                    present.join(" ")
                },
                facts.node.unwrap_or_else(|| "-".into()),
                facts.system.unwrap_or_default(),
            ]
        }
        Err(why) => vec![
            host.name.clone(),
            launcher,
            "no".into(),
            "-".into(),
            "-".into(),
            why.to_string(),
        ],
    }
}

/// Left-aligned columns, two spaces apart; the last column is not padded.
fn table(rows: &[Vec<String>]) -> String {
    let columns = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..columns)
        .map(|c| {
            rows.iter()
                .filter_map(|r| r.get(c))
                .map(|s| s.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for row in rows {
        let mut line = String::new();
        for (c, cell) in row.iter().enumerate() {
            if c + 1 == row.len() {
                line.push_str(cell);
            } else {
                line.push_str(&format!("{cell:<width$}  ", width = widths[c]));
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_lines_up() {
        let rows = vec![
            vec!["HOST".to_string(), "REACHABLE".into(), "NOTE".into()],
            vec!["box-one".into(), "yes".into(), "".into()],
        ];
        assert_eq!(table(&rows), "HOST     REACHABLE  NOTE\nbox-one  yes\n");
    }
}
