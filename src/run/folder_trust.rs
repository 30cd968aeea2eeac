//! `trust_folder`: the operator's trust written into the CLI's config before the agent starts,
//! on the preparation worker. The file is replaced in one rename, keeping its permissions, under
//! Claude Code's own lock (`config_lock`) and one edit at a time in this process, so tasks
//! starting side by side never lose each other's entries.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use super::config_lock::{ConfigLock, STALE};
use crate::core::profile::folder_trust::{self, FolderTrust, TrustedCli};

/// One config edit at a time in this process.
static EDITING: Mutex<()> = Mutex::new(());

/// How long an edit waits for the lock: past `STALE`, so a dead holder's lock is taken over.
const LOCK_WAIT: Duration = STALE.saturating_add(Duration::from_secs(5));

/// Trusts `trust.folder` in its CLI's config for an agent with `env`; the file, or why not.
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
    let _one_at_a_time = EDITING.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(dir) = file.parent() {
        std::fs::create_dir_all(dir).map_err(|e| why("make the folder of", &e))?;
    }
    let _locked = ConfigLock::acquire(&file, LOCK_WAIT).map_err(|e| why("lock", &e))?;
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

    /// A home holding `.claude.json` with `text`: the home, the file, an agent environment with
    /// that `HOME`.
    fn claude_home(text: &str) -> (tempfile::TempDir, PathBuf, BTreeMap<String, String>) {
        let home = tempfile::tempdir().expect("home");
        let config = home.path().join(".claude.json");
        std::fs::write(&config, text).expect("config");
        let env = BTreeMap::from([("HOME".to_string(), home.path().display().to_string())]);
        (home, config, env)
    }

    fn json_of(file: &Path) -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(file).expect("read")).expect("json")
    }

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
        let (_home, config, env) = claude_home(r#"{"hasCompletedOnboarding": true}"#);
        let written = trust_folder(&env, &claude("/w/p")).expect("trusted");
        assert_eq!(written, config);
        let doc = json_of(&config);
        assert_eq!(doc["hasCompletedOnboarding"], true);
        assert_eq!(doc["projects"]["/w/p"]["hasTrustDialogAccepted"], true);
    }

    #[test]
    fn tasks_trusting_their_folders_at_once_in_one_file_keep_every_entry() {
        let (home, config, env) = claude_home(r#"{"hasCompletedOnboarding": true}"#);
        let start = std::sync::Arc::new(std::sync::Barrier::new(16));
        let workers: Vec<_> = (0..16)
            .map(|i| {
                let (env, start) = (env.clone(), start.clone());
                std::thread::spawn(move || {
                    start.wait();
                    trust_folder(&env, &claude(&format!("/w/task{i}")))
                })
            })
            .collect();
        for worker in workers {
            worker.join().expect("worker").expect("trusted");
        }
        let doc = json_of(&config);
        for i in 0..16 {
            assert_eq!(
                doc["projects"][format!("/w/task{i}")]["hasTrustDialogAccepted"],
                true,
                "task {i} lost its trust: {doc}"
            );
        }
        assert_eq!(doc["hasCompletedOnboarding"], true);
        assert!(!home.path().join(".claude.json.lock").exists(), "released");
    }

    #[test]
    fn an_edit_waits_while_claude_code_holds_its_config_lock() {
        let (home, config, env) = claude_home("{}");
        // Claude Code's lock (`proper-lockfile`: a folder beside the file), held for 300 ms.
        let lock = home.path().join(".claude.json.lock");
        std::fs::create_dir(&lock).expect("held");
        let holder = {
            let (lock, config) = (lock.clone(), config.clone());
            std::thread::spawn(move || {
                std::thread::sleep(std::time::Duration::from_millis(300));
                // What the holder writes while it holds the lock is kept.
                std::fs::write(&config, r#"{"numStartups": 7}"#).expect("its write");
                std::fs::remove_dir(&lock).expect("released");
            })
        };
        trust_folder(&env, &claude("/w/p")).expect("trusted once released");
        holder.join().expect("holder");
        let doc = json_of(&config);
        assert_eq!(doc["numStartups"], 7, "{doc}");
        assert_eq!(
            doc["projects"]["/w/p"]["hasTrustDialogAccepted"], true,
            "{doc}"
        );
    }

    #[test]
    fn a_config_that_is_not_json_is_never_overwritten() {
        let (_home, config, env) = claude_home("{not json");
        let error = trust_folder(&env, &claude("/w/p")).expect_err("refused");
        assert!(error.contains("trust_folder"), "{error}");
        assert_eq!(std::fs::read_to_string(&config).expect("read"), "{not json");
    }
}
