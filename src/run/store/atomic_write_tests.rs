use std::fs::{self, File};
use std::io::{Read, Seek, SeekFrom};
use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;

use serde_json::json;

use super::*;
use crate::run::store::TaskStore;
use crate::run::store::tests::names_in;

/// A tasks file of `n` tasks (with a byte order mark if `mark`), opened as a store.
fn store_of(n: usize, mark: bool) -> (tempfile::TempDir, PathBuf, TaskStore) {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("tasks.json");
    let tasks: Vec<String> = (0..n)
        .map(|i| format!(r#"  {{"task_id": "t{i}", "agent": "a", "prompt_template": "p"}}"#))
        .collect();
    let text = format!("{{\"tasks\": [\n{}\n]}}\n", tasks.join(",\n"));
    let bom = if mark { "\u{feff}" } else { "" };
    fs::write(&path, format!("{bom}{text}")).expect("write");
    let store = TaskStore::open(&path).expect("open");
    (dir, path, store)
}

/// Sets field `n` of task `index` to a string of `len` characters and takes the snapshot.
fn change(store: &mut TaskStore, index: usize, len: usize) -> Snapshot {
    store
        .file_mut()
        .set_field(index, "n", json!("x".repeat(len)));
    store.snapshot().expect("snapshot").expect("changed")
}

fn expected(snapshot: &Snapshot) -> Vec<u8> {
    let mut bytes = Vec::new();
    if snapshot.byte_order_mark {
        bytes.extend_from_slice(BYTE_ORDER_MARK);
    }
    bytes.extend(snapshot.text.bytes_from(0).flatten());
    bytes
}

#[test]
fn every_write_leaves_exactly_the_new_text_however_it_grows_or_shrinks() {
    for mark in [false, true] {
        let (dir, path, mut store) = store_of(200, mark);
        let mut ahead = WriteAhead::default();
        // Changes early and late in the file, growing and shrinking it.
        for (index, len) in [
            (5, 10),
            (190, 3),
            (5, 0),
            (0, 40),
            (199, 1),
            (100, 7),
            (0, 2),
        ] {
            let snapshot = change(&mut store, index, len);
            snapshot.write_with(&mut ahead, None).expect("written");
            ahead.prepare(&snapshot);
            assert_eq!(fs::read(&path).expect("read"), expected(&snapshot));
        }
        assert!(ahead.spare.is_some(), "the writes went through the spare");
        drop(ahead);
        assert_eq!(names_in(dir.path()), ["tasks.json", "tasks.json.lock"]);
    }
}

#[test]
fn a_reader_of_an_old_version_keeps_it_whole() {
    let (_dir, path, mut store) = store_of(50, false);
    let mut ahead = WriteAhead::default();
    let mut readers = Vec::new();
    for round in 0..6 {
        let snapshot = change(&mut store, round * 7, round + 1);
        snapshot.write_with(&mut ahead, None).expect("written");
        ahead.prepare(&snapshot);
        // Each version is held open by a reader (`less`, `tail -f`) through later writes.
        let mut file = File::open(&path).expect("open");
        let mut text = Vec::new();
        file.read_to_end(&mut text).expect("read");
        assert_eq!(text, expected(&snapshot));
        readers.push((file, text));
    }
    for (mut file, text) in readers {
        let mut again = Vec::new();
        file.seek(SeekFrom::Start(0)).expect("seek");
        file.read_to_end(&mut again).expect("read");
        assert_eq!(again, text, "a version someone held open was overwritten");
    }
}

#[test]
fn another_name_of_the_tasks_file_keeps_the_original() {
    let (dir, path, mut store) = store_of(10, false);
    let original = fs::read(&path).expect("read");
    let link = dir.path().join("link.json");
    fs::hard_link(&path, &link).expect("link");
    let mut ahead = WriteAhead::default();
    for round in 0..4 {
        let snapshot = change(&mut store, round, round + 3);
        snapshot.write_with(&mut ahead, None).expect("written");
        ahead.prepare(&snapshot);
        assert_eq!(fs::read(&path).expect("read"), expected(&snapshot));
        assert_eq!(fs::read(&link).expect("read"), original, "round {round}");
    }
}

#[test]
fn permissions_changed_during_a_run_are_kept() {
    let (_dir, path, mut store) = store_of(10, false);
    let mut ahead = WriteAhead::default();
    for (round, mode) in [0o644, 0o600, 0o640, 0o640, 0o604].into_iter().enumerate() {
        fs::set_permissions(&path, fs::Permissions::from_mode(mode)).expect("chmod");
        let snapshot = change(&mut store, round, round);
        snapshot.write_with(&mut ahead, None).expect("written");
        ahead.prepare(&snapshot);
        let now = fs::metadata(&path).expect("stat").permissions().mode() & 0o777;
        assert_eq!(now, mode, "round {round}");
    }
}

#[test]
fn a_write_over_a_version_that_is_not_the_files_any_more_writes_nothing() {
    for through_spare in [false, true] {
        let (_dir, path, mut store) = store_of(3, false);
        let mut ahead = WriteAhead::default();
        let first = change(&mut store, 0, 1);
        let Written::Done(version) = first.write_with(&mut ahead, None).expect("written") else {
            panic!("no guard, no refusal");
        };
        ahead.prepare(&first);
        if through_spare {
            // A second write makes the spare the next one writes through.
            let second = change(&mut store, 1, 1);
            let Written::Done(_) = second.write_with(&mut ahead, None).expect("written") else {
                panic!("no guard, no refusal");
            };
            ahead.prepare(&second);
        }
        let ours = fs::read(&path).expect("read");
        // The operator writes the file in place; herd's write names the version it wrote.
        let theirs = String::from_utf8(ours)
            .expect("utf-8")
            .replace("\"t2\"", "\"theirs\"");
        fs::write(&path, &theirs).expect("in place");
        let third = change(&mut store, 2, 5);
        let written = third
            .write_with(&mut ahead, Some(version))
            .expect("no error");
        assert_eq!(
            written,
            Written::NotOurs,
            "through the spare: {through_spare}"
        );
        assert_eq!(fs::read_to_string(&path).expect("read"), theirs);
    }
}
