//! `herd init` through the real binary: the file it writes for each `--agent` passes
//! `herd validate`; without `--agent` it is for the CLIs on PATH (the simulator when there is
//! none); it never overwrites a file without `--force`; and the simulator's file runs headless
//! with every task completed. Agent CLIs are stand-in programs on a PATH of the test's own, so
//! the result does not depend on what this machine has installed.

// Test code: a failed `expect` is the test failing, with its message.
#![allow(clippy::expect_used, clippy::unwrap_used)]

mod common;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::Value;

use common::{describe, herd};

/// A folder with a stand-in program for each of `names`, and the folders `sh` needs.
fn path_with(root: &Path, names: &[&str]) -> String {
    let bin = root.join("bin");
    std::fs::create_dir_all(&bin).expect("bin folder");
    for name in names {
        let program = bin.join(name);
        std::fs::write(&program, "#!/bin/sh\nexit 0\n").expect("stand-in");
        std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o755))
            .expect("executable");
    }
    format!("{}:/usr/bin:/bin", bin.display())
}

fn herd_in(dir: &Path, path: &str, args: &[&str]) -> Output {
    herd()
        .args(args)
        .current_dir(dir)
        .env("PATH", path)
        .output()
        .expect("herd runs")
}

fn work_folder(root: &Path) -> PathBuf {
    let work = root.join("project");
    std::fs::create_dir_all(&work).expect("project folder");
    work
}

fn read_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).expect("readable");
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}\n{text}", path.display()))
}

#[test]
fn the_file_for_each_agent_validates() {
    let root = tempfile::tempdir().expect("tempdir");
    let path = path_with(root.path(), &["claude", "codex", "gemini"]);
    let work = work_folder(root.path());
    for agent in ["claude", "codex", "gemini", "sim"] {
        let file = format!("{agent}.json");
        let written = herd_in(&work, &path, &["init", "--agent", agent, "--tasks", &file]);
        assert_eq!(
            written.status.code(),
            Some(0),
            "{agent}: {}",
            describe(&written)
        );
        let doc = read_json(&work.join(&file));
        assert_eq!(doc["defaults"]["agent"], agent, "{doc:#}");
        assert_eq!(doc["defaults"]["wait_for_quota_reset"], true, "{doc:#}");
        let trusts = agent != "sim";
        assert_eq!(
            doc["defaults"].get("trust_folder").is_some(),
            trusts,
            "{agent}: {doc:#}"
        );
        let validated = herd_in(&work, &path, &["validate", "--tasks", &file]);
        assert_eq!(
            validated.status.code(),
            Some(0),
            "{agent}: {}\n{doc:#}",
            describe(&validated)
        );
    }
}

#[test]
fn without_agent_it_is_for_the_clis_on_path_or_the_simulator() {
    let root = tempfile::tempdir().expect("tempdir");
    let work = work_folder(root.path());
    let two = path_with(&root.path().join("two"), &["codex", "gemini"]);
    let written = herd_in(&work, &two, &["init", "--tasks", "found.json"]);
    assert_eq!(written.status.code(), Some(0), "{}", describe(&written));
    let doc = read_json(&work.join("found.json"));
    assert_eq!(doc["defaults"]["agent"], "codex", "{doc:#}");
    assert_eq!(doc["tasks"][1]["agent"], "gemini", "{doc:#}");

    let none = path_with(&root.path().join("none"), &[]);
    let written = herd_in(&work, &none, &["init", "--tasks", "none.json"]);
    assert_eq!(written.status.code(), Some(0), "{}", describe(&written));
    assert_eq!(
        read_json(&work.join("none.json"))["defaults"]["agent"],
        "sim"
    );
    let said = String::from_utf8_lossy(&written.stdout);
    assert!(said.contains("the tasks use herd's simulator"), "{said}");
}

