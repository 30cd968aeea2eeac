//! The shared validator: every problem of every task, each once, at its field.

use std::path::Path;

use super::*;
use crate::core::remote::hosts::HostSet;

fn profiles() -> ProfileSet {
    ProfileSet::build(&crate::assets::built_in_profile_texts(), None).expect("built-in profiles")
}

/// The problem lines of `text`, checked in `dir`.
fn lines(dir: &Path, text: &str) -> Vec<String> {
    let file = TaskFile::parse(text).expect("parses");
    let profiles = profiles();
    let hosts = HostSet::default();
    let checks = Checks {
        profiles: Some(&profiles),
        hosts: &hosts,
        base_dir: dir,
        runs_dir: &dir.join("runs"),
    };
    let path = Path::new("tasks.json");
    check(&file, &checks).iter().map(|p| p.line(path)).collect()
}

fn has(lines: &[String], place: &str, needle: &str) -> bool {
    lines
        .iter()
        .any(|l| l.starts_with(&format!("tasks.json:{place}")) && l.contains(needle))
}

#[test]
fn every_problem_of_every_task_is_reported_at_its_field() {
    let dir = tempfile::tempdir().expect("tempdir");
    let text = r#"{"tasks": [
  {"task_id": "a", "agent": "nobody", "prompt_template": "x",
   "cwd": "no/such/dir", "timeout_sec": "soon"},
  {"task_id": "b", "agent": "generic", "prompt_template": "Use {missing}",
   "command": ["not-installed-anywhere", "{other}"],
   "env": {"K": "{third}"}},
  {"task_id": "c", "agent": "sim", "inputs": {"scenario": "success"}, "prompt_template": "x",
   "permission_policy": {"auto_pres_1": true}, "max_retries": -1,
   "completion_marker": "{nothing}"}
]}"#;
    let found = lines(dir.path(), text);
    let expected = [
        // Task a: a field of the wrong type does not hide the unknown agent or the folder.
        ("3:", "task \"a\": \"timeout_sec\" must be"),
        ("2:", "task \"a\": agent \"nobody\" is not a known profile"),
        ("3:", "task \"a\": cwd "),
        // Task b: each template is checked, and the program too.
        ("4:", "task \"b\": prompt_template: no value for {missing}"),
        ("5:", "task \"b\": command [1]: no value for {other}"),
        ("6:", "task \"b\": env K: no value for {third}"),
        (
            "5:",
            "task \"b\": command \"not-installed-anywhere\" is not installed",
        ),
        // Task c: a bad number beside a misspelt switch and a marker that cannot render.
        (
            "8:",
            "task \"c\": \"permission_policy\" switch \"auto_pres_1\"",
        ),
        ("8:", "task \"c\": \"max_retries\""),
        (
            "9:",
            "task \"c\": completion_marker: no value for {nothing}",
        ),
    ];
    for (place, needle) in expected {
        assert!(has(&found, place, needle), "{place} {needle}\n{found:#?}");
    }
    assert_eq!(found.len(), expected.len(), "nothing else: {found:#?}");
}

#[test]
fn a_field_the_file_got_wrong_is_reported_once() {
    let dir = tempfile::tempdir().expect("tempdir");
    // "agent" is not a string: the file says so; launching its default ("") is not news.
    let text = r#"{"tasks": [
  {"task_id": "a", "agent": 5, "prompt_template": "x", "cwd": "missing"}
]}"#;
    let found = lines(dir.path(), text);
    assert!(has(&found, "2:", "\"agent\" must be"), "{found:#?}");
    assert!(has(&found, "2:", "cwd "), "{found:#?}");
    assert!(
        !found.iter().any(|l| l.contains("not a known profile")),
        "{found:#?}"
    );
    assert_eq!(found.len(), 2, "{found:#?}");
}

#[test]
fn only_the_files_own_problems_stop_a_run() {
    let dir = tempfile::tempdir().expect("tempdir");
    let text = r#"{"tasks": [
  {"task_id": "a", "agent": "nobody", "prompt_template": "x", "max_retries": -1}
]}"#;
    let file = TaskFile::parse(text).expect("parses");
    let profiles = profiles();
    let hosts = HostSet::default();
    let checks = Checks {
        profiles: Some(&profiles),
        hosts: &hosts,
        base_dir: dir.path(),
        runs_dir: &dir.path().join("runs"),
    };
    let all = check(&file, &checks);
    let blocking: Vec<&Problem> = all.iter().filter(|p| p.blocks_run()).collect();
    assert_eq!(blocking.len(), 1, "{all:#?}");
    assert_eq!(file_problems(&file).len(), 1);
    assert!(
        all.iter().any(|p| matches!(
            p,
            Problem::Launch {
                error: LaunchError::UnknownAgent { .. },
                ..
            }
        )),
        "{all:#?}"
    );
    assert!(all.iter().all(|p| p.task_id() == Some("a")));
}
