//! The tasks file edited by its operator while herd runs it, through the real binary: a second
//! party (this test) edits the file at random (seeded) moments of a 200-task run, in place and by
//! rename: it adds tasks, changes prompts, disables and removes tasks that have not started,
//! adds fields of its own, and now and then leaves a syntax error that it fixes a moment later.
//! A reader reads the file all along. At the end: herd never left a file that does not parse
//! (every read that did not fall while the operator was writing or had left an error parsed),
//! every edit is in the file and took effect on every attempt that started after herd read it (a
//! changed prompt is what the agent got, a disabled or removed task never started, an added task
//! ran), and every task herd ran has its result. A task the operator saw not started may start
//! while the edit is being made: herd's log (its merges and launches, in order) tells those.
//!
//! One task (`gate`) waits for the editor to be done, so the run outlasts the edits; after each
//! edit the editor waits until herd has written the file (it merged the edit).
//! `HERD_EDITS_SEED` (default 1) varies the run; the figures are printed (`--nocapture`).

#![allow(clippy::unwrap_used)]

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

mod common;
use common::herd;
use serde_json::{Value, json};

/// A small seeded generator (xorshift).
struct Seeded(u64);

impl Seeded {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        usize::try_from(self.next() % n.max(1) as u64).unwrap()
    }
}

const TASKS: usize = 200;
const EDITS: usize = 60;

/// A quick task: prints its prompt, then the marker.
fn quick(id: &str, prompt: &str) -> Value {
    json!({
        "task_id": id,
        "agent": "generic",
        "prompt_template": prompt,
        "command": ["sh", "-c", "sleep 0.1; echo \"prompt: $0\"; echo TASK_COMPLETE:{task_id}", "{rendered_prompt}"],
    })
}

/// herd, ended if the test fails before it ends by itself.
struct Running(Option<std::process::Child>);

