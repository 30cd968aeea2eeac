//! `trust_folder`: the operator's trust in a task's folder written into the CLI's config before
//! the agent starts (`core::folder_trust` says what changes; this reads and writes the file, on
//! the preparation worker). The file is replaced in one rename, so the CLI never reads half of
//! it, and keeps its permissions.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::core::folder_trust::{self, FolderTrust, TrustedCli};

/// Trusts `trust.folder` in the config of its CLI that the agent with environment `env` reads;
/// the file written, or why it could not be.
pub fn trust_folder(
    env: &BTreeMap<String, String>,
    trust: &FolderTrust,
) -> Result<PathBuf, String> {
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .unwrap_or_default();
    // The agent's environment is herd's own with the task's and profile's `env` over it.
    let var = |name: &str| env.get(name).cloned().or_else(|| std::env::var(name).ok());
    let env_home = var("HOME");
    let file = match trust.cli {
        TrustedCli::Claude => folder_trust::claude_config_file(
            var("CLAUDE_CONFIG_DIR").as_deref(),
            env_home.as_deref(),
            &home,
        ),
        TrustedCli::Codex => folder_trust::codex_config_file(
            var("CODEX_HOME").as_deref(),
            env_home.as_deref(),
            &home,
        ),
        TrustedCli::Gemini => folder_trust::gemini_trusted_folders_file(
            var("GEMINI_CLI_TRUSTED_FOLDERS_PATH").as_deref(),
            var("GEMINI_CLI_HOME").as_deref(),
            env_home.as_deref(),
            &home,
        ),
    };
    let why = |what: &str, e: &dyn std::fmt::Display| {
        format!("trust_folder: cannot {what} {}: {e}", file.display())
    };
    let existing = match std::fs::read_to_string(&file) {
        Ok(text) => Some(text),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(why("read", &e)),
    };
    let folder = trust.folder.display().to_string();
    let text = match trust.cli {
        TrustedCli::Claude => folder_trust::claude_config_with_trust(existing.as_deref(), &folder),
        TrustedCli::Codex => folder_trust::codex_config_with_trust(existing.as_deref(), &folder),
        TrustedCli::Gemini => {
            folder_trust::gemini_trusted_folders_with_trust(existing.as_deref(), &folder)
        }
    }
    .map_err(|e| why("update", &e))?;
    if existing.as_deref() == Some(text.as_str()) {
        return Ok(file);
    }
    replace(&file, &text).map_err(|e| why("write", &e))?;
    Ok(file)
}

/// `file` replaced by `text` in one rename (its permissions kept), its folder made if needed.
fn replace(file: &Path, text: &str) -> std::io::Result<()> {
    let dir = file.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let mut temp = tempfile::NamedTempFile::new_in(dir)?;
    temp.write_all(text.as_bytes())?;
    if let Ok(meta) = std::fs::metadata(file) {
        temp.as_file().set_permissions(meta.permissions())?;
    }
    temp.persist(file).map_err(|e| e.error)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claude(folder: &str) -> FolderTrust {
        FolderTrust {
            cli: TrustedCli::Claude,
            folder: PathBuf::from(folder),
        }
    }

    #[test]
    fn codex_and_gemini_trust_land_in_their_files_beside_the_users_entries() {
        let home = tempfile::tempdir().expect("home");
        let codex_home = home.path().join("codex");
        std::fs::create_dir_all(&codex_home).expect("codex home");
        let config = codex_home.join("config.toml");
        std::fs::write(&config, "model = \"o3\"\n").expect("config");
        let env = BTreeMap::from([
            ("HOME".to_string(), home.path().display().to_string()),
            ("CODEX_HOME".to_string(), codex_home.display().to_string()),
        ]);
        let codex = FolderTrust {
            cli: TrustedCli::Codex,
            folder: PathBuf::from("/w/p"),
        };
        assert_eq!(trust_folder(&env, &codex).expect("codex"), config);
        let text = std::fs::read_to_string(&config).expect("read");
        assert!(text.starts_with("model = \"o3\"\n"), "{text}");
        assert!(
            text.contains("[projects.\"/w/p\"]\ntrust_level = \"trusted\""),
            "{text}"
        );

        let gemini = FolderTrust {
            cli: TrustedCli::Gemini,
            folder: PathBuf::from("/w/p"),
        };
        let folders = home.path().join(".gemini").join("trustedFolders.json");
        assert_eq!(trust_folder(&env, &gemini).expect("gemini"), folders);
        let doc: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&folders).expect("read")).expect("json");
        assert_eq!(doc["/w/p"], "TRUST_FOLDER");
    }

    #[test]
    fn the_trust_lands_in_the_agents_config_and_the_rest_stays() {
        let home = tempfile::tempdir().expect("home");
        let config = home.path().join(".claude.json");
        std::fs::write(&config, r#"{"hasCompletedOnboarding": true}"#).expect("config");
        let env = BTreeMap::from([("HOME".to_string(), home.path().display().to_string())]);
        let written = trust_folder(&env, &claude("/w/p")).expect("trusted");
        assert_eq!(written, config);
        let doc: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&config).expect("read")).expect("json");
        assert_eq!(doc["hasCompletedOnboarding"], true);
        assert_eq!(doc["projects"]["/w/p"]["hasTrustDialogAccepted"], true);
    }

    #[test]
    fn a_config_that_is_not_json_is_never_overwritten() {
        let home = tempfile::tempdir().expect("home");
        let config = home.path().join(".claude.json");
        std::fs::write(&config, "{not json").expect("config");
        let env = BTreeMap::from([("HOME".to_string(), home.path().display().to_string())]);
        let error = trust_folder(&env, &claude("/w/p")).expect_err("refused");
        assert!(error.contains("trust_folder"), "{error}");
        assert_eq!(std::fs::read_to_string(&config).expect("read"), "{not json");
    }
}
