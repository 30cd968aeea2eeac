//! The ACP registry: every agent becomes a profile `acp:<id>` running the registry's command at
//! its pinned version under herd's client and guard. npx and uvx distributions run as they are;
//! a binary one runs the copy `herd acp install` made, else its command from `PATH` (herd never
//! downloads by itself). Pure: JSON in, profile TOML out.

use std::path::{Path, PathBuf};

use std::collections::BTreeMap;

use serde::Deserialize;
use thiserror::Error;

/// The registry's index (`registry.json`), as far as herd reads it.
#[derive(Debug, Clone, Deserialize)]
pub struct Registry {
    pub agents: Vec<Agent>,
    /// Where herd's snapshot came from (`scripts/acp-registry refresh`).
    #[serde(rename = "_source", default)]
    pub source: Option<String>,
    /// When herd's snapshot was taken.
    #[serde(rename = "_snapshot", default)]
    pub snapshot: Option<String>,
}

/// One agent of the registry.
#[derive(Debug, Clone, Deserialize)]
pub struct Agent {
    pub id: String,
    pub name: String,
    pub version: String,
    #[serde(default)]
    pub description: String,
    pub distribution: Distribution,
}

/// How an agent is distributed.
#[derive(Debug, Clone, Deserialize, Default)]
pub struct Distribution {
    pub npx: Option<Package>,
    pub uvx: Option<Package>,
    #[serde(default)]
    pub binary: BTreeMap<String, Binary>,
}

/// A package run by its registry's runner.
#[derive(Debug, Clone, Deserialize)]
pub struct Package {
    /// `@scope/name@1.2.3` (npm) or `name==1.2.3` / `name@1.2.3` (PyPI).
    pub package: String,
    #[serde(default)]
    pub args: Vec<String>,
    #[serde(default)]
    pub env: BTreeMap<String, String>,
}

/// A platform's binary.
#[derive(Debug, Clone, Deserialize)]
pub struct Binary {
    pub archive: String,
    /// The archive's SHA-256 (hex), when the registry gives one.
    #[serde(default)]
    pub sha256: Option<String>,
    pub cmd: String,
    #[serde(default)]
    pub args: Vec<String>,
    #[serde(default)]
    pub env: BTreeMap<String, String>,
}

/// What is wrong with a registry text.
#[derive(Debug, Error, PartialEq)]
pub enum RegistryError {
    #[error("the ACP registry snapshot does not read: {0}")]
    Json(String),
}

/// How herd starts an agent of the registry on this platform.
#[derive(Debug, Clone, PartialEq)]
pub struct Launch {
    pub command: Vec<String>,
    pub env: BTreeMap<String, String>,
    /// `npx @qwen-code/qwen-code@0.9.1`, or what the operator must install.
    pub how: String,
}

/// The profile name of a registry agent.
pub fn profile_name(id: &str) -> String {
    format!("acp:{id}")
}

impl Registry {
    pub fn parse(text: &str) -> Result<Registry, RegistryError> {
        serde_json::from_str(text).map_err(|e| RegistryError::Json(e.to_string()))
    }

    /// Every agent as a profile `acp:<id>` in TOML (`protocol = "acp"`).
    pub fn profiles_toml(&self, platform: &str) -> String {
        self.profiles_toml_with(platform, &BTreeMap::new())
    }

    /// `profiles_toml`, binary agents running their copies in `installed`.
    pub fn profiles_toml_with(
        &self,
        platform: &str,
        installed: &BTreeMap<String, PathBuf>,
    ) -> String {
        let mut text = String::new();
        for agent in &self.agents {
            let copy = installed.get(&agent.id).map(PathBuf::as_path);
            let launch = agent.launch_with(platform, copy);
            let mut profile = toml::Table::new();
            profile.insert(
                "description".into(),
                format!("{} from the ACP registry ({})", agent.name, launch.how).into(),
            );
            profile.insert("command".into(), launch.command.clone().into());
            profile.insert("protocol".into(), "acp".into());
            if !launch.env.is_empty() {
                let env: toml::Table = launch
                    .env
                    .iter()
                    .map(|(k, v)| (k.clone(), toml::Value::from(v.clone())))
                    .collect();
                profile.insert("env".into(), env.into());
            }
            // The client could not start the agent (exit 78): the program is missing.
            profile.insert(
                "config".into(),
                vec!["^herd: cannot start the ACP agent".to_string()].into(),
            );
            profile.insert("config_exit_codes".into(), vec![78].into());
            let mut profiles = toml::Table::new();
            profiles.insert(profile_name(&agent.id), profile.into());
            let mut file = toml::Table::new();
            file.insert("profiles".into(), profiles.into());
            text.push_str(&file.to_string());
            text.push('\n');
        }
        text
    }
}

impl Agent {
    /// The command that starts the agent: npx, then uvx, then the platform's binary.
    pub fn launch(&self, platform: &str) -> Launch {
        self.launch_with(platform, None)
    }

