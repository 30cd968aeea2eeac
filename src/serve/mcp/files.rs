//! The tools when no herd runs the tasks file: they read the file read-only (as `herd status`
//! does) and change it the way herd's own writers do, holding the file's lock (`TaskStore::open`)
//! from the read to the write, so a herd started meanwhile cannot interleave its writes. A
//! change is checked like the file (`run::validate`) before anything is written; a refused one
//! leaves the file as it was. `run_agent` starts a background herd for the task (`background`).

use std::io::{ErrorKind, Write};
use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

use super::tools::ToolError;
use crate::core::task::TaskStatus;
use crate::core::taskfile::TaskFile;
use crate::run::inputs::load_hosts;
use crate::run::inputs::load_profiles;
use crate::run::store::{StoreError, TaskStore};
use crate::run::validate::{self, Checks};
use crate::serve::explain::explain_attempt;
use crate::serve::summary;

/// What every tool needs to know of the tasks file and how herd is started on it.
#[derive(Debug, Clone)]
pub struct Setup {
    /// The tasks file as given to `herd mcp`.
    pub tasks: PathBuf,
    pub profiles: Option<PathBuf>,
    pub hosts: Option<PathBuf>,
    /// `--runs-dir`, else `runs/` beside the tasks file.
    pub runs_dir: PathBuf,
}

/// The tasks file, read without its lock; an empty queue while the file does not exist yet (the
/// first `add_task` creates it).
pub(super) fn read(setup: &Setup) -> Result<TaskFile, ToolError> {
    if !exists(&setup.tasks) {
        return TaskFile::parse(&empty_file_text(&setup.tasks)).map_err(|problems| {
            ToolError::new(
                "cannot start an empty queue",
                problems
                    .iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join("; "),
                "report it with herd's version",
            )
        });
    }
    TaskStore::read_only(&setup.tasks)
        .map(|store| store.file().clone())
        .map_err(|error| unusable(setup, &error))
}

/// Whether the tasks file (or what its symlink points to) exists.
fn exists(tasks: &Path) -> bool {
    !matches!(std::fs::metadata(tasks), Err(error) if error.kind() == ErrorKind::NotFound)
}

/// The text of a tasks file with no task, its `run_id` the file's name without `.json`.
fn empty_file_text(tasks: &Path) -> String {
    let run_id = tasks.file_stem().map_or_else(
        || "tasks".to_string(),
        |stem| stem.to_string_lossy().into_owned(),
    );
    format!(
        "{{\n  \"run_id\": {},\n  \"tasks\": []\n}}\n",
        Value::String(run_id)
    )
}

