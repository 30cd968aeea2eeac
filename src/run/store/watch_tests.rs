use std::time::{Duration, Instant};

use super::*;
use crate::core::taskfile::splice::TaskText;

const OURS: &str = "{\"tasks\": []}\n";

/// A file holding `OURS` and a guard that knows it as herd's.
fn guarded() -> (tempfile::TempDir, PathBuf, Guard) {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("tasks.json");
    fs::write(&path, OURS).expect("write");
    let version = DiskVersion::of(&fs::metadata(&path).expect("stat"));
    let text = TaskText::new(OURS.to_string()).shared();
    let guard = Guard::new(path.clone(), Some(version), text, false);
    (dir, path, guard)
}

fn changed_text(on_disk: OnDisk) -> Option<Vec<u8>> {
    match on_disk {
        OnDisk::Changed(theirs) => Some(theirs.text),
        _ => None,
    }
}

#[test]
fn herds_own_version_is_expected_by_stat_and_by_text() {
    let (_dir, path, mut guard) = guarded();
    assert!(matches!(guard.look(false), OnDisk::Expected));
    assert!(matches!(guard.look(true), OnDisk::Expected));
    // Written again with the same text (a `touch`, a save without changes): still herd's.
    fs::write(&path, OURS).expect("write");
    assert!(matches!(guard.look(false), OnDisk::Expected));
}

#[test]
fn a_version_written_in_place_or_renamed_over_is_reported_once() {
    for in_place in [true, false] {
        let (dir, path, mut guard) = guarded();
        let theirs = "{\"tasks\": [], \"x\": 1}\n";
        if in_place {
            fs::write(&path, theirs).expect("write");
        } else {
            let other = dir.path().join("other");
            fs::write(&other, theirs).expect("write");
            fs::rename(&other, &path).expect("rename");
        }
        assert_eq!(
            changed_text(guard.look(false)).as_deref(),
            Some(theirs.as_bytes())
        );
        assert!(matches!(guard.look(false), OnDisk::Reported));
        assert!(matches!(guard.look(true), OnDisk::Reported));
        // Once merged, it is the version herd may write over.
        let version = DiskVersion::of(&fs::metadata(&path).expect("stat"));
        guard.adopt(version);
        assert_eq!(guard.expected(), Some(version));
        assert!(matches!(guard.look(true), OnDisk::Expected));
    }
}

#[test]
fn a_file_that_is_gone_is_missing_and_one_put_back_is_a_new_version() {
    let (_dir, path, mut guard) = guarded();
    fs::remove_file(&path).expect("remove");
    assert!(matches!(guard.look(false), OnDisk::Missing));
    fs::write(&path, "{\"tasks\": [1]}").expect("write");
    assert!(changed_text(guard.look(false)).is_some());
}

#[test]
fn a_rename_keeps_the_content_identity_an_edit_does_not() {
    let (dir, path, _guard) = guarded();
    let before = DiskVersion::of(&fs::metadata(&path).expect("stat"));
    let moved = dir.path().join("moved");
    fs::rename(&path, &moved).expect("rename");
    let after = DiskVersion::of(&fs::metadata(&moved).expect("stat"));
    assert!(before.same_content(&after));
    fs::write(&moved, "{\"tasks\": [ ]}\n").expect("write");
    let edited = DiskVersion::of(&fs::metadata(&moved).expect("stat"));
    assert!(!before.same_content(&edited));
}

#[test]
fn the_watcher_tells_of_writes_to_the_files_name_only() {
    let (dir, path, _guard) = guarded();
    let (tx, rx) = std::sync::mpsc::channel();
    let Some(_watcher) = watch(&path, move |wrote| {
        let _ = tx.send((Instant::now(), wrote));
    }) else {
        eprintln!("no inotify here: nothing to test");
        return;
    };
    fs::write(dir.path().join("another"), "x").expect("write");
    let written = Instant::now();
    fs::write(&path, "{\"tasks\": [ ]}").expect("write");
    let (told, wrote) = rx.recv_timeout(Duration::from_secs(5)).expect("told");
    assert!(told >= written, "a write to another file does not count");
    assert!(told - written < Duration::from_secs(1));
    assert!(wrote, "written in place: its text is to be read");
    // A file renamed into its place (what herd's own writes do): a stat tells.
    let other = dir.path().join("other");
    fs::write(&other, "{\"tasks\": []}").expect("write");
    fs::rename(&other, &path).expect("rename");
    let (_, wrote) = rx.recv_timeout(Duration::from_secs(5)).expect("told");
    assert!(!wrote, "renamed into place");
}
