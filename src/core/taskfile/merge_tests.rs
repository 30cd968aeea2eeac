//! The operator's version taken in: a table of what herd held, what it did since, what the
//! operator wrote, and the text and queue that result.

use serde_json::json;

use super::*;
use crate::core::task::TaskStatus;

/// Two tasks, one per line, in the operator's own layout (tabs, a field of theirs).
const BASE: &str = "{\"tasks\": [\n\t{\"task_id\": \"a\", \"agent\": \"x\", \"prompt_template\": \"pa\", \"mine\": 1},\n\t{\"task_id\": \"b\", \"agent\": \"x\", \"prompt_template\": \"pb\"}\n]}\n";

fn base() -> TaskFile {
    TaskFile::parse(BASE).expect("parses")
}

/// Merges `theirs` into `file` and brings the text up to date.
fn merge_in(file: &mut TaskFile, theirs: &str) -> (Merged, String) {
    let merged = file.merge(theirs).expect("their version parses");
    file.splice_changes();
    (merged, file.shared_text().to_string())
}

fn task<'a>(file: &'a TaskFile, id: &str) -> &'a TaskSpec {
    &file.tasks()[file.task_index(id).expect("task")]
}

#[test]
fn herds_changes_are_put_back_into_the_operators_text_in_its_style() {
    let mut file = base();
    file.set_status(0, TaskStatus::Completed);
    file.set_attempts(0, 1);
    // The operator added a task and a field of theirs to b, not knowing a finished.
    let theirs = BASE.replace(
        "\"pb\"}\n]",
        "\"pb\", \"note\": \"x\"},\n\t{\"task_id\": \"c\", \"agent\": \"x\", \"prompt_template\": \"pc\"}\n]",
    );
    let (merged, text) = merge_in(&mut file, &theirs);
    assert_eq!(merged.added, vec![2]);
    assert_eq!(merged.other_changed, vec![1]);
    assert_eq!(
        text,
        "{\"tasks\": [\n\t{\"task_id\": \"a\", \"agent\": \"x\", \"prompt_template\": \"pa\", \"mine\": 1, \"attempts\": 1, \"status\": \"completed\"},\n\t{\"task_id\": \"b\", \"agent\": \"x\", \"prompt_template\": \"pb\", \"note\": \"x\"},\n\t{\"task_id\": \"c\", \"agent\": \"x\", \"prompt_template\": \"pc\"}\n]}\n"
    );
    assert_eq!(task(&file, "a").status, TaskStatus::Completed);
    assert_eq!(file.next_runnable(0), Some(1));
    assert_eq!(file.next_runnable(2), Some(2));
}

#[test]
fn a_stale_copy_of_herds_own_fields_does_not_undo_what_herd_learned() {
    let mut file = base();
    file.set_status(0, TaskStatus::Running);
    file.splice_changes();
    let read_by_the_operator = file.shared_text().to_string();
    file.set_status(0, TaskStatus::Completed);
    file.set_result(0, json!({"exit_code": 0}));
    // Their copy still says running, without a result; they changed b's prompt.
    let theirs = read_by_the_operator.replace("\"pb\"", "\"pb2\"");
    let (merged, text) = merge_in(&mut file, &theirs);
    assert_eq!(merged.prompt_changed, vec![1]);
    let doc: Value = serde_json::from_str(&text).expect("json");
    assert_eq!(doc["tasks"][0]["status"], "completed");
    assert_eq!(doc["tasks"][0]["result"]["exit_code"], 0);
    assert_eq!(doc["tasks"][1]["prompt_template"], "pb2");
    assert_eq!(task(&file, "b").prompt_template.as_deref(), Some("pb2"));
}

#[test]
fn the_operators_values_win_on_tasks_herd_has_not_touched() {
    let mut file = base();
    file.set_status(0, TaskStatus::Running);
    let theirs = BASE.replace(
        "\"pb\"}",
        "\"pb\", \"status\": \"completed\", \"enabled\": true}",
    );
    let (merged, text) = merge_in(&mut file, &theirs);
    assert!(merged.enabled.is_empty(), "{merged:?}");
    assert_eq!(task(&file, "b").status, TaskStatus::Completed);
    assert_eq!(file.next_runnable(0), None);
    assert!(text.contains("\"pb\", \"status\": \"completed\", \"enabled\": true}"));
}

