//! Launching a `protocol = "acp"` profile under herd's ACP client, its setup in the environment.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::json;

use crate::core::profile::Profile;
use crate::core::task::TaskSpec;

/// `attempt_<n>.acp.jsonl` in the task's runs folder, beside the attempt's `.cast`.
pub fn log_path(run_dir: &Path, attempt: u32) -> std::path::PathBuf {
    run_dir.join(format!("attempt_{attempt}.acp.jsonl"))
}

/// The argv that runs `argv` under the client, and the client's variables added to `env`.
pub fn wrap(
    argv: Vec<String>,
    env: &mut BTreeMap<String, String>,
    task: &TaskSpec,
    profile: &Profile,
    prompt: &str,
    log: &Path,
) -> Vec<String> {
    let switch = |name: &str| task.permission_policy.get(name).copied().unwrap_or(false);
    let texts = |task_rules: &[String], profile_rules: &[crate::core::guard::Rule]| {
        task_rules
            .iter()
            .cloned()
            .chain(profile_rules.iter().map(|r| r.text.clone()))
            .collect::<Vec<_>>()
    };
    let policy = json!({
        "auto_press_1": switch("auto_press_1"),
        "auto_press_p": switch("auto_press_p"),
        "allow": texts(&task.permission_rules.allow, &profile.rules.allow),
        "ask": texts(&task.permission_rules.ask, &profile.rules.ask),
        "deny": texts(&task.permission_rules.deny, &profile.rules.deny),
    });
    env.insert("HERD_ACP_PROMPT".into(), prompt.to_string());
    env.insert("HERD_ACP_POLICY".into(), policy.to_string());
    env.insert("HERD_ACP_LOG".into(), log.display().to_string());
    // The agent as `herd acp login` names it, for the fix an auth failure gives.
    env.insert("HERD_ACP_PROFILE".into(), profile.name.clone());
    // The session mode the client sets: the task's, else the profile's (the agent's manual one).
    match task.acp_mode.as_ref().or(profile.acp_mode.as_ref()) {
        Some(mode) => env.insert("HERD_ACP_MODE".into(), mode.clone()),
        None => env.remove("HERD_ACP_MODE"),
    };
    // `herd` is this executable once `check_launch` resolves it.
    let mut wrapped = vec![
        "herd".to_string(),
        "acp-client".to_string(),
        "--".to_string(),
    ];
    wrapped.extend(argv);
    wrapped
}