    /// `launch`, a binary agent running `installed` (its `herd acp install` copy) when given.
    pub fn launch_with(&self, platform: &str, installed: Option<&Path>) -> Launch {
        let dist = &self.distribution;
        if let Some(npx) = &dist.npx {
            let mut command = vec!["npx".into(), "--yes".into(), npx.package.clone()];
            command.extend(npx.args.iter().cloned());
            return Launch {
                command,
                env: npx.env.clone(),
                how: format!("npx {}", npx.package),
            };
        }
        if let Some(uvx) = &dist.uvx {
            let mut command = vec!["uvx".into(), uvx.package.clone()];
            command.extend(uvx.args.iter().cloned());
            return Launch {
                command,
                env: uvx.env.clone(),
                how: format!("uvx {}", uvx.package),
            };
        }
        let binary = dist
            .binary
            .get(platform)
            .or_else(|| dist.binary.values().next());
        match binary {
            Some(binary) if installed.is_some() => {
                let path = installed
                    .map(|p| p.display().to_string())
                    .unwrap_or_default();
                let mut command = vec![path.clone()];
                command.extend(binary.args.iter().cloned());
                Launch {
                    command,
                    env: binary.env.clone(),
                    how: format!(
                        "a binary, {} {}, installed at {path}",
                        self.id, self.version
                    ),
                }
            }
            Some(binary) => {
                let program = binary.cmd.rsplit('/').next().unwrap_or(&binary.cmd);
                let program = program.strip_suffix(".exe").unwrap_or(program);
                let mut command = vec![program.to_string()];
                command.extend(binary.args.iter().cloned());
                Launch {
                    command,
                    env: binary.env.clone(),
                    how: format!(
                        "a binary, {} {}: install it with `herd acp install {}` (or on PATH \
                         yourself); herd downloads no binaries by itself",
                        self.id, self.version, self.id
                    ),
                }
            }
            None => Launch {
                command: Vec::new(),
                env: BTreeMap::new(),
                how: "no distribution herd can run; give the task a command".into(),
            },
        }
    }
}

/// This machine's platform in the registry's words (`linux-x86_64`, `darwin-aarch64`, …).
pub fn platform(os: &str, arch: &str) -> String {
    let os = match os {
        "macos" => "darwin",
        other => other,
    };
    format!("{os}-{arch}")
}

#[cfg(test)]
mod tests {
    use super::*;

    const SNAPSHOT: &str = include_str!("../../../../assets/acp/registry.json");

    #[test]
    fn the_snapshot_reads_and_every_agent_becomes_a_profile() {
        let registry = Registry::parse(SNAPSHOT).expect("the vendored snapshot reads");
        assert!(registry.agents.len() >= 5, "{}", registry.agents.len());
        let text = registry.profiles_toml("linux-x86_64");
        let set = crate::core::profile::ProfileSet::build(&[&text], None)
            .expect("every registry profile compiles");
        for agent in &registry.agents {
            let profile = set
                .get(&profile_name(&agent.id))
                .expect("a profile per agent");
            assert_eq!(profile.protocol, crate::core::profile::Protocol::Acp);
            // herd's ACP dialog rules: `auto_press_1` means allow once.
            assert!(
                profile.prompts.iter().any(|p| p.name == "press_1"),
                "{}",
                agent.id
            );
        }
    }

    #[test]
    fn npx_and_uvx_run_at_the_pin_and_a_binary_is_never_downloaded() {
        let registry = Registry::parse(
            r#"{"agents": [
            {"id": "a", "name": "A", "version": "1.2.3", "distribution":
              {"npx": {"package": "@s/a@1.2.3", "args": ["--acp"], "env": {"X": "1"}}}},
            {"id": "b", "name": "B", "version": "2.0.0", "distribution":
              {"uvx": {"package": "b-cli==2.0.0", "args": ["acp"]}}},
            {"id": "c", "name": "C", "version": "3", "distribution": {"binary": {
              "linux-x86_64": {"archive": "https://example.invalid/c.tgz", "cmd": "./c", "args": ["acp"]},
              "darwin-aarch64": {"archive": "https://example.invalid/c-mac.zip", "cmd": "./c-mac"}}}}
        ]}"#,
        )
        .expect("reads");
        let launches: Vec<Launch> = registry
            .agents
            .iter()
            .map(|a| a.launch("linux-x86_64"))
            .collect();
        assert_eq!(launches[0].command, ["npx", "--yes", "@s/a@1.2.3", "--acp"]);
        assert_eq!(launches[0].env.get("X").map(String::as_str), Some("1"));
        assert_eq!(launches[1].command, ["uvx", "b-cli==2.0.0", "acp"]);
        assert_eq!(launches[2].command, ["c", "acp"]);
        assert!(launches[2].how.contains("herd downloads no binaries"));
        assert_eq!(
            registry.agents[2].launch("darwin-aarch64").command,
            ["c-mac"]
        );
        // Once the operator installed it, its copy runs.
        let copy = Path::new("/data/acp/c/3/c");
        let installed = registry.agents[2].launch_with("linux-x86_64", Some(copy));
        assert_eq!(installed.command, ["/data/acp/c/3/c", "acp"]);
        let toml = registry.profiles_toml_with(
            "linux-x86_64",
            &[("c".to_string(), copy.to_path_buf())].into(),
        );
        assert!(
            toml.contains(r#"command = ["/data/acp/c/3/c", "acp"]"#),
            "{toml}"
        );
    }

    #[test]
    fn platforms_are_named_as_the_registry_names_them() {
        assert_eq!(platform("linux", "x86_64"), "linux-x86_64");
        assert_eq!(platform("macos", "aarch64"), "darwin-aarch64");
        assert!(Registry::parse("{").is_err());
    }
}