/// Creates the tasks file with no task, atomically (written beside it, then linked into place
/// without replacing anything): a file someone made meanwhile is left as it is.
fn create_empty(setup: &Setup) -> Result<(), ToolError> {
    let folder = setup
        .tasks
        .parent()
        .filter(|folder| !folder.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let created = tempfile::Builder::new()
        .prefix(".herd-new-tasks-")
        .tempfile_in(folder)
        .and_then(|mut temp| {
            temp.write_all(empty_file_text(&setup.tasks).as_bytes())?;
            temp.as_file().sync_all()?;
            temp.persist_noclobber(&setup.tasks)
                .map_err(|error| error.error)?;
            Ok(())
        });
    match created {
        Ok(()) => Ok(()),
        Err(error) if error.kind() == ErrorKind::AlreadyExists => Ok(()),
        Err(error) => Err(ToolError::new(
            format!("cannot create {}", setup.tasks.display()),
            error.to_string(),
            "make the folder writable, or give herd mcp --tasks a file in a writable folder",
        )),
    }
}

/// Every task's row (`serve::summary::row`, as `herd status --json`), in file order, only those
/// in `statuses` when given.
pub(super) fn rows(file: &TaskFile, statuses: Option<&[TaskStatus]>) -> Vec<Value> {
    file.tasks()
        .iter()
        .filter(|task| statuses.is_none_or(|wanted| wanted.contains(&task.status)))
        .map(summary::row)
        .collect()
}

/// Task `task_id`'s row.
pub(super) fn row(setup: &Setup, file: &TaskFile, task_id: &str) -> Result<Value, ToolError> {
    let index = index_of(setup, file, task_id)?;
    Ok(summary::row(&file.tasks()[index]))
}

pub(super) fn index_of(setup: &Setup, file: &TaskFile, task_id: &str) -> Result<usize, ToolError> {
    file.task_index(task_id).ok_or_else(|| {
        ToolError::new(
            format!("no task {task_id:?} in {}", setup.tasks.display()),
            "the tasks file has no task with that task_id",
            "list_tasks shows the task ids; add_task adds a task",
        )
    })
}

/// Sets (or, for `null`, removes) the fields of `patch` on task `task_id`; its new row.
pub(super) fn update_task(
    setup: &Setup,
    task_id: &str,
    patch: &Map<String, Value>,
) -> Result<Value, ToolError> {
    let mut store = open(setup)?;
    let index = index_of(setup, store.file(), task_id)?;
    let file = store.file_mut();
    for (key, value) in patch {
        match value {
            Value::Null => file.remove_field(index, key),
            value => file.set_field(index, key, value.clone()),
        }
    }
    let mut changed = store.file().clone();
    changed.splice_changes();
    refuse_problems(setup, &changed.shared_text().to_string(), task_id, "update")?;
    store.save().map_err(|error| not_written(setup, &error))?;
    Ok(summary::row(&store.file().tasks()[index]))
}

/// Appends `task` to the tasks file, laid out like the task before it; its row.
pub(super) fn add_task(setup: &Setup, task: &Map<String, Value>) -> Result<Value, ToolError> {
    let task_id = task.get("task_id").and_then(Value::as_str).unwrap_or("");
    let mut store = open_or_create(setup)?;
    if store.file().task_index(task_id).is_some() {
        return Err(ToolError::new(
            format!("task {task_id:?} exists already"),
            "task ids are unique in a tasks file: each names its task and its folder under runs/",
            "pick another task_id, or change the task with update_task",
        ));
    }
    let text = store.text_with_task(&Value::Object(task.clone()));
    refuse_problems(setup, &text, task_id, "addition")?;
    store.merge_own(&text).map_err(|problems| {
        ToolError::new(
            "the task was not added",
            problems
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join("; "),
            "fix the task so that `herd validate` accepts it; nothing was written",
        )
    })?;
    store.save().map_err(|error| not_written(setup, &error))?;
    row(setup, store.file(), task_id)
}

/// The explanation of task `task_id`'s attempt `attempt` (its latest by default), recorded
/// under `runs_dir`.
pub(super) fn explain(
    setup: &Setup,
    runs_dir: &Path,
    task_id: &str,
    attempt: Option<u32>,
) -> Result<Value, ToolError> {
    let file = read(setup)?;
    let index = index_of(setup, &file, task_id)?;
    let attempts = file.tasks()[index].attempts;
    let folder = runs_dir.join(task_id);
    let path = match attempt {
        _ if attempts == 0 => {
            return Err(ToolError::new(
                format!("task {task_id:?} has not run yet"),
                "it has no attempt, so there is no recording to explain",
                "run it with run_agent, wait_for its end, then explain it",
            ));
        }
        Some(n) if n > attempts => {
            return Err(ToolError::new(
                format!("task {task_id:?} has no attempt {n}"),
                format!("it has had {attempts} attempt(s)"),
                format!(
                    "give an attempt from 1 to {attempts}, or leave attempt out for the latest"
                ),
            ));
        }
        Some(n) => folder.join(format!("attempt_{n}.cast")),
        None => folder,
    };
    let explained = explain_attempt(&path, setup.profiles.as_deref(), None).map_err(|error| {
        ToolError::new(
            format!("cannot explain task {task_id:?}"),
            error.to_string(),
            "check that its recordings are under the runs folder (herd mcp --runs-dir DIR \
             when the run used another one)",
        )
    })?;
    Ok(json!({
        "task_id": task_id,
        "recording": explained.cast,
        "lines": explained.lines,
    }))
}

/// The store with the file's lock held, for a change.
fn open(setup: &Setup) -> Result<TaskStore, ToolError> {
    if !exists(&setup.tasks) {
        return Err(ToolError::new(
            format!("{} does not exist yet", setup.tasks.display()),
            "the queue is empty, so there is no task to change",
            "add_task adds the first task (and creates the file)",
        ));
    }
    open_existing(setup)
}

/// The store with the file's lock held, for an addition: a file that does not exist yet is
/// created with no task first.
fn open_or_create(setup: &Setup) -> Result<TaskStore, ToolError> {
    if !exists(&setup.tasks) {
        create_empty(setup)?;
    }
    open_existing(setup)
}

fn open_existing(setup: &Setup) -> Result<TaskStore, ToolError> {
    TaskStore::open(&setup.tasks).map_err(|error| match error {
        StoreError::Locked { .. } => ToolError::new(
            format!("cannot change {}", setup.tasks.display()),
            format!("{error}"),
            "try again in a moment; a herd that runs the file takes changes through its \
             control socket, which herd mcp uses once that herd has started",
        ),
        error => unusable(setup, &error),
    })
}

/// Refuses `text` (the file as it would be written) when `task_id` has a problem in it.
fn refuse_problems(setup: &Setup, text: &str, task_id: &str, what: &str) -> Result<(), ToolError> {
    let file = TaskFile::parse(text).map_err(|problems| {
        ToolError::new(
            format!("the {what} was refused"),
            problems
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join("; "),
            "nothing was written; fix the fields and try again",
        )
    })?;
    let profiles = load_profiles(setup.profiles.as_deref()).map_err(|problems| {
        ToolError::new(
            "cannot check the task",
            problems.join("; "),
            "fix the profiles file given to herd mcp --profiles",
        )
    })?;
    let hosts =
        load_hosts(setup.hosts.as_deref(), setup.profiles.as_deref()).map_err(|problems| {
            ToolError::new(
                "cannot check the task",
                problems.join("; "),
                "fix the hosts file given to herd mcp --hosts",
            )
        })?;
    let base_dir = std::path::absolute(&setup.tasks)
        .ok()
        .and_then(|path| path.parent().map(Path::to_path_buf))
        .unwrap_or_else(|| PathBuf::from("."));
    let checks = Checks {
        profiles: Some(&profiles),
        hosts: &hosts,
        base_dir: &base_dir,
        runs_dir: &setup.runs_dir,
    };
    let problems: Vec<String> = validate::check(&file, &checks)
        .iter()
        .filter(|problem| problem.task_id() == Some(task_id))
        .map(|problem| problem.line(&setup.tasks))
        .collect();
    if problems.is_empty() {
        return Ok(());
    }
    Err(ToolError::new(
        format!("the {what} of task {task_id:?} was refused"),
        problems.join("; "),
        "nothing was written; change the fields these problems name (the messages are \
         `herd validate`'s) and try again",
    ))
}

fn unusable(setup: &Setup, error: &StoreError) -> ToolError {
    ToolError::new(
        format!("cannot use {}", setup.tasks.display()),
        error.to_string().replace('\n', "; "),
        "fix the file (`herd validate --tasks FILE` lists every problem), or give herd mcp \
         the right --tasks",
    )
}

fn not_written(setup: &Setup, error: &StoreError) -> ToolError {
    ToolError::new(
        format!("the change was not written to {}", setup.tasks.display()),
        error.to_string(),
        "make the file and its folder writable, then try again",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "{\n  \"tasks\": [\n    {\n      \"task_id\": \"a\",\n      \"agent\": \"sim\",\n      \"inputs\": { \"scenario\": \"success\" },\n      \"prompt_template\": \"x\"\n    }\n  ]\n}\n";

    fn setup(dir: &Path) -> Setup {
        let tasks = dir.join("tasks.json");
        std::fs::write(&tasks, TEXT).expect("write");
        Setup {
            tasks,
            profiles: None,
            hosts: None,
            runs_dir: dir.join("runs"),
        }
    }

    fn patch(value: Value) -> Map<String, Value> {
        value.as_object().expect("object").clone()
    }

    #[test]
    fn an_update_writes_only_its_fields_and_a_bad_one_writes_nothing() {
        let dir = tempfile::tempdir().expect("tempdir");
        let setup = setup(dir.path());
        let row = update_task(&setup, "a", &patch(json!({"enabled": false}))).expect("updated");
        assert_eq!(row["enabled"], false);
        let text = std::fs::read_to_string(&setup.tasks).expect("read");
        assert_eq!(
            text,
            TEXT.replace("\"x\"\n", "\"x\",\n      \"enabled\": false\n")
        );
        let refused =
            update_task(&setup, "a", &patch(json!({"timeout_sec": "soon"}))).expect_err("refused");
        assert!(refused.why.contains("timeout_sec"), "{refused:?}");
        assert!(refused.fix.contains("nothing was written"), "{refused:?}");
        assert_eq!(std::fs::read_to_string(&setup.tasks).expect("read"), text);
        let removed = update_task(&setup, "a", &patch(json!({"enabled": null}))).expect("ok");
        assert_eq!(removed["enabled"], true);
        assert_eq!(std::fs::read_to_string(&setup.tasks).expect("read"), TEXT);
        let missing = update_task(&setup, "b", &patch(json!({"enabled": false})));
        assert!(missing.expect_err("no b").what.contains("no task \"b\""));
        assert!(
            !crate::run::store::lock_path(&setup.tasks).exists(),
            "lock given back"
        );
    }

    #[test]
    fn a_task_is_added_once_and_a_file_herd_holds_is_not_touched() {
        let dir = tempfile::tempdir().expect("tempdir");
        let setup = setup(dir.path());
        let task = patch(
            json!({"task_id": "b", "agent": "sim", "inputs": {"scenario": "success"}, "prompt_template": "y"}),
        );
        let row = add_task(&setup, &task).expect("added");
        assert_eq!(row["status"], "pending");
        let again = add_task(&setup, &task).expect_err("twice");
        assert!(again.what.contains("exists already"), "{again:?}");
        let held = TaskStore::open(&setup.tasks).expect("a herd holds it");
        let text = std::fs::read_to_string(&setup.tasks).expect("read");
        let other = patch(
            json!({"task_id": "c", "agent": "sim", "inputs": {"scenario": "success"}, "prompt_template": "z"}),
        );
        let locked = add_task(&setup, &other).expect_err("locked");
        assert!(locked.why.contains("in use by another herd"), "{locked:?}");
        assert_eq!(std::fs::read_to_string(&setup.tasks).expect("read"), text);
        drop(held);
    }

    #[test]
    fn a_file_that_does_not_exist_is_an_empty_queue_until_the_first_task_creates_it() {
        let dir = tempfile::tempdir().expect("tempdir");
        let setup = Setup {
            tasks: dir.path().join("queue.json"),
            profiles: None,
            hosts: None,
            runs_dir: dir.path().join("runs"),
        };
        let empty = read(&setup).expect("an empty queue");
        assert!(rows(&empty, None).is_empty());
        let missing = row(&setup, &empty, "a").expect_err("no task");
        assert!(missing.fix.contains("add_task"), "{missing:?}");
        let update = update_task(&setup, "a", &patch(json!({"enabled": false})));
        assert!(
            update
                .expect_err("nothing to change")
                .what
                .contains("does not exist yet")
        );
        assert!(
            !setup.tasks.exists(),
            "reads and a refused change create nothing"
        );
        let task = patch(
            json!({"task_id": "a", "agent": "sim", "inputs": {"scenario": "success"}, "prompt_template": "x"}),
        );
        let added = add_task(&setup, &task).expect("added");
        assert_eq!(added["status"], "pending");
        let text = std::fs::read_to_string(&setup.tasks).expect("created");
        let written: Value = serde_json::from_str(&text).expect("valid JSON");
        assert_eq!(written["run_id"], "queue");
        assert_eq!(written["tasks"][0]["task_id"], "a");
        assert_eq!(rows(&read(&setup).expect("read"), None).len(), 1);
        let leftovers: Vec<_> = std::fs::read_dir(dir.path())
            .expect("list")
            .filter_map(Result::ok)
            .map(|entry| entry.file_name())
            .filter(|name| name != "queue.json")
            .collect();
        assert!(leftovers.is_empty(), "{leftovers:?}");
    }

    #[test]
    fn creating_the_file_never_replaces_one_made_meanwhile() {
        let dir = tempfile::tempdir().expect("tempdir");
        let setup = setup(dir.path());
        create_empty(&setup).expect("a file that exists is left alone");
        assert_eq!(std::fs::read_to_string(&setup.tasks).expect("read"), TEXT);
    }
}
