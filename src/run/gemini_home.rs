//! A Gemini CLI home of the attempt's own, so herd's `BeforeTool` hook is in Gemini's user
//! settings without a byte of the user's files changing. Gemini reads hooks from settings files
//! only, and `GEMINI_CLI_HOME` moves its home: herd builds one in the hook listener's private
//! folder whose `.gemini` links every entry of the user's (their writes land in the user's
//! files) except `settings.json`, the user's settings plus herd's hook. What Gemini creates anew
//! there goes with the attempt.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::core::wire::hook;

/// The variable that moves Gemini's home.
pub const HOME_ENV: &str = "GEMINI_CLI_HOME";
/// The variable that names Gemini's trusted-folders file.
const TRUSTED_FOLDERS_ENV: &str = "GEMINI_CLI_TRUSTED_FOLDERS_PATH";
const GEMINI_DIR: &str = ".gemini";
const AGENTS_DIR: &str = ".agents";
const SETTINGS_FILE: &str = "settings.json";
const TRUSTED_FOLDERS_FILE: &str = "trustedFolders.json";

/// Builds the attempt's Gemini home under `dir` with the hook running `herd_exe hook` given
/// `hook_env`. Returns the variables that point Gemini at it.
pub fn prepare(
    dir: &Path,
    agent_env: &BTreeMap<String, String>,
    herd_exe: &str,
    hook_env: &[(String, String)],
) -> std::io::Result<Vec<(String, String)>> {
    let var = |name: &str| {
        agent_env
            .get(name)
            .cloned()
            .or_else(|| std::env::var(name).ok())
            .filter(|v| !v.is_empty())
    };
    let real_home = var(HOME_ENV)
        .or_else(|| var("HOME"))
        .map(PathBuf::from)
        .ok_or_else(|| std::io::Error::other("no HOME to find Gemini's folder in"))?;
    let real = real_home.join(GEMINI_DIR);
    let home = dir.join("gemini-home");
    let ours = home.join(GEMINI_DIR);
    std::fs::create_dir_all(&ours)?;
    link_entries(&real, &ours)?;
    let agents = real_home.join(AGENTS_DIR);
    if agents.exists() {
        std::os::unix::fs::symlink(&agents, home.join(AGENTS_DIR))?;
    }
    let existing = match std::fs::read_to_string(real.join(SETTINGS_FILE)) {
        Ok(text) => Some(text),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => None,
        Err(error) => return Err(error),
    };
    let settings =
        hook::gemini_settings(existing.as_deref(), herd_exe, hook_env).map_err(|why| {
            std::io::Error::other(format!("{}: {why}", real.join(SETTINGS_FILE).display()))
        })?;
    write_private(&ours.join(SETTINGS_FILE), settings.as_bytes())?;
    let mut env = vec![(HOME_ENV.to_string(), home.display().to_string())];
    if var(TRUSTED_FOLDERS_ENV).is_none() {
        let trusted = real.join(TRUSTED_FOLDERS_FILE);
        env.push((
            TRUSTED_FOLDERS_ENV.to_string(),
            trusted.display().to_string(),
        ));
    }
    Ok(env)
}

/// A new file at `path` only this user can read (it holds the hook's token).
fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)?;
    file.write_all(bytes)
}

