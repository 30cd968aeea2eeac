//! What `herd acp install <id>` decides about a binary agent: the archive for this platform, its
//! packing, the sha256 it must have (the registry's, else the operator's; with neither, herd
//! refuses and says the digest), and where its command is. Pure.

use std::path::{Component, Path, PathBuf};

use thiserror::Error;

use super::registry::{Agent, Binary};

/// How an archive is packed, by its name (the registry's formats less the installers).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Packing {
    TarGz,
    TarBz2,
    Zip,
    /// The download is the program itself.
    Raw,
}

/// Why an agent is not installed.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum InstallError {
    #[error("no agent {id:?} in the ACP registry")]
    UnknownAgent { id: String },
    #[error(
        "{id} is not distributed as a binary for {platform} (it runs through npx or uvx, or \
         not on this platform): nothing to install"
    )]
    NoBinary { id: String, platform: String },
    #[error("{given:?} is not a sha256 digest (64 hexadecimal digits)")]
    BadDigest { given: String },
    #[error(
        "the digest given ({given}) differs from the registry's ({registry}) for {id}: \
         nothing installed"
    )]
    Conflict {
        id: String,
        given: String,
        registry: String,
    },
    #[error(
        "the registry gives no sha256 for {id}'s archive and none was passed: nothing \
         installed. Its sha256 is {computed}; check it with the vendor, then run \
         `herd acp install {id} --sha256 {computed}`"
    )]
    Unpinned { id: String, computed: String },
    #[error("{id}'s archive has sha256 {computed}, not the expected {expected}: nothing installed")]
    Mismatch {
        id: String,
        expected: String,
        computed: String,
    },
    #[error("the archive's command {cmd:?} leaves the agent's folder: nothing installed")]
    UnsafeCommand { cmd: String },
}

/// One install: the agent, its archive for this platform and the digest it must have.
#[derive(Debug, Clone, PartialEq)]
pub struct InstallPlan {
    pub id: String,
    pub version: String,
    pub archive: String,
    pub packing: Packing,
    /// Lowercase hex; `None`: neither the registry nor the operator gave one.
    pub expected: Option<String>,
    /// The command inside the unpacked folder (`droid`, `bin/kimi`).
    pub command: PathBuf,
}

impl InstallPlan {
    /// The plan for `agent` on `platform`, with the operator's `--sha256` if any.
    pub fn new(
        agent: &Agent,
        platform: &str,
        given: Option<&str>,
    ) -> Result<InstallPlan, InstallError> {
        let binary =
            agent
                .distribution
                .binary
                .get(platform)
                .ok_or_else(|| InstallError::NoBinary {
                    id: agent.id.clone(),
                    platform: platform.to_string(),
                })?;
        Ok(InstallPlan {
            id: agent.id.clone(),
            version: agent.version.clone(),
            archive: binary.archive.clone(),
            packing: packing(&binary.archive),
            expected: expected_digest(&agent.id, binary, given)?,
            command: command_in_folder(&binary.cmd)?,
        })
    }

    /// Whether the archive, by its computed digest, may be installed.
    pub fn check(&self, computed: &str) -> Result<(), InstallError> {
        let computed = computed.to_ascii_lowercase();
        match &self.expected {
            None => Err(InstallError::Unpinned {
                id: self.id.clone(),
                computed,
            }),
            Some(expected) if *expected != computed => Err(InstallError::Mismatch {
                id: self.id.clone(),
                expected: expected.clone(),
                computed,
            }),
            Some(_) => Ok(()),
        }
    }
}

/// The packing of an archive by the end of its URL (its query left out).
pub fn packing(url: &str) -> Packing {
    let path = url
        .split(['?', '#'])
        .next()
        .unwrap_or(url)
        .to_ascii_lowercase();
    if path.ends_with(".tar.gz") || path.ends_with(".tgz") {
        Packing::TarGz
    } else if path.ends_with(".tar.bz2") || path.ends_with(".tbz2") {
        Packing::TarBz2
    } else if path.ends_with(".zip") {
        Packing::Zip
    } else {
        Packing::Raw
    }
}

/// The registry's digest and the operator's must agree; either one is enough.
fn expected_digest(
    id: &str,
    binary: &Binary,
    given: Option<&str>,
) -> Result<Option<String>, InstallError> {
    let given = given.map(normalized).transpose()?;
    let registry = binary.sha256.as_deref().map(normalized).transpose()?;
    match (given, registry) {
        (Some(given), Some(registry)) if given != registry => Err(InstallError::Conflict {
            id: id.to_string(),
            given,
            registry,
        }),
        (given, registry) => Ok(registry.or(given)),
    }
}

