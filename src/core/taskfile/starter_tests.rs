//! The starter file: a tasks file herd reads without a problem, its preset in `defaults` as
//! each plan asks, and tasks that take it.

use super::*;
use crate::core::task::TaskStatus;
use crate::core::taskfile::TaskFile;

fn agent(profile: &str, trusts_folder: bool) -> StarterAgent {
    StarterAgent {
        profile: profile.into(),
        trusts_folder,
    }
}

fn plan(agents: Vec<StarterAgent>, in_git_repository: bool) -> StarterPlan {
    StarterPlan {
        agents,
        in_git_repository,
        notify: None,
    }
}

#[test]
fn every_plan_gives_a_file_herd_reads_without_a_problem() {
    // (plan, the agents of the two tasks, trust_folder in defaults, worktree, a sim scenario)
    let table = [
        (
            plan(vec![agent("claude", true)], true),
            ["claude", "claude"],
            Some(true),
            true,
            false,
        ),
        (
            plan(vec![agent("codex", true), agent("gemini", true)], false),
            ["codex", "gemini"],
            Some(true),
            false,
            false,
        ),
        (
            plan(vec![agent("sim", false)], false),
            ["sim", "sim"],
            None,
            false,
            true,
        ),
        (
            plan(
                vec![
                    agent("claude", true),
                    agent("codex", true),
                    agent("gemini", true),
                ],
                true,
            ),
            ["claude", "codex"],
            Some(true),
            true,
            false,
        ),
    ];
    for (plan, agents, trust, worktree, sim) in table {
        let text = starter_file(&plan).expect("a file");
        let file = TaskFile::parse(&text).unwrap_or_else(|p| panic!("{p:?}\n{text}"));
        assert_eq!(file.problems(), &[], "{text}");
        let tasks = file.tasks();
        assert_eq!(
            tasks.iter().map(|t| t.agent.as_str()).collect::<Vec<_>>(),
            agents,
            "{text}"
        );
        for task in tasks {
            assert_eq!(task.trust_folder, trust, "{text}");
            assert_eq!(task.worktree, worktree, "{text}");
            assert!(task.wait_for_quota_reset, "{text}");
            assert_eq!(task.timeout_sec, STARTER_TIMEOUT_SEC);
            assert_eq!(task.status, TaskStatus::Pending);
            assert_eq!(task.permission_rules.allow, BUILD_AND_TEST_RULES, "{text}");
            assert_eq!(task.inputs.contains_key("scenario"), sim, "{text}");
            // Prompts as people write them: herd adds the completion instruction.
            let prompt = task.prompt_template.as_deref().unwrap_or_default();
            assert!(!prompt.contains("TASK_COMPLETE"), "{prompt}");
        }
    }
}

#[test]
fn a_third_agent_is_named_in_a_note_and_notify_is_written_when_given() {
    let mut three = plan(
        vec![
            agent("claude", true),
            agent("codex", true),
            agent("gemini", true),
        ],
        false,
    );
    three.notify = Some(vec!["notify-send".into(), "herd".into()]);
    let text = starter_file(&three).expect("a file");
    let doc: Value = serde_json::from_str(&text).expect("JSON");
    assert_eq!(doc["notify"], json!(["notify-send", "herd"]));
    let note = doc["tasks"][0]["//"].as_str().expect("a note");
    assert!(note.contains("Also found here: gemini"), "{note}");
    let without = starter_file(&plan(vec![agent("claude", true)], false)).expect("a file");
    let doc: Value = serde_json::from_str(&without).expect("JSON");
    assert!(doc.get("notify").is_none(), "{without}");
    assert!(
        doc["//"]
            .as_str()
            .unwrap_or_default()
            .contains("Add \"notify\""),
        "{without}"
    );
}

#[test]
fn no_agent_no_file() {
    assert_eq!(
        starter_file(&plan(Vec::new(), false)),
        Err(StarterError::NoAgent)
    );
}
