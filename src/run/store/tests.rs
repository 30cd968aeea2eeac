use std::fs::File;
use std::os::unix::fs::PermissionsExt;

use serde_json::json;

use super::*;
use crate::core::task::TaskStatus;

const TASKS: &str = r#"{"run_id": "r", "tasks": [{"task_id": "t", "agent": "a", "prompt_template": "p", "mine": 1}]}"#;

fn tasks_file(text: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("tasks.json");
    fs::write(&path, text).expect("write");
    (dir, path)
}

pub(super) fn names_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .expect("list")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn save_writes_valid_json_atomically_and_keeps_data() {
    let (dir, path) = tasks_file(TASKS);
    let mut store = TaskStore::open(&path).expect("opens");
    assert_eq!(
        store.base_dir(),
        fs::canonicalize(dir.path()).expect("dir").as_path()
    );
    store.file_mut().set_status(0, TaskStatus::Running);
    store.save().expect("saves");
    let text = fs::read_to_string(&path).expect("read");
    let doc: serde_json::Value = serde_json::from_str(&text).expect("valid JSON");
    assert_eq!(doc["tasks"][0]["status"], json!("running"));
    assert_eq!(doc["tasks"][0]["mine"], json!(1));
    assert_eq!(doc["run_id"], json!("r"));
    // No temporary file is left behind; the lock file is there while the store is open.
    assert_eq!(names_in(dir.path()), ["tasks.json", "tasks.json.lock"]);
    drop(store);
    assert_eq!(
        names_in(dir.path()),
        ["tasks.json"],
        "the lock file is removed at the end"
    );
}

#[test]
fn unchanged_text_is_not_rewritten() {
    let (_dir, path) = tasks_file(TASKS);
    let mut store = TaskStore::open(&path).expect("opens");
    let inode = |p: &Path| std::os::unix::fs::MetadataExt::ino(&fs::metadata(p).expect("meta"));
    store.file_mut().set_attempts(0, 1);
    store.save().expect("saves");
    let after_first = inode(&path);
    let text = fs::read_to_string(&path).expect("read");
    store.file_mut().set_attempts(0, 1);
    store.save().expect("saves");
    assert_eq!(
        inode(&path),
        after_first,
        "an unchanged save must not replace the file"
    );
    assert_eq!(fs::read_to_string(&path).expect("read"), text);
}

#[test]
fn a_second_open_fails_naming_the_holder_and_drop_releases() {
    let (_dir, path) = tasks_file(TASKS);
    let first = TaskStore::open(&path).expect("opens");
    let lock_text = fs::read_to_string(lock_path(&path)).expect("lock file");
    assert!(lock_text.starts_with(&format!("pid {}\nstarted ", std::process::id())));
    match TaskStore::open(&path) {
        Err(StoreError::Locked {
            path: locked,
            holder,
        }) => {
            assert_eq!(locked, path);
            assert_eq!(holder, Some(format!("pid {}", std::process::id())));
            let message = StoreError::Locked {
                path: locked,
                holder,
            }
            .to_string();
            assert!(
                message.contains("tasks.json is in use by another herd (pid "),
                "{message}"
            );
        }
        other => panic!("expected Locked, got {other:?}"),
    }
    // Reading without a lock still works while the file is locked.
    assert!(TaskStore::read_only(&path).is_ok());
    drop(first);
    let again = TaskStore::open(&path).expect("lock released on drop");
    drop(again);
    assert!(
        !lock_path(&path).exists(),
        "the lock file is removed with the lock"
    );
}

#[test]
fn a_lock_file_left_by_a_killed_herd_is_taken_over_and_removed() {
    let (dir, path) = tasks_file(TASKS);
    fs::write(lock_path(&path), "pid 999999\nstarted 1\n").expect("a stale lock file");
    let store = TaskStore::open(&path).expect("an unlocked lock file is taken over");
    let note = fs::read_to_string(lock_path(&path)).expect("lock file");
    assert!(
        note.starts_with(&format!("pid {}\n", std::process::id())),
        "{note}"
    );
    drop(store);
    assert_eq!(names_in(dir.path()), ["tasks.json"]);
}