#[test]
fn disabled_and_removed_tasks_leave_the_queue() {
    type Listed = fn(&Merged) -> &Vec<usize>;
    let table: &[(&str, &str, Listed)] = &[
        ("disabled", "\"pb\", \"enabled\": false}", |m: &Merged| {
            &m.disabled
        }),
        ("removed", "", |m: &Merged| &m.removed),
    ];
    for (name, b_ends, list) in table {
        let mut file = base();
        let theirs = if b_ends.is_empty() {
            "{\"tasks\": [\n\t{\"task_id\": \"a\", \"agent\": \"x\", \"prompt_template\": \"pa\", \"mine\": 1}\n]}\n".to_string()
        } else {
            BASE.replace("\"pb\"}", b_ends)
        };
        let (merged, _) = merge_in(&mut file, &theirs);
        assert_eq!(list(&merged), &vec![1], "{name}: {merged:?}");
        assert_eq!(file.next_runnable(1), None, "{name}");
        assert_eq!(file.next_runnable(0), Some(0), "{name}");
    }
}

#[test]
fn a_removed_task_is_held_in_memory_and_never_written_again() {
    let mut file = base();
    file.set_status(1, TaskStatus::Running);
    let theirs =
        "{\"tasks\": [{\"task_id\": \"a\", \"agent\": \"x\", \"prompt_template\": \"pa\"}]}";
    let (merged, _) = merge_in(&mut file, theirs);
    assert_eq!(merged.removed, vec![1]);
    assert!(file.is_removed(1));
    file.set_status(1, TaskStatus::Cancelled);
    assert_eq!(file.tasks()[1].status, TaskStatus::Cancelled);
    assert!(
        !file.splice_changes(),
        "nothing of a removed task is written"
    );
    assert_eq!(file.shared_text().to_string(), theirs);
    // Put back by the operator: herd's values of its fields come with it.
    let again = BASE;
    let (merged, text) = merge_in(&mut file, again);
    assert!(
        merged.removed.is_empty() && merged.added.is_empty(),
        "{merged:?}"
    );
    assert!(!file.is_removed(1));
    assert!(
        text.contains("\"pb\", \"status\": \"cancelled\"}"),
        "{text}"
    );
}

#[test]
fn a_version_that_does_not_parse_changes_nothing() {
    let mut file = base();
    file.set_status(0, TaskStatus::Completed);
    let problems = file
        .merge("{\"tasks\": [\n  {\"task_id\": \"a\",,}\n]}")
        .expect_err("syntax error");
    assert_eq!(
        problems[0].location.map(|l| (l.line, l.column)),
        Some((2, 19))
    );
    assert!(file.splice_changes());
    assert!(
        file.shared_text()
            .to_string()
            .contains("\"status\": \"completed\"")
    );
}

#[test]
fn a_bad_new_task_is_a_problem_of_the_merge_not_a_refusal() {
    let mut file = base();
    let theirs = BASE.replace(
        "\"pb\"}\n]",
        "\"pb\"},\n\t{\"task_id\": \"c\", \"agent\": \"x\", \"prompt_template\": 5}\n]",
    );
    let (merged, text) = merge_in(&mut file, &theirs);
    assert_eq!(merged.added, vec![2]);
    assert_eq!(merged.problems.len(), 1, "{merged:?}");
    assert_eq!(merged.problems[0].task_id.as_deref(), Some("c"));
    assert_eq!(text, theirs, "their text is kept as it is");
}

#[test]
fn a_change_of_herds_not_yet_written_is_put_back() {
    let mut file = base();
    // An operator action in the dashboard, not spliced or written yet.
    file.set_field(1, "prompt_template", json!("from the dashboard"));
    let theirs = BASE.replace("\"mine\": 1", "\"mine\": 2");
    let (merged, text) = merge_in(&mut file, &theirs);
    assert_eq!(merged.other_changed, vec![0]);
    assert!(text.contains("\"mine\": 2"));
    assert!(text.contains("\"from the dashboard\""));
}

#[test]
fn the_summary_says_what_was_picked_up() {
    let table: &[(Merged, &str)] = &[
        (Merged::default(), "tasks file changed: no task changed"),
        (
            Merged {
                added: vec![3],
                prompt_changed: vec![1],
                disabled: vec![2],
                ..Merged::default()
            },
            "tasks file changed: 1 task added, 1 prompt changed, 1 disabled",
        ),
        (
            Merged {
                added: vec![3, 4],
                removed: vec![0],
                other_changed: vec![1, 2],
                ..Merged::default()
            },
            "tasks file changed: 2 tasks added, 1 task removed, 2 tasks' fields changed",
        ),
    ];
    for (merged, said) in table {
        assert_eq!(merged.to_string(), *said);
    }
}