/// A link in `ours` to every entry of `real` (when it exists) but the settings file.
fn link_entries(real: &Path, ours: &Path) -> std::io::Result<()> {
    let entries = match std::fs::read_dir(real) {
        Ok(entries) => entries,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(error) => return Err(error),
    };
    for entry in entries {
        let name = entry?.file_name();
        if name != SETTINGS_FILE {
            std::os::unix::fs::symlink(real.join(&name), ours.join(&name))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;
    use std::os::unix::fs::PermissionsExt;

    fn env_of(home: &Path) -> BTreeMap<String, String> {
        BTreeMap::from([("HOME".to_string(), home.display().to_string())])
    }

    #[test]
    fn the_attempts_home_sees_the_users_folder_with_the_hook_added() {
        let user = tempfile::tempdir().expect("home");
        let real = user.path().join(".gemini");
        std::fs::create_dir_all(real.join("tmp")).expect("tmp");
        std::fs::write(real.join("settings.json"), r#"{"ui": {"theme": "ANSI"}}"#).expect("s");
        std::fs::write(real.join("oauth_creds.json"), "{}").expect("creds");
        std::fs::create_dir_all(user.path().join(".agents")).expect("agents");
        let before = std::fs::read_to_string(real.join("settings.json")).expect("read");
        let attempt = tempfile::tempdir().expect("attempt");
        let hook_env = [("HERD_HOOK_SOCKET".to_string(), "/run/h.sock".to_string())];
        let env =
            prepare(attempt.path(), &env_of(user.path()), "/bin/herd", &hook_env).expect("prepare");
        let home = attempt.path().join("gemini-home");
        assert_eq!(env[0], (HOME_ENV.to_string(), home.display().to_string()));
        assert_eq!(
            env[1],
            (
                TRUSTED_FOLDERS_ENV.to_string(),
                real.join("trustedFolders.json").display().to_string()
            )
        );
        let ours = home.join(".gemini");
        assert_eq!(
            std::fs::read_link(ours.join("tmp")).expect("link"),
            real.join("tmp")
        );
        assert_eq!(
            std::fs::read_link(ours.join("oauth_creds.json")).expect("link"),
            real.join("oauth_creds.json")
        );
        assert!(std::fs::read_link(home.join(".agents")).is_ok());
        let settings = ours.join("settings.json");
        let doc: Value =
            serde_json::from_str(&std::fs::read_to_string(&settings).expect("read")).expect("json");
        assert_eq!(doc["ui"]["theme"], "ANSI");
        let hook = &doc["hooks"]["BeforeTool"][0]["hooks"][0];
        assert_eq!(hook["command"], "/bin/herd hook");
        assert_eq!(hook["env"]["HERD_HOOK_SOCKET"], "/run/h.sock");
        let mode = std::fs::metadata(&settings)
            .expect("meta")
            .permissions()
            .mode()
            & 0o777;
        assert_eq!(mode, 0o600);
        // The user's own settings are as they were.
        let after = std::fs::read_to_string(real.join("settings.json")).expect("read");
        assert_eq!(before, after);
    }

    #[test]
    fn a_user_without_a_gemini_folder_gets_only_the_hook() {
        let user = tempfile::tempdir().expect("home");
        let attempt = tempfile::tempdir().expect("attempt");
        let mut agent_env = env_of(user.path());
        agent_env.insert(TRUSTED_FOLDERS_ENV.into(), "/elsewhere/t.json".into());
        let env = prepare(attempt.path(), &agent_env, "/bin/herd", &[]).expect("prepare");
        assert_eq!(
            env.len(),
            1,
            "the task's own trusted-folders path stays: {env:?}"
        );
        let ours = attempt.path().join("gemini-home/.gemini");
        let names: Vec<_> = std::fs::read_dir(&ours)
            .expect("dir")
            .map(|e| e.expect("entry").file_name())
            .collect();
        assert_eq!(names, ["settings.json"]);
        assert!(!user.path().join(".gemini").exists());
    }

    #[test]
    fn a_task_that_moves_geminis_home_is_followed_and_bad_settings_are_an_error() {
        let user = tempfile::tempdir().expect("home");
        let moved = tempfile::tempdir().expect("moved");
        std::fs::create_dir_all(moved.path().join(".gemini")).expect("dir");
        std::fs::write(moved.path().join(".gemini/settings.json"), "[1]").expect("s");
        let mut agent_env = env_of(user.path());
        agent_env.insert(HOME_ENV.into(), moved.path().display().to_string());
        let attempt = tempfile::tempdir().expect("attempt");
        let error = prepare(attempt.path(), &agent_env, "/bin/herd", &[]).expect_err("bad");
        assert!(error.to_string().contains("not a JSON object"), "{error}");
    }
}