#[test]
fn a_lock_file_that_is_no_longer_ours_is_not_removed() {
    let (_dir, path) = tasks_file(TASKS);
    let store = TaskStore::open(&path).expect("opens");
    // Someone removed the lock file during the run and another herd made its own.
    fs::remove_file(lock_path(&path)).expect("removed");
    fs::write(lock_path(&path), "pid 1\n").expect("another herd's lock file");
    drop(store);
    assert_eq!(
        fs::read_to_string(lock_path(&path)).expect("still there"),
        "pid 1\n"
    );
}

#[test]
fn a_read_only_file_is_refused_before_anything_is_written() {
    let (dir, path) = tasks_file(TASKS);
    fs::set_permissions(&path, fs::Permissions::from_mode(0o444)).expect("chmod");
    let error = TaskStore::open(&path).expect_err("refused");
    let message = error.to_string();
    assert!(
        message.starts_with(&format!("{}: is read-only (mode 0444)", path.display())),
        "{message}"
    );
    assert_eq!(
        names_in(dir.path()),
        ["tasks.json"],
        "no lock file, nothing else"
    );
    assert_eq!(fs::read_to_string(&path).expect("read"), TASKS);
    assert_eq!(
        fs::metadata(&path).expect("meta").permissions().mode() & 0o777,
        0o444
    );
    // Reading it is fine (status, validate).
    assert!(TaskStore::read_only(&path).is_ok());
}

#[test]
fn permissions_are_kept() {
    let (_dir, path) = tasks_file(TASKS);
    fs::set_permissions(&path, fs::Permissions::from_mode(0o640)).expect("chmod");
    let mut store = TaskStore::open(&path).expect("opens");
    store.file_mut().set_attempts(0, 3);
    store.save().expect("saves");
    let mode = fs::metadata(&path).expect("meta").permissions().mode() & 0o777;
    assert_eq!(mode, 0o640);
}

#[test]
fn a_symlinked_file_stays_a_symlink() {
    let (dir, real) = tasks_file(TASKS);
    let link = dir.path().join("link.json");
    std::os::unix::fs::symlink(&real, &link).expect("symlink");
    let mut store = TaskStore::open(&link).expect("opens");
    store.file_mut().set_attempts(0, 2);
    store.save().expect("saves");
    assert!(
        fs::symlink_metadata(&link)
            .expect("meta")
            .file_type()
            .is_symlink()
    );
    assert!(
        fs::read_to_string(&real)
            .expect("read")
            .contains("\"attempts\": 2")
    );
}

#[test]
fn read_only_stores_cannot_save() {
    let (_dir, path) = tasks_file(TASKS);
    let mut store = TaskStore::read_only(&path).expect("reads");
    store.file_mut().set_attempts(0, 1);
    assert!(matches!(store.save(), Err(StoreError::ReadOnly { .. })));
    assert_eq!(fs::read_to_string(&path).expect("read"), TASKS);
    assert!(!lock_path(&path).exists());
}

#[test]
fn unusable_and_missing_files() {
    let (dir, path) = tasks_file("{\"tasks\": 3}");
    let error = TaskStore::open(&path).expect_err("invalid");
    assert_eq!(
        error.to_string(),
        format!(
            "{}:1:11: \"tasks\" must be a list of task objects, got 3",
            path.display()
        )
    );
    let missing = dir.path().join("nope.json");
    let error = TaskStore::read_only(&missing).expect_err("missing");
    assert!(
        matches!(error, StoreError::Io { action: "read", .. }),
        "{error:?}"
    );
    assert!(
        error
            .to_string()
            .starts_with(&format!("cannot read {}: ", missing.display()))
    );
}

#[test]
fn problems_print_with_the_file_name() {
    let path = Path::new("dir/tasks.json");
    let placed = Problem {
        location: Some(crate::core::taskfile::Location { line: 3, column: 7 }),
        task_id: None,
        field: None,
        message: "m".into(),
    };
    let unplaced = Problem {
        location: None,
        ..placed.clone()
    };
    assert_eq!(format_problem(path, &placed), "dir/tasks.json:3:7: m");
    assert_eq!(format_problem(path, &unplaced), "dir/tasks.json: m");
}

