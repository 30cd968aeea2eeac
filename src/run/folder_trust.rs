//! `trust_folder`: the operator's trust in a task's folder written into the CLI's config before
//! the agent starts (`core::folder_trust` says what changes; this reads and writes the file, on
//! the preparation worker). The file is replaced in one rename, so the CLI never reads half of
//! it, and keeps its permissions.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::core::folder_trust;

/// Trusts `folder` in the Claude Code config the agent with environment `env` reads; the
/// config file written, or why it could not be.
pub fn trust_claude_folder(
    env: &BTreeMap<String, String>,
    folder: &Path,
) -> Result<PathBuf, String> {
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .unwrap_or_default();
    let file = folder_trust::claude_config_file(
        env.get("CLAUDE_CONFIG_DIR").map(String::as_str),
        env.get("HOME").map(String::as_str),
        &home,
    );
    let why = |what: &str, e: &dyn std::fmt::Display| {
        format!("trust_folder: cannot {what} {}: {e}", file.display())
    };
    let existing = match std::fs::read_to_string(&file) {
        Ok(text) => Some(text),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(why("read", &e)),
    };
    let text =
        folder_trust::claude_config_with_trust(existing.as_deref(), &folder.display().to_string())
            .map_err(|e| why("update", &e))?;
    let dir = file.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(|e| why("make the folder of", &e))?;
    let mut temp = tempfile::NamedTempFile::new_in(dir).map_err(|e| why("write beside", &e))?;
    temp.write_all(text.as_bytes())
        .map_err(|e| why("write", &e))?;
    if let Ok(meta) = std::fs::metadata(&file) {
        let _ = temp.as_file().set_permissions(meta.permissions());
    }
    temp.persist(&file).map_err(|e| why("replace", &e.error))?;
    Ok(file)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_trust_lands_in_the_agents_config_and_the_rest_stays() {
        let home = tempfile::tempdir().expect("home");
        let config = home.path().join(".claude.json");
        std::fs::write(&config, r#"{"hasCompletedOnboarding": true}"#).expect("config");
        let env = BTreeMap::from([("HOME".to_string(), home.path().display().to_string())]);
        let written = trust_claude_folder(&env, Path::new("/w/p")).expect("trusted");
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
        let error = trust_claude_folder(&env, Path::new("/w/p")).expect_err("refused");
        assert!(error.contains("trust_folder"), "{error}");
        assert_eq!(std::fs::read_to_string(&config).expect("read"), "{not json");
    }
}
