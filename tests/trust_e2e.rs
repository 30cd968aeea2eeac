//! Folder trust through the real binary: a batch of tasks that trust their folders in one shared
//! Claude config, started side by side, leaves every task's entry in the file (each attempt's
//! preparation runs on a worker of its own, and each used to replace the file without the
//! others' entries), and leaves no lock behind.

#![allow(clippy::unwrap_used)]

mod common;
use common::{describe, herd};

const TASKS: usize = 16;

#[test]
fn tasks_started_together_keep_each_others_trust_in_one_config() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    std::fs::create_dir(&home).unwrap();
    let config = home.join(".claude.json");
    std::fs::write(&config, r#"{"hasCompletedOnboarding": true}"#).unwrap();
    // In place of Claude Code (`hooks = "claude"` makes it a CLI whose trust herd writes): each
    // task's command says it is done.
    let profiles = dir.path().join("profiles.toml");
    std::fs::write(
        &profiles,
        "[profiles.trusting]\ncommand = [\"true\"]\nhooks = \"claude\"\nidle_sec = 30\n",
    )
    .unwrap();
    let folders: Vec<_> = (0..TASKS)
        .map(|i| {
            let folder = dir.path().join(format!("task{i}"));
            std::fs::create_dir(&folder).unwrap();
            folder
        })
        .collect();
    let tasks: Vec<String> = folders
        .iter()
        .enumerate()
        .map(|(i, folder)| {
            format!(
                r#"{{"task_id": "t{i}", "agent": "trusting", "command": ["sh", "-c", "echo TASK_COMPLETE:t{i}"], "cwd": "{}", "trust_folder": true, "prompt_template": "t{i}"}}"#,
                folder.display()
            )
        })
        .collect();
    let tasks_file = dir.path().join("tasks.json");
    std::fs::write(
        &tasks_file,
        format!("{{\"tasks\": [\n{}\n]}}\n", tasks.join(",\n")),
    )
    .unwrap();

    let out = herd()
        .env("HOME", &home)
        .env_remove("CLAUDE_CONFIG_DIR")
        .args(["run", "--headless", "--concurrency"])
        .arg(TASKS.to_string())
        .arg("--tasks")
        .arg(&tasks_file)
        .arg("--profiles")
        .arg(&profiles)
        .arg("--runs-dir")
        .arg(dir.path().join("runs"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));

    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&config).unwrap()).unwrap();
    for folder in &folders {
        let key = folder.display().to_string();
        assert_eq!(
            doc["projects"][&key]["hasTrustDialogAccepted"], true,
            "{key} lost its trust: {doc:#}"
        );
    }
    assert_eq!(doc["hasCompletedOnboarding"], true, "{doc:#}");
    assert!(!home.join(".claude.json.lock").exists(), "the lock is left");
}
