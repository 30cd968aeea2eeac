//! The starter tasks file `herd init` writes: two example tasks and an unattended preset in
//! `defaults`. The notes for the reader are `"//"` fields (JSON has no comments; herd keeps
//! unknown fields). Pure.

use serde_json::{Map, Value, json};
use thiserror::Error;

/// One agent the starter file is for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StarterAgent {
    /// The profile's name (`claude`, `codex`, `gemini`, `sim`).
    pub profile: String,
    /// Whether herd can trust a folder in this CLI's own config (`trust_folder`).
    pub trusts_folder: bool,
}

/// What the starter file is written for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StarterPlan {
    /// The agents, the first one the default; at least one.
    pub agents: Vec<StarterAgent>,
    /// Whether the tasks file's folder is in a git repository (worktrees need one).
    pub in_git_repository: bool,
    /// The `notify` command to write, when the shell found one that works here.
    pub notify: Option<Vec<String>>,
}

#[derive(Debug, Error, PartialEq, Eq)]
pub enum StarterError {
    #[error("a starter tasks file needs at least one agent")]
    NoAgent,
}

/// Allow rules for a project's usual build and test commands (the guard's rule syntax).
pub const BUILD_AND_TEST_RULES: &[&str] = &[
    "Bash(cargo build:*)",
    "Bash(cargo test:*)",
    "Bash(cargo check:*)",
    "Bash(npm test:*)",
    "Bash(npm run build:*)",
    "Bash(npm run lint:*)",
    "Bash(make:*)",
    "Bash(pytest:*)",
    "Bash(python -m pytest:*)",
    "Bash(go build:*)",
    "Bash(go test:*)",
];

/// How long an example task may run, in seconds.
pub const STARTER_TIMEOUT_SEC: u64 = 3600;

/// The text of the starter tasks file for `plan`.
pub fn starter_file(plan: &StarterPlan) -> Result<String, StarterError> {
    let first = plan.agents.first().ok_or(StarterError::NoAgent)?;
    let mut root = Map::new();
    root.insert("//".into(), Value::String(file_note(plan)));
    root.insert("run_id".into(), json!("first-batch"));
    if let Some(notify) = &plan.notify {
        root.insert("notify".into(), json!(notify));
    }
    root.insert("defaults".into(), Value::Object(defaults(plan, first)));
    root.insert("tasks".into(), json!(example_tasks(plan)));
    Ok(format!("{:#}\n", Value::Object(root)))
}

fn file_note(plan: &StarterPlan) -> String {
    let notify = if plan.notify.is_some() {
        "\"notify\" runs when a prompt waits for you, a task fails for good or the batch ends."
    } else {
        "Add \"notify\": [\"sh\", \"-c\", \"...\"] to hear when a prompt waits for you or the \
         batch ends (docs/notifications.md)."
    };
    format!(
        "Written by `herd init`. Fields named // are notes for you: herd keeps and ignores them. \
         Every task takes the fields of \"defaults\" that it does not set itself; herd writes \
         each task's status, attempts and result back into this file as it runs. Check it with \
         `herd validate --tasks FILE`, run it with `herd run --tasks FILE`. {notify}"
    )
}

/// The unattended preset, with a note that says what each field does.
fn defaults(plan: &StarterPlan, first: &StarterAgent) -> Map<String, Value> {
    let trust = plan.agents.iter().any(|a| a.trusts_folder);
    let mut note = String::from(
        "The unattended preset. agent: the profile a task uses unless it names another \
         (`herd profiles` lists them). timeout_sec: a task that runs longer is stopped and \
         retried up to max_retries times. wait_for_quota_reset: a task that hits a usage limit \
         naming its reset time waits for it instead of failing. permission_policy.allow: the \
         commands an agent may run without asking you (the build and test commands of usual \
         projects; add your own, or \"deny\" rules). ",
    );
    note.push_str(if trust {
        "trust_folder: herd marks the task's folder trusted in the CLI's config, so no trust \
         dialog waits for you. "
    } else {
        ""
    });
    note.push_str(if plan.in_git_repository {
        "worktree: each task works in its own git worktree and branch (herd/<task_id>), so \
         tasks never edit the same files."
    } else {
        "worktree: false because this folder is not in a git repository; in one, set it true to \
         give each task its own worktree and branch."
    });
    let mut defaults = Map::new();
    defaults.insert("//".into(), Value::String(note));
    defaults.insert("agent".into(), json!(first.profile));
    defaults.insert("timeout_sec".into(), json!(STARTER_TIMEOUT_SEC));
    defaults.insert("max_retries".into(), json!(1));
    defaults.insert("wait_for_quota_reset".into(), json!(true));
    if trust {
        defaults.insert("trust_folder".into(), json!(true));
    }
    defaults.insert("worktree".into(), json!(plan.in_git_repository));
    defaults.insert(
        "permission_policy".into(),
        json!({ "allow": BUILD_AND_TEST_RULES }),
    );
    if plan.agents.iter().any(|a| a.profile == "sim") {
        // The simulator plays the scenario its input names.
        defaults.insert("inputs".into(), json!({ "scenario": "success" }));
    }
    defaults
}

/// Two tasks with prompts as people write them; the second names the second agent, if any.
fn example_tasks(plan: &StarterPlan) -> Vec<Value> {
    let mut first = json!({
        "//": "A task needs a task_id (a folder name for its recordings under runs/) and a \
               prompt; the rest comes from defaults. Write the prompt as you would to the agent.",
        "task_id": "describe-build",
        "prompt_template": "Read this project and write BUILDING.md: how to build it, run its \
                            tests and where to start reading the code.",
    });
    let mut second = json!({
        "task_id": "fix-warnings",
        "prompt_template": "Build the project, fix the compiler and linter warnings it shows, \
                            and run the tests to check nothing broke.",
    });
    if let Some(other) = plan.agents.get(1)
        && let Some(task) = second.as_object_mut()
    {
        task.insert("agent".into(), json!(other.profile));
    }
    if plan.agents.len() > 2
        && let Some(task) = first.as_object_mut()
    {
        let others: Vec<&str> = plan.agents[2..]
            .iter()
            .map(|a| a.profile.as_str())
            .collect();
        task.insert(
            "//".into(),
            json!(format!(
                "A task needs a task_id and a prompt; the rest comes from defaults. Also found \
                 here: {} (set \"agent\" in a task to use it).",
                others.join(", ")
            )),
        );
    }
    vec![first, second]
}

#[cfg(test)]
#[path = "starter_tests.rs"]
mod tests;