fn normalized(digest: &str) -> Result<String, InstallError> {
    let digest = digest.trim();
    if digest.len() == 64 && digest.chars().all(|c| c.is_ascii_hexdigit()) {
        Ok(digest.to_ascii_lowercase())
    } else {
        Err(InstallError::BadDigest {
            given: digest.to_string(),
        })
    }
}

/// The registry's `cmd` as a path inside the agent's folder; one that climbs out is refused.
fn command_in_folder(cmd: &str) -> Result<PathBuf, InstallError> {
    let path = Path::new(cmd);
    let inside: PathBuf = path
        .components()
        .filter(|c| *c != Component::CurDir)
        .collect();
    let escapes = path.components().any(|c| {
        matches!(
            c,
            Component::ParentDir | Component::RootDir | Component::Prefix(_)
        )
    });
    if escapes || inside.as_os_str().is_empty() {
        return Err(InstallError::UnsafeCommand {
            cmd: cmd.to_string(),
        });
    }
    Ok(inside)
}

/// Where an agent's version is installed, under herd's data folder.
pub fn install_folder(data: &Path, id: &str, version: &str) -> PathBuf {
    data.join("acp").join(id).join(version)
}

/// The installed command of `agent` on `platform` under `data`, whether or not it exists.
pub fn installed_command(data: &Path, agent: &Agent, platform: &str) -> Option<PathBuf> {
    let binary = agent.distribution.binary.get(platform)?;
    let command = command_in_folder(&binary.cmd).ok()?;
    Some(install_folder(data, &agent.id, &agent.version).join(command))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::wire::acp::registry::Registry;

    const DIGEST: &str = "5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03";

    fn registry(sha256: Option<&str>) -> Registry {
        let pin = sha256
            .map(|d| format!(r#", "sha256": "{d}""#))
            .unwrap_or_default();
        Registry::parse(&format!(
            r#"{{"agents": [{{"id": "c", "name": "C", "version": "3.0.0", "distribution": {{"binary": {{
              "linux-x86_64": {{"archive": "https://example.invalid/c.tar.gz?x=1", "cmd": "./bin/c"{pin}}}}}}}}},
              {{"id": "n", "name": "N", "version": "1.0.0", "distribution": {{"npx": {{"package": "n@1"}}}}}}]}}"#
        ))
        .expect("reads")
    }

    #[test]
    fn the_registrys_digest_or_the_operators_decides_and_they_must_agree() {
        let pinned = registry(Some(DIGEST));
        let plan = InstallPlan::new(&pinned.agents[0], "linux-x86_64", None).expect("a plan");
        assert_eq!(plan.packing, Packing::TarGz);
        assert_eq!(plan.command, PathBuf::from("bin/c"));
        assert_eq!(plan.check(&DIGEST.to_uppercase()), Ok(()));
        assert!(matches!(
            plan.check(&"0".repeat(64)),
            Err(InstallError::Mismatch { .. })
        ));
        let other = "a".repeat(64);
        assert!(matches!(
            InstallPlan::new(&pinned.agents[0], "linux-x86_64", Some(&other)),
            Err(InstallError::Conflict { .. })
        ));
        let unpinned = registry(None);
        let plan = InstallPlan::new(&unpinned.agents[0], "linux-x86_64", None).expect("a plan");
        let refused = plan.check(DIGEST).expect_err("no digest, no install");
        assert!(
            refused.to_string().contains(&format!("--sha256 {DIGEST}")),
            "{refused}"
        );
        let plan =
            InstallPlan::new(&unpinned.agents[0], "linux-x86_64", Some(DIGEST)).expect("a plan");
        assert_eq!(plan.check(DIGEST), Ok(()));
    }

    #[test]
    fn only_a_binary_for_this_platform_and_a_safe_command_install() {
        let unpinned = registry(None);
        assert!(matches!(
            InstallPlan::new(&unpinned.agents[0], "darwin-aarch64", None),
            Err(InstallError::NoBinary { .. })
        ));
        assert!(matches!(
            InstallPlan::new(&unpinned.agents[1], "linux-x86_64", None),
            Err(InstallError::NoBinary { .. })
        ));
        assert!(matches!(
            InstallPlan::new(&unpinned.agents[0], "linux-x86_64", Some("xyz")),
            Err(InstallError::BadDigest { .. })
        ));
        assert!(command_in_folder("../../bin/sh").is_err());
        assert!(command_in_folder("/bin/sh").is_err());
        assert_eq!(packing("https://h/a.ZIP"), Packing::Zip);
        assert_eq!(packing("https://h/a.tbz2"), Packing::TarBz2);
        assert_eq!(packing("https://h/agent"), Packing::Raw);
        assert_eq!(
            installed_command(Path::new("/d"), &unpinned.agents[0], "linux-x86_64"),
            Some(PathBuf::from("/d/acp/c/3.0.0/bin/c"))
        );
    }
}