#[test]
fn an_existing_file_is_kept_unless_forced() {
    let root = tempfile::tempdir().expect("tempdir");
    let work = work_folder(root.path());
    let path = path_with(root.path(), &[]);
    std::fs::write(work.join("tasks.json"), "mine\n").expect("write");
    let refused = herd_in(&work, &path, &["init", "--agent", "sim"]);
    assert_eq!(refused.status.code(), Some(2), "{}", describe(&refused));
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains("tasks.json: already exists"),
        "{}",
        describe(&refused)
    );
    assert_eq!(
        std::fs::read_to_string(work.join("tasks.json")).expect("read"),
        "mine\n"
    );
    let forced = herd_in(&work, &path, &["init", "--agent", "sim", "--force"]);
    assert_eq!(forced.status.code(), Some(0), "{}", describe(&forced));
    assert_eq!(
        read_json(&work.join("tasks.json"))["defaults"]["agent"],
        "sim"
    );

    let unknown = herd_in(
        &work,
        &path,
        &["init", "--agent", "nope", "--tasks", "x.json"],
    );
    assert_eq!(unknown.status.code(), Some(2), "{}", describe(&unknown));
    assert!(!work.join("x.json").exists());
}

#[test]
fn the_simulators_file_runs_to_completion() {
    let root = tempfile::tempdir().expect("tempdir");
    let work = work_folder(root.path());
    let path = path_with(root.path(), &[]);
    let written = herd_in(&work, &path, &["init", "--agent", "sim"]);
    assert_eq!(written.status.code(), Some(0), "{}", describe(&written));
    let before = std::fs::read_to_string(work.join("tasks.json")).expect("read");
    let ran = herd_in(
        &work,
        &path,
        &["run", "--headless", "--tasks", "tasks.json"],
    );
    assert_eq!(ran.status.code(), Some(0), "{}", describe(&ran));
    let doc = read_json(&work.join("tasks.json"));
    let tasks = doc["tasks"].as_array().expect("tasks");
    assert_eq!(tasks.len(), 2, "{doc:#}");
    for task in tasks {
        assert_eq!(task["status"], "completed", "{task}\n{}", describe(&ran));
    }
    let defaults_before = read_json_text(&before)["defaults"].clone();
    assert_eq!(
        doc["defaults"], defaults_before,
        "defaults are never rewritten"
    );
}

fn read_json_text(text: &str) -> Value {
    serde_json::from_str(text).expect("JSON")
}

#[test]
fn help_points_newcomers_at_init() {
    let help = herd().arg("--help").output().expect("herd runs");
    let said = String::from_utf8_lossy(&help.stdout);
    assert!(said.contains("Start with: herd init"), "{said}");
    assert!(!said.contains("tasks.example.json"), "{said}");
}

/// The newcomer's night on the simulator: `herd init`'s preset, natural prompts, `--detach`,
/// and the batch finishes by itself, every task completed, none waiting out its timeout (the
/// preset's 3600 s) or a permission wait.
#[test]
fn a_detached_batch_on_the_preset_finishes_by_itself() {
    let root = tempfile::tempdir().expect("tempdir");
    let work = work_folder(root.path());
    let path = path_with(root.path(), &[]);
    let written = herd_in(&work, &path, &["init", "--agent", "sim"]);
    assert_eq!(written.status.code(), Some(0), "{}", describe(&written));
    let started = std::time::Instant::now();
    let detached = herd_in(&work, &path, &["run", "--detach", "--tasks", "tasks.json"]);
    assert_eq!(detached.status.code(), Some(0), "{}", describe(&detached));
    let deadline = started + std::time::Duration::from_secs(90);
    let doc = loop {
        let doc = read_json(&work.join("tasks.json"));
        let settled = doc["tasks"].as_array().is_some_and(|tasks| {
            tasks.iter().all(|t| {
                !matches!(
                    t["status"].as_str(),
                    Some("pending" | "running" | "retryable")
                )
            })
        });
        if settled || std::time::Instant::now() > deadline {
            break doc;
        }
        std::thread::sleep(std::time::Duration::from_millis(200));
    };
    let log = std::fs::read_to_string(work.join("runs/background.log")).unwrap_or_default();
    for task in doc["tasks"].as_array().expect("tasks") {
        assert_eq!(task["status"], "completed", "{task}\n{log}");
    }
    assert!(
        started.elapsed() < std::time::Duration::from_secs(90),
        "the batch did not finish by itself in 90 s:\n{doc:#}\n{log}"
    );
    let status = herd_in(&work, &path, &["status", "--tasks", "tasks.json"]);
    assert_eq!(status.status.code(), Some(0), "{}", describe(&status));
}