/// Herd adds task c (`tasks.add`); the operator saves an edit made from the version before it.
fn with_c_added_by_herd() -> TaskFile {
    let mut file = base();
    let c = json!({"task_id": "c", "agent": "x", "prompt_template": "pc"});
    let text = file.text_with_task(&c);
    let merged = file.merge_own(&text).expect("herd's version parses");
    assert_eq!(merged.added, vec![2]);
    file.splice_changes();
    file
}

#[test]
fn a_task_herd_added_survives_an_edit_made_from_the_version_before_it() {
    let mut file = with_c_added_by_herd();
    let theirs = BASE.replace("\"pb\"", "\"pb2\"");
    let (merged, text) = merge_in(&mut file, &theirs);
    assert_eq!(merged.removed, Vec::<usize>::new());
    assert_eq!(merged.kept, vec![2]);
    assert_eq!(merged.prompt_changed, vec![1]);
    assert!(merged.to_string().contains("1 task added by herd kept"));
    assert_eq!(task(&file, "b").prompt_template.as_deref(), Some("pb2"));
    assert!(!file.is_removed(2));
    // Their edit and herd's task, both in the text, in their layout.
    let reread = TaskFile::parse(&text).expect("the merged text parses");
    let ids: Vec<&str> = reread.tasks().iter().map(|t| t.task_id.as_str()).collect();
    assert_eq!(ids, vec!["a", "b", "c"]);
    assert!(text.contains("\"pb2\""), "{text}");
    assert!(text.contains("\"task_id\": \"c\""), "{text}");
}

#[test]
fn a_task_herd_added_is_removed_by_a_version_that_had_it_or_a_second_one_without_it() {
    // Seen: their version had c, the next one lacks it: removed.
    let mut file = with_c_added_by_herd();
    let seen = file.shared_text().to_string();
    merge_in(&mut file, &seen);
    let (merged, _) = merge_in(&mut file, BASE);
    assert_eq!((merged.removed, merged.kept), (vec![2], vec![]));
    // Kept once from an older version; removed by the next version without it.
    let mut file = with_c_added_by_herd();
    assert_eq!(merge_in(&mut file, BASE).0.kept, vec![2]);
    let (merged, _) = merge_in(&mut file, BASE);
    assert_eq!((merged.removed, merged.kept), (vec![2], vec![]));
}

#[test]
fn a_field_herd_changed_survives_an_edit_made_from_the_version_before_it() {
    let mut file = base();
    file.set_field_unseen(0, "prompt_template", Some(json!("new")));
    file.set_field_unseen(1, "timeout_sec", Some(json!(600)));
    file.splice_changes();
    // Saved from the version before herd's change, with an edit of their own to b.
    let stale = BASE.replace("\"pb\"", "\"pb2\"");
    let (_, text) = merge_in(&mut file, &stale);
    assert_eq!(task(&file, "a").prompt_template.as_deref(), Some("new"));
    assert_eq!(task(&file, "b").prompt_template.as_deref(), Some("pb2"));
    assert!(text.contains("\"prompt_template\": \"new\""), "{text}");
    assert!(text.contains("\"timeout_sec\": 600"), "{text}");
    assert!(text.contains("\"pb2\""), "{text}");
    // Seen now: a later version with the value before is the operator's decision.
    let (_, text) = merge_in(&mut file, &stale);
    assert_eq!(task(&file, "a").prompt_template.as_deref(), Some("pa"));
    assert!(!text.contains("timeout_sec"), "{text}");
}

#[test]
fn an_operators_own_value_for_a_field_herd_changed_wins() {
    let mut file = base();
    file.set_field_unseen(0, "prompt_template", Some(json!("new")));
    file.splice_changes();
    let theirs = BASE.replace("\"pa\"", "\"theirs\"");
    let (_, text) = merge_in(&mut file, &theirs);
    assert_eq!(task(&file, "a").prompt_template.as_deref(), Some("theirs"));
    assert!(text.contains("\"theirs\""), "{text}");
}
