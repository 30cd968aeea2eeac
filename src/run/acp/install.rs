//! `herd acp install <id>`, the shell half: download into a staging folder, check the sha256,
//! unpack, move into place in one rename; any failure drops the staging folder.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Command;

use color_eyre::eyre::{Result, WrapErr, bail, eyre};
use sha2::{Digest, Sha256};

use crate::core::wire::acp::install::{InstallPlan, Packing, install_folder, installed_command};
use crate::core::wire::acp::registry::Registry;

/// herd's data folder: `$XDG_DATA_HOME/herd`, else `~/.local/share/herd`.
pub fn data_folder() -> Option<PathBuf> {
    let xdg = std::env::var_os("XDG_DATA_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute());
    let base = xdg.or_else(|| {
        std::env::var_os("HOME")
            .map(PathBuf::from)
            .map(|home| home.join(".local/share"))
    })?;
    Some(base.join("herd"))
}

/// The registry's agents whose copy `herd acp install` left under `data`, by id.
pub fn installed_commands(
    registry: &Registry,
    platform: &str,
    data: &Path,
) -> BTreeMap<String, PathBuf> {
    registry
        .agents
        .iter()
        .filter_map(|agent| {
            let command = installed_command(data, agent, platform)?;
            command.is_file().then(|| (agent.id.clone(), command))
        })
        .collect()
}

/// Installs the plan's archive under `data`; the installed command.
pub fn install(plan: &InstallPlan, data: &Path) -> Result<PathBuf> {
    let root = data.join("acp");
    std::fs::create_dir_all(&root).wrap_err_with(|| format!("creating {}", root.display()))?;
    let staging = tempfile::Builder::new()
        .prefix(".install-")
        .tempdir_in(&root)
        .wrap_err_with(|| format!("creating a staging folder in {}", root.display()))?;
    let archive = staging.path().join("download");
    download(&plan.archive, &archive)?;
    let computed = sha256_of(&archive)?;
    plan.check(&computed)?;
    let unpacked = staging.path().join("unpacked");
    std::fs::create_dir(&unpacked)?;
    unpack(plan.packing, &archive, &unpacked, &plan.command)?;
    let command = unpacked.join(&plan.command);
    if !command.is_file() {
        bail!(
            "the archive has no {}: nothing installed",
            plan.command.display()
        );
    }
    make_executable(&command)?;
    let target = install_folder(data, &plan.id, &plan.version);
    if let Some(parent) = target.parent() {
        std::fs::create_dir_all(parent)?;
    }
    if target.exists() {
        std::fs::remove_dir_all(&target)
            .wrap_err_with(|| format!("replacing {}", target.display()))?;
    }
    std::fs::rename(&unpacked, &target)
        .wrap_err_with(|| format!("moving the agent to {}", target.display()))?;
    Ok(target.join(&plan.command))
}

/// Downloads `url` to `to` with curl (https, or http for a mirror of one's own).
fn download(url: &str, to: &Path) -> Result<()> {
    let status = Command::new("curl")
        .args(["--fail", "--silent", "--show-error", "--location"])
        .args(["--proto", "=https,http", "--output"])
        .arg(to)
        .arg(url)
        .status()
        .wrap_err("running curl to download the agent (is curl installed?)")?;
    if !status.success() {
        bail!("downloading {url} failed ({status}): nothing installed");
    }
    Ok(())
}

/// The file's SHA-256, lowercase hex.
pub fn sha256_of(path: &Path) -> Result<String> {
    let mut file =
        std::fs::File::open(path).wrap_err_with(|| format!("reading {}", path.display()))?;
    let mut hasher = Sha256::new();
    let mut buffer = vec![0u8; 64 * 1024];
    loop {
        let read = file.read(&mut buffer)?;
        if read == 0 {
            break;
        }
        hasher.update(&buffer[..read]);
    }
    Ok(hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect())
}

fn unpack(packing: Packing, archive: &Path, into: &Path, command: &Path) -> Result<()> {
    let mut unpacker = match packing {
        Packing::TarGz | Packing::TarBz2 => {
            let flag = if packing == Packing::TarGz {
                "-xzf"
            } else {
                "-xjf"
            };
            let mut tar = Command::new("tar");
            tar.arg(flag).arg(archive).arg("-C").arg(into);
            tar
        }
        Packing::Zip => {
            let mut unzip = Command::new("unzip");
            unzip.arg("-q").arg(archive).arg("-d").arg(into);
            unzip
        }
        Packing::Raw => {
            let target = into.join(command);
            if let Some(parent) = target.parent() {
                std::fs::create_dir_all(parent)?;
            }
            std::fs::copy(archive, &target)?;
            return Ok(());
        }
    };
    let status = unpacker
        .status()
        .map_err(|e| eyre!("cannot run {unpacker:?}: {e}"))?;
    if !status.success() {
        bail!("unpacking the archive failed ({status}): nothing installed");
    }
    Ok(())
}

fn make_executable(path: &Path) -> Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let mut permissions = std::fs::metadata(path)?.permissions();
    permissions.set_mode(permissions.mode() | 0o111);
    std::fs::set_permissions(path, permissions)?;
    Ok(())
}