impl Running {
    /// `herd run --headless` on the tasks file, its stdout and stderr piped.
    fn headless(path: &std::path::Path) -> Running {
        Running(Some(
            herd()
                .args(["run", "--headless", "--tasks"])
                .arg(path)
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap(),
        ))
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Some(child) = &mut self.0 {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// What the operator did, to check at the end.
#[derive(Default)]
struct Edits {
    added: BTreeSet<String>,
    prompts: BTreeMap<String, String>,
    disabled: BTreeSet<String>,
    removed: BTreeSet<String>,
    fields: BTreeMap<String, String>,
    in_place: usize,
    renamed: usize,
    syntax_errors: usize,
    /// The task the edit being made targets (a prompt changed, disabled or removed).
    target: Option<String>,
    /// For each targeted task, when the operator began to write the edit that targeted it last.
    written_at: BTreeMap<String, jiff::Timestamp>,
}

/// The operator's writes, in place (truncate and write) or by rename; `dirty` is set while
/// the file may be half written or wrong because of them.
struct Operator {
    path: PathBuf,
    dirty: Arc<AtomicBool>,
    random: Seeded,
}

impl Operator {
    /// Writes `text`; the identity of the file written, read from the operator's own handle
    /// (herd may replace the file at once).
    fn write(&mut self, text: &str, edits: &mut Edits) -> (u64, i64, i64) {
        self.dirty.store(true, Ordering::SeqCst);
        let in_place = self.random.below(2) == 0;
        let written = if in_place {
            self.path.clone()
        } else {
            self.path.with_file_name("tasks.json.editing")
        };
        let mut file = std::fs::File::create(&written).unwrap();
        file.write_all(text.as_bytes()).unwrap();
        let meta = file.metadata().unwrap();
        drop(file);
        if in_place {
            edits.in_place += 1;
        } else {
            std::fs::rename(&written, &self.path).unwrap();
            edits.renamed += 1;
        }
        (meta.ino(), meta.mtime(), meta.mtime_nsec())
    }

    /// The file as the operator reads it before an edit (never while writing it).
    fn read(&self) -> Value {
        let text = std::fs::read_to_string(&self.path).unwrap();
        serde_json::from_str(&text)
            .unwrap_or_else(|e| panic!("herd left a file that does not parse: {e}"))
    }
}

/// Ids of tasks the operator can see have not started, from the later part of the queue (so
/// that herd seldom starts them while the edit is being made; when it does, the edit applies to
/// the task's next attempt only: see `check_the_end`).
fn untouched_late(doc: &Value, edits: &Edits) -> Vec<String> {
    let ids: Vec<String> = doc["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t.get("status").is_none() && t["enabled"] != false)
        .map(|t| t["task_id"].as_str().unwrap().to_string())
        .filter(|id| id.starts_with("t-") && !edits.prompts.contains_key(id))
        .collect();
    ids[ids.len() * 2 / 3..].to_vec()
}

/// One edit of `doc`, chosen by `kind`; false when there was nothing to edit.
fn edit(doc: &mut Value, kind: usize, step: usize, random: &mut Seeded, edits: &mut Edits) -> bool {
    let late = untouched_late(doc, edits);
    let tasks = doc["tasks"].as_array_mut().unwrap();
    match kind {
        0 => {
            let id = format!("added-{step}");
            tasks.push(quick(&id, &format!("an added task {step}")));
            edits.added.insert(id);
        }
        1..=3 if late.is_empty() => return false,
        1 => {
            let id = &late[random.below(late.len())];
            let prompt = format!("edited prompt {step}");
            let task = tasks.iter_mut().find(|t| t["task_id"] == **id).unwrap();
            task["prompt_template"] = json!(prompt);
            edits.prompts.insert(id.clone(), prompt);
            edits.target = Some(id.clone());
        }
        2 => {
            let id = &late[random.below(late.len())];
            let task = tasks.iter_mut().find(|t| t["task_id"] == **id).unwrap();
            task["enabled"] = json!(false);
            edits.disabled.insert(id.clone());
            edits.target = Some(id.clone());
        }
        3 => {
            let id = late[random.below(late.len())].clone();
            tasks.retain(|t| t["task_id"] != *id);
            edits.prompts.remove(&id);
            edits.target = Some(id.clone());
            edits.removed.insert(id);
        }
        _ => {
            let index = random.below(tasks.len());
            let id = tasks[index]["task_id"].as_str().unwrap().to_string();
            if edits.removed.contains(&id) {
                return false;
            }
            let value = format!("note {step}");
            tasks[index]["operator_note"] = json!(value);
            edits.fields.insert(id, value);
        }
    }
    true
}

/// Waits until the file is no longer the version the operator left: herd wrote after merging
/// it. False after 20 s.
fn wait_for_herd_to_write(path: &Path, left: (u64, i64, i64)) -> bool {
    let deadline = Instant::now() + Duration::from_secs(20);
    while Instant::now() < deadline {
        let meta = std::fs::metadata(path).unwrap();
        if (meta.ino(), meta.mtime(), meta.mtime_nsec()) != left {
            return true;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    false
}

/// Reads the file until `stop`; counts reads and the ones that did not parse while the operator
/// was not writing.
fn reader(
    path: PathBuf,
    dirty: Arc<AtomicBool>,
    stop: Arc<AtomicBool>,
) -> (usize, usize, Vec<String>) {
    let (mut reads, mut excused, mut bad) = (0, 0, Vec::new());
    while !stop.load(Ordering::SeqCst) {
        let before = dirty.load(Ordering::SeqCst);
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        let after = dirty.load(Ordering::SeqCst);
        reads += 1;
        if let Err(error) = serde_json::from_str::<Value>(&text) {
            if before || after {
                excused += 1;
            } else {
                bad.push(format!("{error}: {} bytes", text.len()));
            }
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    (reads, excused, bad)
}

#[test]
fn edits_during_a_200_task_run_are_merged_never_lost_and_take_effect() {
    let seed = std::env::var("HERD_EDITS_SEED")
        .ok()
        .and_then(|s| s.parse::<u64>().ok())
        .unwrap_or(1);
    let mut random = Seeded(seed.max(1).wrapping_mul(0x9E37_79B9_7F4A_7C15));
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tasks.json");
    let mut tasks: Vec<Value> = (0..TASKS - 1)
        .map(|i| quick(&format!("t-{i:03}"), &format!("prompt {i}")))
        .collect();
    tasks.insert(
        0,
        json!({"task_id": "gate", "agent": "generic", "prompt_template": "gate",
               "command": ["sh", "-c", "while [ ! -e editor-done ]; do sleep 0.05; done; echo TASK_COMPLETE:{task_id}"]}),
    );
    let start_doc = json!({"run_id": "edits", "tasks": tasks});
    std::fs::write(&path, serde_json::to_string_pretty(&start_doc).unwrap()).unwrap();
    let started = Instant::now();
    let mut running = Running(Some(
        herd()
            .args(["run", "--headless", "--concurrency", "6", "--tasks"])
            .arg(&path)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    ));
    // The edits start once herd has read the file and started (the gate's folder is there).
    let deadline = Instant::now() + Duration::from_secs(20);
    while !dir.path().join("runs/gate").exists() {
        assert!(Instant::now() < deadline, "herd did not start");
        std::thread::sleep(Duration::from_millis(10));
    }
    let dirty = Arc::new(AtomicBool::new(false));
    let stop = Arc::new(AtomicBool::new(false));
    let reading = {
        let (path, dirty, stop) = (path.clone(), Arc::clone(&dirty), Arc::clone(&stop));
        std::thread::spawn(move || reader(path, dirty, stop))
    };
    let mut operator = Operator {
        path: path.clone(),
        dirty: Arc::clone(&dirty),
        random: Seeded(random.next() | 1),
    };
    let mut edits = Edits::default();
    let made = AtomicUsize::new(0);
    let mut merged_all = true;
    for step in 0..EDITS {
        // A random moment: herd goes on meanwhile.
        std::thread::sleep(Duration::from_millis(30 + random.next() % 150));
        let mut doc = operator.read();
        if !edit(&mut doc, random.below(5), step, &mut random, &mut edits) {
            continue;
        }
        made.fetch_add(1, Ordering::SeqCst);
        let good = serde_json::to_string_pretty(&doc).unwrap();
        if random.below(8) == 0 {
            // Half a file, then (a moment later) the whole one.
            operator.write(&good[..good.len() / 2], &mut edits);
            edits.syntax_errors += 1;
            std::thread::sleep(Duration::from_millis(100 + random.next() % 400));
        }
        // Herd's merges of this edit are the ones it logs from now on until it writes again.
        if let Some(id) = edits.target.take() {
            edits.written_at.insert(id, jiff::Timestamp::now());
        }
        let left = operator.write(&good, &mut edits);
        dirty.store(false, Ordering::SeqCst);
        // The next edit waits until herd has taken this one in (it writes after merging), so
        // that what it logs tells which of its attempts started before it read which edit.
        if !wait_for_herd_to_write(&path, left) {
            merged_all = false;
            break;
        }
    }
    std::fs::write(dir.path().join("editor-done"), "").unwrap();
    let mut child = running.0.take().unwrap();
    if !merged_all {
        let _ = child.kill();
    }
    let out = child.wait_with_output().unwrap();
    let log = std::fs::read_to_string(dir.path().join("runs/herd.log")).unwrap_or_default();
    assert!(
        merged_all,
        "herd did not take in an edit: {}\nherd.log:\n{log}",
        common::describe(&out)
    );
    let took = started.elapsed();
    stop.store(true, Ordering::SeqCst);
    let (reads, excused, bad) = reading.join().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let said = |what: &str| stdout.lines().filter(|l| l.contains(what)).count();
    println!(
        "seed {seed}: {} tasks + {} added in {:.1} s; {} edits ({} writes in place, {} by rename), {} \
         prompts changed, {} disabled, {} removed, {} fields added, {} syntax errors; herd said \
         'tasks file changed' {} times and 'does not parse' {} times; {reads} reads, {excused} \
         caught the operator mid-write, {} did not parse otherwise",
        TASKS,
        edits.added.len(),
        took.as_secs_f64(),
        made.load(Ordering::SeqCst),
        edits.in_place,
        edits.renamed,
        edits.prompts.len(),
        edits.disabled.len(),
        edits.removed.len(),
        edits.fields.len(),
        edits.syntax_errors,
        said("tasks file changed"),
        said("does not parse"),
        bad.len()
    );
    assert_eq!(out.status.code(), Some(0), "{}", common::describe(&out));
    assert!(
        bad.is_empty(),
        "herd left a file that does not parse: {bad:?}"
    );
    let log = HerdLog::read(&log);
    assert!(
        log.merges.len() >= made.load(Ordering::SeqCst),
        "herd.log has a merge for each edit"
    );
    check_the_end(dir.path(), &edits, &stdout, &log);
}

/// What herd's log says of the order of things: where it merged the operator's versions and
/// where each agent launched (herd logs both from its engine, in the order they happen).
struct HerdLog {
    /// Each merge: its line and its time.
    merges: Vec<(usize, jiff::Timestamp)>,
    /// Each task's first launch: its line.
    starts: BTreeMap<String, usize>,
}

impl HerdLog {
    fn read(log: &str) -> HerdLog {
        let mut read = HerdLog {
            merges: Vec::new(),
            starts: BTreeMap::new(),
        };
        for (line, text) in log.lines().enumerate() {
            if text.contains(": tasks file changed: ") {
                let at = text.split_whitespace().next().and_then(|t| t.parse().ok());
                read.merges
                    .push((line, at.unwrap_or_else(|| panic!("no time: {text}"))));
            } else if text.contains(": starting ") {
                let task = text
                    .split_whitespace()
                    .find_map(|field| field.strip_prefix("task="));
                if let Some(task) = task {
                    read.starts.entry(task.to_string()).or_insert(line);
                }
            }
        }
        read
    }

    /// Whether `task`'s agent launched before herd merged a version written at `written` or
    /// later (the edit came too late for that attempt).
    fn started_before_merge(&self, task: &str, written: jiff::Timestamp) -> bool {
        let merged = self
            .merges
            .iter()
            .find(|(_, at)| *at >= written)
            .map_or(usize::MAX, |(line, _)| *line);
        self.starts.get(task).is_some_and(|&line| line < merged)
    }
}

/// Every edit is in the file and took effect on every attempt that started after herd read
/// it (herd's promise: an edit applies to the next attempt, and a task the operator saw not
/// started may have started meanwhile); every task herd ran has its result.
fn check_the_end(dir: &Path, edits: &Edits, stdout: &str, log: &HerdLog) {
    let doc: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("tasks.json")).unwrap()).unwrap();
    let tasks: BTreeMap<String, &Value> = doc["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| (t["task_id"].as_str().unwrap().to_string(), t))
        .collect();
    let ran = |id: &str| dir.join("runs").join(id).join("attempt_1.log").exists();
    let too_late = |id: &str| log.started_before_merge(id, edits.written_at[id]);
    let mut late = 0;
    for id in &edits.removed {
        assert!(!tasks.contains_key(id), "{id} was removed: {stdout}");
        if too_late(id) {
            late += 1;
        } else {
            assert!(!ran(id), "{id} was removed before it started, yet it ran");
        }
    }
    for (id, task) in &tasks {
        if edits.disabled.contains(id) {
            assert_eq!(task["enabled"], false, "{id}");
            if !too_late(id) {
                // Never started: no status, or `pending` with no attempt when herd withdrew a
                // start that was waiting for its write when the edit came.
                let untouched = task.get("status").is_none()
                    || (task["status"] == "pending" && task["attempts"] == 0);
                assert!(untouched, "{id} was disabled: {task}");
                assert!(!ran(id), "{id} was disabled before it started, yet it ran");
                continue;
            }
            late += 1;
        }
        assert_eq!(task["status"], "completed", "{id}: {task}");
        assert!(
            log.starts.contains_key(id),
            "herd.log says when {id} started"
        );
        assert_eq!(task["attempts"], 1, "{id}: {task}");
        assert_eq!(task["result"]["exit_code"], 0, "{id}: {task}");
        if let Some(prompt) = edits.prompts.get(id) {
            assert_eq!(task["prompt_template"], prompt.as_str(), "{id}");
            let log =
                std::fs::read_to_string(dir.join("runs").join(id).join("attempt_1.log")).unwrap();
            if too_late(id) {
                late += 1;
            } else {
                assert!(
                    log.contains(&format!("prompt: {prompt}")),
                    "{id} ran with: {log}"
                );
            }
        }
        if let Some(note) = edits.fields.get(id) {
            assert_eq!(task["operator_note"], note.as_str(), "{id}");
        }
    }
    for id in &edits.added {
        assert!(tasks.contains_key(id), "{id} was added");
    }
    let expected = TASKS + edits.added.len() - edits.removed.len();
    assert_eq!(tasks.len(), expected, "tasks at the end");
    println!("{late} edits reached their task after its attempt had started");
}

/// Waits until `done` holds of the tasks file as read (a read that does not parse counts as not).
fn wait_for_file(path: &Path, what: &str, done: impl Fn(&Value) -> bool) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let text = std::fs::read_to_string(path).unwrap_or_default();
        if serde_json::from_str::<Value>(&text).is_ok_and(|doc| done(&doc)) {
            return;
        }
        assert!(Instant::now() < deadline, "waited for {what}: {text}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn status_of<'a>(doc: &'a Value, id: &str) -> &'a Value {
    &common::task(doc, id)["status"]
}

#[test]
fn a_file_that_still_does_not_parse_at_the_end_is_left_alone_and_herds_version_goes_beside_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tasks.json");
    let doc = json!({"tasks": [
        quick("a", "first"),
        {"task_id": "b", "agent": "generic", "prompt_template": "x",
         "command": ["sh", "-c", "while [ ! -e go ]; do sleep 0.05; done; echo TASK_COMPLETE:{task_id}"]},
    ]});
    std::fs::write(&path, serde_json::to_string_pretty(&doc).unwrap()).unwrap();
    let running = Running::headless(&path);
    wait_for_file(&path, "a completed", |doc| {
        status_of(doc, "a") == "completed"
    });
    // The operator's typo, never fixed; then b ends and so does the run.
    let broken = std::fs::read_to_string(&path)
        .unwrap()
        .replacen("\"tasks\":", "\"tasks\"", 1);
    std::fs::write(&path, &broken).unwrap();
    std::fs::write(dir.path().join("go"), "").unwrap();
    let mut running = running;
    let out = running.0.take().unwrap().wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(3), "{}", common::describe(&out));
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        broken,
        "their text is untouched"
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    // Found at the end: the message that ends the run says where the error is.
    assert!(
        stderr.contains(&format!("{}:2:", path.display())) && stderr.contains("not valid JSON"),
        "where the error is: {stderr}"
    );
    let beside: Vec<PathBuf> = std::fs::read_dir(dir.path())
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.to_string_lossy().contains("tasks.json.herd-"))
        .collect();
    assert_eq!(beside.len(), 1, "{beside:?}");
    assert!(
        stderr.contains(&beside[0].display().to_string()),
        "says where: {stderr}"
    );
    let herds: Value = serde_json::from_str(&std::fs::read_to_string(&beside[0]).unwrap()).unwrap();
    assert_eq!(status_of(&herds, "a"), "completed");
    assert_eq!(status_of(&herds, "b"), "completed", "{herds:#}");
    // herd's version taken as the file: the run resumes with nothing left to do.
    std::fs::rename(&beside[0], &path).unwrap();
    let again = herd()
        .args(["run", "--headless", "--tasks"])
        .arg(&path)
        .output()
        .unwrap();
    assert_eq!(again.status.code(), Some(0), "{}", common::describe(&again));
    assert!(!dir.path().join("runs/b/attempt_2.log").exists());
}

#[test]
fn a_task_removed_while_its_agent_runs_is_ended_and_recorded_not_written_back() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tasks.json");
    let doc = json!({"tasks": [
        {"task_id": "long", "agent": "generic", "prompt_template": "x",
         "command": ["sh", "-c", "touch started; sleep 60; echo TASK_COMPLETE:{task_id}"]},
        quick("kept", "kept"),
    ]});
    std::fs::write(&path, serde_json::to_string_pretty(&doc).unwrap()).unwrap();
    let started = Instant::now();
    let mut running = Running::headless(&path);
    wait_for_file(&path, "kept completed", |doc| {
        status_of(doc, "kept") == "completed"
    });
    let deadline = Instant::now() + Duration::from_secs(30);
    while !dir.path().join("started").exists() {
        assert!(Instant::now() < deadline, "long did not start");
        std::thread::sleep(Duration::from_millis(20));
    }
    // Removed by rename, with a field of the operator's on the task that stays.
    let mut doc: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let tasks = doc["tasks"].as_array_mut().unwrap();
    tasks.retain(|t| t["task_id"] != "long");
    tasks[0]["mine"] = json!(true);
    let beside = dir.path().join("edited");
    std::fs::write(&beside, serde_json::to_string_pretty(&doc).unwrap()).unwrap();
    std::fs::rename(&beside, &path).unwrap();
    let out = running.0.take().unwrap().wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", common::describe(&out));
    assert!(
        started.elapsed() < Duration::from_secs(50),
        "its agent was ended"
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("tasks file changed: 1 task removed"),
        "{stdout}"
    );
    let end: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(end["tasks"].as_array().unwrap().len(), 1, "{end:#}");
    assert_eq!(status_of(&end, "kept"), "completed");
    assert_eq!(common::task(&end, "kept")["mine"], true);
    let log = std::fs::read_to_string(dir.path().join("runs/herd.log")).unwrap();
    assert!(
        log.contains("removed from the tasks file while it ran"),
        "{log}"
    );
    assert!(dir.path().join("runs/long/attempt_1.log").exists());
}

/// Waits until `path` exists.
fn wait_for_path(path: &Path) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while !path.exists() {
        assert!(Instant::now() < deadline, "waited for {}", path.display());
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn results_of_a_run_that_ended_while_the_file_did_not_parse_are_taken_from_runs_when_it_is_fixed() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tasks.json");
    let gated = |id: &str| {
        json!({"task_id": id, "agent": "generic", "prompt_template": "x",
         "command": ["sh", "-c", "touch started_{task_id}; while [ ! -e go ]; do sleep 0.05; done; echo TASK_COMPLETE:{task_id}"]})
    };
    let doc = json!({"tasks": [quick("a", "first"), gated("b"), gated("c")]});
    std::fs::write(&path, serde_json::to_string_pretty(&doc).unwrap()).unwrap();
    let mut running = Running(Some(
        herd()
            .args(["run", "--headless", "--concurrency", "3", "--tasks"])
            .arg(&path)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    ));
    wait_for_file(&path, "a completed", |doc| {
        status_of(doc, "a") == "completed"
    });
    wait_for_path(&dir.path().join("started_b"));
    wait_for_path(&dir.path().join("started_c"));
    // The operator's copy says b and c run; their edit of it has a typo when the run ends.
    let mut theirs: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(status_of(&theirs, "b"), "running", "{theirs:#}");
    assert_eq!(status_of(&theirs, "c"), "running", "{theirs:#}");
    let tasks = theirs["tasks"].as_array_mut().unwrap();
    let b = tasks.iter_mut().find(|t| t["task_id"] == "b").unwrap();
    b["mine"] = json!("kept");
    let fixed = serde_json::to_string_pretty(&theirs).unwrap();
    std::fs::write(&path, fixed.replacen("\"tasks\":", "\"tasks\"", 1)).unwrap();
    std::fs::write(dir.path().join("go"), "").unwrap();
    let out = running.0.take().unwrap().wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(3), "{}", common::describe(&out));
    // The operator fixes their own file (herd's version beside it is not used) and runs again.
    std::fs::write(&path, &fixed).unwrap();
    let again = herd()
        .args(["run", "--headless", "--tasks"])
        .arg(&path)
        .output()
        .unwrap();
    assert_eq!(again.status.code(), Some(0), "{}", common::describe(&again));
    for id in ["b", "c"] {
        assert!(
            !dir.path().join(format!("runs/{id}/attempt_2.log")).exists(),
            "{id} ran again"
        );
    }
    let stdout = String::from_utf8_lossy(&again.stdout);
    assert!(
        stdout.contains(
            "recovered 2 results from runs/: b completed after attempt 1, c completed after attempt 1"
        ),
        "{stdout}"
    );
    assert!(!stdout.contains("was interrupted"), "{stdout}");
    let end: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    for id in ["a", "b", "c"] {
        let task = common::task(&end, id);
        assert_eq!(task["status"], "completed", "{end:#}");
        assert_eq!(task["attempts"], 1, "{end:#}");
        assert_eq!(task["result"]["attempt"], 1, "{end:#}");
        assert_eq!(task["result"]["completion_marker_seen"], true, "{end:#}");
        assert_eq!(task["result"]["exit_code"], 0, "{end:#}");
    }
    assert_eq!(common::task(&end, "b")["mine"], "kept", "their edit stays");
    let log = std::fs::read_to_string(dir.path().join("runs/herd.log")).unwrap();
    assert!(log.contains("recovered 2 results from runs/"), "{log}");
}

/// The lines herd printed so far, read on a thread.
fn collect_lines(
    stream: impl std::io::Read + Send + 'static,
) -> (
    Arc<std::sync::Mutex<Vec<String>>>,
    std::thread::JoinHandle<()>,
) {
    use std::io::BufRead;
    let lines = Arc::new(std::sync::Mutex::new(Vec::new()));
    let kept = Arc::clone(&lines);
    let reading = std::thread::spawn(move || {
        for line in std::io::BufReader::new(stream).lines() {
            let Ok(line) = line else { return };
            kept.lock().unwrap().push(line);
        }
    });
    (lines, reading)
}

/// Waits until `done` holds of the text of `path`.
fn wait_for_text(path: &Path, what: &str, done: impl Fn(&str) -> bool) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let text = std::fs::read_to_string(path).unwrap_or_default();
        if done(&text) {
            return;
        }
        assert!(Instant::now() < deadline, "waited for {what}: {text}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn headless_says_once_that_the_file_does_not_parse_and_once_that_it_parses_again() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tasks.json");
    let doc = json!({"tasks": [
        quick("a", "first"),
        {"task_id": "b", "agent": "generic", "prompt_template": "x",
         "command": ["sh", "-c", "touch started; while [ ! -e go ]; do sleep 0.05; done; echo TASK_COMPLETE:{task_id}"]},
    ]});
    std::fs::write(&path, serde_json::to_string_pretty(&doc).unwrap()).unwrap();
    let mut running = Running::headless(&path);
    let stdout = running.0.as_mut().unwrap().stdout.take().unwrap();
    let (lines, reading) = collect_lines(stdout);
    let printed = |what: &str| {
        let lines = lines.lock().unwrap();
        lines.iter().filter(|l| l.contains(what)).count()
    };
    let wait_for_line = |what: &str| {
        let deadline = Instant::now() + Duration::from_secs(30);
        while printed(what) == 0 {
            assert!(
                Instant::now() < deadline,
                "waited for {what:?}: {:?}",
                lines.lock().unwrap()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    };
    wait_for_file(&path, "a completed", |doc| {
        status_of(doc, "a") == "completed"
    });
    wait_for_path(&dir.path().join("started"));
    let valid = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, valid.replacen("\"tasks\":", "\"tasks\"", 1)).unwrap();
    wait_for_line(&format!("tasks file does not parse: {}:2:", path.display()));
    // Another error, elsewhere: herd follows it (herd.log) without another line.
    let log = dir.path().join("runs/herd.log");
    std::fs::write(&path, format!("{valid}\n,")).unwrap();
    wait_for_text(&log, "the second error read", |log| {
        log.contains("the tasks file still does not parse")
    });
    let mut fixed: Value = serde_json::from_str(&valid).unwrap();
    fixed["tasks"][0]["mine"] = json!(1);
    std::fs::write(&path, serde_json::to_string_pretty(&fixed).unwrap()).unwrap();
    wait_for_line("tasks file parses again: herd writes its changes");
    std::fs::write(dir.path().join("go"), "").unwrap();
    let out = running.0.take().unwrap().wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", common::describe(&out));
    reading.join().unwrap();
    let said: Vec<String> = lines.lock().unwrap().clone();
    assert_eq!(printed("does not parse"), 1, "{said:#?}");
    assert_eq!(printed("parses again"), 1, "{said:#?}");
    assert!(
        said.iter()
            .any(|l| l.contains("herd holds its changes until it does")),
        "{said:#?}"
    );
    let end: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(common::task(&end, "a")["mine"], 1);
    assert_eq!(status_of(&end, "b"), "completed");
}
