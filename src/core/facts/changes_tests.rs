use super::*;

fn file(path: &str, status: FileStatus, added: u64, removed: u64) -> FileChange {
    FileChange {
        path: path.into(),
        status,
        added,
        removed,
        binary: false,
    }
}

fn repo(files: Vec<FileChange>) -> RepoChanges {
    RepoChanges {
        start: StartPoint {
            commit: Some("abc123".into()),
            branch: Some("main".into()),
            dirty: false,
        },
        branch: Some("main".into()),
        files,
    }
}

#[test]
fn the_summary_counts_files_and_lines() {
    let cases = [
        (vec![], "no changes"),
        (
            vec![file("a.rs", FileStatus::Modified, 2, 0)],
            "1 file +2 −0",
        ),
        (
            vec![
                file("a.rs", FileStatus::Modified, 100, 10),
                file("b.rs", FileStatus::Added, 20, 0),
                file("c.rs", FileStatus::Deleted, 0, 4),
            ],
            "3 files +120 −14",
        ),
    ];
    for (files, expected) in cases {
        assert_eq!(repo(files).summary(), expected);
    }
    assert_eq!(Changes::NotARepository.summary(), "not a repository");
}

#[test]
fn binary_files_are_counted_and_named() {
    let mut image = file("logo.png", FileStatus::Added, 0, 0);
    image.binary = true;
    let changes = repo(vec![file("a.rs", FileStatus::Modified, 3, 1), image]);
    assert_eq!(changes.summary(), "2 files +3 −1, 1 binary");
    assert_eq!(
        changes.stat_lines(),
        vec!["M +3 −1  a.rs".to_string(), "A binary logo.png".to_string()]
    );
}

#[test]
fn the_written_form_carries_facts_totals_and_summary_and_reads_back() {
    let changes = Changes::InRepository(repo(vec![
        file("a.rs", FileStatus::Modified, 5, 2),
        file("gone.txt", FileStatus::Deleted, 0, 3),
    ]));
    let value = changes.to_json();
    assert_eq!(
        value,
        json!({
            "repository": true,
            "start": {"commit": "abc123", "branch": "main", "dirty": false},
            "branch": "main",
            "files": [
                {"path": "a.rs", "status": "modified", "added": 5, "removed": 2},
                {"path": "gone.txt", "status": "deleted", "added": 0, "removed": 3},
            ],
            "added": 5,
            "removed": 5,
            "summary": "2 files +5 −5",
        })
    );
    assert_eq!(Changes::from_json(&value), Some(changes));
    let outside = Changes::NotARepository.to_json();
    assert_eq!(
        outside,
        json!({"repository": false, "summary": "not a repository"})
    );
    assert_eq!(Changes::from_json(&outside), Some(Changes::NotARepository));
    assert_eq!(Changes::from_json(&json!("3 files")), None);
    let remote = Changes::on_remote_host().to_json();
    assert_eq!(
        remote,
        json!({"recorded": false, "why": "remote host", "summary": "not recorded (remote host)"})
    );
    assert_eq!(Changes::from_json(&remote), Some(Changes::on_remote_host()));
    assert_eq!(Changes::from_json(&json!({"summary": "2 files"})), None);
}

#[test]
fn diff_lines_are_told_apart_by_their_place() {
    let text = "diff --git a/x b/x\nindex 1..2 100644\n--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n \
                same\n-old\n+new\n--- not a header\ndiff --git a/y b/y\n--- a/y\n";
    let kinds: Vec<DiffLine> = classify_diff(text).into_iter().map(|(k, _)| k).collect();
    use DiffLine::*;
    assert_eq!(
        kinds,
        vec![
            FileHeader, FileHeader, FileHeader, FileHeader, Hunk, Context, Removed, Added, Removed,
            FileHeader, FileHeader,
        ]
    );
}

#[test]
fn the_commit_message_is_the_task_id_and_the_agents_own_summary() {
    let tail: Vec<String> = ["", "Fixed the parser.", "", "All tests pass.", ""]
        .map(String::from)
        .to_vec();
    assert_eq!(
        commit_message("t1", Some("  Done: renamed x.  "), &tail),
        "herd: t1\n\nDone: renamed x.\n"
    );
    assert_eq!(
        commit_message("t1", Some(" "), &tail),
        "herd: t1\n\nFixed the parser.\n\nAll tests pass.\n"
    );
    assert_eq!(commit_message("t1", None, &[]), "herd: t1\n");
    let long: Vec<String> = (0..30).map(|i| format!("line {i}")).collect();
    let message = commit_message("t", None, &long);
    assert!(message.ends_with("line 29\n") && message.contains("\n\nline 20\n"));
    assert!(!message.contains("line 19"));
}

#[test]
fn the_lines_before_the_last_marker_are_the_agents_summary() {
    let output = "please end with TASK_COMPLETE:t\nworking\nchanged a.rs\nTASK_COMPLETE:t\nbye";
    assert_eq!(
        lines_before_marker(output, "TASK_COMPLETE:t"),
        vec!["please end with TASK_COMPLETE:t", "working", "changed a.rs"]
    );
    assert_eq!(lines_before_marker("a\nb", "M").len(), 2);
}