#[test]
fn a_hand_written_file_changes_only_in_the_changed_values_and_keeps_its_bom() {
    let text = "\u{feff}{ \"run_id\":\"r\",\n\t\"tasks\": [\n\t\t{\"task_id\": \"t\", \"agent\": \"a\", \"prompt_template\": \"p\", \"status\": \"pending\"},\n\t\t{\"task_id\": \"u\", \"agent\": \"a\", \"prompt_template\": \"p\"}\n\t]\n}";
    let (_dir, path) = tasks_file(text);
    let mut store = TaskStore::open(&path).expect("opens");
    store.file_mut().set_status(0, TaskStatus::Running);
    store.file_mut().set_attempts(0, 1);
    assert!(store.has_changes());
    store.save().expect("saves");
    assert!(!store.has_changes());
    assert_eq!(
        fs::read_to_string(&path).expect("read"),
        text.replace(
            "\"status\": \"pending\"}",
            "\"status\": \"running\", \"attempts\": 1}"
        )
    );
    // The next open reads the same tasks through the kept byte order mark.
    drop(store);
    let again = TaskStore::open(&path).expect("opens again");
    assert_eq!(again.file().tasks()[0].status, TaskStatus::Running);
}

#[test]
fn a_planted_lock_link_is_refused_and_its_target_untouched() {
    let (dir, path) = tasks_file(TASKS);
    let precious = dir.path().join("precious.txt");
    fs::write(&precious, "keep me").expect("write");
    std::os::unix::fs::symlink(&precious, lock_path(&path)).expect("symlink");
    let error = TaskStore::open(&path).expect_err("refused");
    assert!(
        error
            .to_string()
            .contains("tasks.json.lock is a symbolic link"),
        "{error}"
    );
    assert_eq!(fs::read_to_string(&precious).expect("read"), "keep me");
}

#[test]
fn stale_temporary_files_of_this_file_are_removed_at_open_and_nothing_else() {
    let (dir, path) = tasks_file(TASKS);
    let stale = [".tasks.json.a1B2c3.tmp", ".tasks.json.zzzzzz.tmp"];
    let kept = [
        ".tasks.json.toolong1.tmp",
        ".other.json.a1B2c3.tmp",
        "tasks.json.a1B2c3.tmp",
        ".tasks.json.a1B2c3.tmp.bak",
    ];
    for name in stale.iter().chain(&kept) {
        fs::write(dir.path().join(name), "x").expect("write");
    }
    let _store = TaskStore::open(&path).expect("opens");
    let mut expected: Vec<String> = kept.iter().map(|s| s.to_string()).collect();
    expected.extend(["tasks.json".into(), "tasks.json.lock".into()]);
    // (the lock file is there while the store is open)
    expected.sort();
    assert_eq!(names_in(dir.path()), expected);
}

#[test]
fn a_run_does_not_hold_the_positions_of_the_text() {
    let (_dir, path) = tasks_file(TASKS);
    assert!(
        TaskStore::read_only(&path)
            .expect("reads")
            .file()
            .location(0, None)
            .is_some()
    );
    let store = TaskStore::open(&path).expect("opens");
    assert_eq!(store.file().location(0, None), None);
    assert_eq!(store.file().tasks()[0].task_id, "t");
}

#[test]
fn pieces_are_written_whole_and_in_order_however_many() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("pieces");
    // More pieces than one system call takes (1024), some of them empty.
    let pieces: Vec<String> = (0..3000)
        .map(|i| {
            if i % 7 == 0 {
                String::new()
            } else {
                format!("{i},")
            }
        })
        .collect();
    let mut file = File::create(&path).expect("create");
    atomic_write::write_pieces(&mut file, pieces.iter().map(|p| p.as_bytes())).expect("written");
    drop(file);
    assert_eq!(fs::read_to_string(&path).expect("read"), pieces.concat());
    let mut file = File::create(&path).expect("create");
    atomic_write::write_pieces(&mut file, [&b""[..], b""].into_iter()).expect("nothing to write");
    assert_eq!(fs::read_to_string(&path).expect("read"), "");
}
