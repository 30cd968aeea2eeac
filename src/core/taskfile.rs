//! The tasks file as a document: parsed and checked (every problem with its line and column),
//! updated in place, written back as text, unknown fields and key order kept. Pure; no profiles.
//!
//! `parse` fails only when the file cannot be used at all; otherwise every problem is in
//! `problems()`, and `tasks()` holds every task with a usable `task_id`, defaults in place of its
//! wrong fields. Callers that start work must refuse while `problems()` is not empty.

pub mod command_file;
pub mod json_pos;
pub mod jsonc;
pub mod starter;
pub mod template;

mod defaults;
mod fields;
mod json_error;
mod merge;
mod read;
pub mod splice;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt;

use serde_json::Value;

use crate::core::task::{TaskSpec, TaskStatus, is_safe_task_id};
pub use crate::core::taskfile::json_pos::Location;
use fields::{TaskContext, describe, read_task};
use json_pos::{PositionIndex, pointer_token};
pub use merge::{HERD_OWNED, Merged};
use splice::{Changes, SharedText, TaskText};

/// One thing wrong with the tasks file, for `FILE:LINE:COL: message` output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    pub location: Option<Location>,
    /// The task it is about, when that task has an id.
    pub task_id: Option<String>,
    /// The task's field it is about (`"agent"`, `"env"`...), when it is about one.
    pub field: Option<String>,
    pub message: String,
}

impl Problem {
    /// A problem of the file itself, about no task or field.
    pub fn of_file(location: Option<Location>, message: String) -> Problem {
        Problem {
            location,
            task_id: None,
            field: None,
            message,
        }
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.location {
            Some(at) => write!(f, "{at}: {}", self.message),
            None => f.write_str(&self.message),
        }
    }
}

/// A parsed tasks file: the document, its typed tasks and where everything was in the text.
#[derive(Debug, Clone)]
pub struct TaskFile {
    /// The root object, exactly as read plus herd's updates.
    doc: Value,
    tasks: Vec<TaskSpec>,
    /// The indices of the tasks that may start: a scheduler walks these, not the whole file.
    runnable: BTreeSet<usize>,
    /// `tasks[i]` is element `slots[i]` of the `tasks` list; `None` once the operator removed it
    /// during a run: herd still knows the task but writes nothing of it.
    slots: Vec<Option<usize>>,
    /// Per task, the `HERD_OWNED` fields herd set during this run (put back on a `merge`).
    touched: BTreeMap<usize, BTreeSet<String>>,
    /// The objects of tasks the operator removed, kept in memory for when they come back.
    held_out: HashMap<usize, serde_json::Map<String, Value>>,
    /// The ids of tasks herd added that no operator's version has had yet (see `merge`).
    unseen: BTreeSet<String>,
    /// Operator fields herd changed that no operator's version has had yet, by task id, with
    /// the value before (see `merge`).
    unseen_fields: BTreeMap<String, Vec<(String, Option<Value>)>>,
    positions: PositionIndex,
    problems: Vec<Problem>,
    /// The text as read, changes spliced in (no BOM); if it cannot be laid out, a full write.
    text: TaskText,
    /// Keys changed since the text was last brought up to date.
    changes: Changes,
}

impl TaskFile {
    /// Every per-task and file-level problem found by `parse`, in the order of the text.
    pub fn problems(&self) -> &[Problem] {
        &self.problems
    }

    pub fn run_id(&self) -> Option<&str> {
        self.doc.get("run_id").and_then(Value::as_str)
    }

    /// The file's `notify` command (an argv), when it has a valid one.
    pub fn notify_command(&self) -> Option<Vec<String>> {
        crate::core::operator::notify::command(self.doc.get("notify"))
    }

    /// The tasks with a usable id, in file order. Indexes below refer to this list.
    pub fn tasks(&self) -> &[TaskSpec] {
        &self.tasks
    }

    /// The first task at `from` or after it that may start (`TaskSpec::is_runnable`).
    pub fn next_runnable(&self, from: usize) -> Option<usize> {
        self.runnable.range(from..).next().copied()
    }

    pub fn task_index(&self, task_id: &str) -> Option<usize> {
        self.tasks.iter().position(|t| t.task_id == task_id)
    }

    /// Where task `index` or one of its fields was in the parsed text.
    pub fn location(&self, index: usize, field: Option<&str>) -> Option<Location> {
        let slot = (*self.slots.get(index)?)?;
        let pointer = match field {
            Some(key) => format!("/tasks/{slot}/{}", pointer_token(key)),
            None => format!("/tasks/{slot}"),
        };
        self.positions
            .value(&pointer)
            .or_else(|| self.in_defaults(&format!("/tasks/{slot}"), &pointer))
    }

    /// Where the value at `pointer` (inside the task at `task_root`) is written in `defaults`.
    fn in_defaults(&self, task_root: &str, pointer: &str) -> Option<Location> {
        let in_defaults = defaults::pointer_in_defaults(task_root, pointer)?;
        self.positions.value(&in_defaults)
    }

    /// The file's `defaults` as the tasks take them.
    pub fn defaults(&self) -> serde_json::Map<String, Value> {
        defaults::usable(&self.doc)
    }

    /// Where the key `key` of the object field `field` of task `index` is written.
    pub fn key_location(&self, index: usize, field: &str, key: &str) -> Option<Location> {
        let slot = (*self.slots.get(index)?)?;
        let pointer = format!(
            "/tasks/{slot}/{}/{}",
            pointer_token(field),
            pointer_token(key)
        );
        self.positions
            .key(&pointer)
            .or_else(|| self.positions.value(&pointer))
            .or_else(|| {
                let in_defaults =
                    defaults::pointer_in_defaults(&format!("/tasks/{slot}"), &pointer)?;
                self.positions.key(&in_defaults)
            })
    }

    pub fn set_status(&mut self, index: usize, status: TaskStatus) {
        if self.write(index, "status", Value::from(status.as_str())) {
            self.tasks[index].status = status;
            self.index_runnable(index);
        }
    }

    pub fn set_attempts(&mut self, index: usize, attempts: u32) {
        if self.write(index, "attempts", Value::from(attempts)) {
            self.tasks[index].attempts = attempts;
        }
    }

    /// Sets `result` (`Value::Null` clears it).
    pub fn set_result(&mut self, index: usize, result: Value) {
        let typed = (!result.is_null()).then(|| result.clone());
        if self.write(index, "result", result) {
            self.tasks[index].result = typed;
        }
    }

    /// Sets any field of task `index`, in place or appended. Known fields update the typed task
    /// as `parse` reads them (a wrong value falls back to the default). `task_id` never changes.
    pub fn set_field(&mut self, index: usize, key: &str, value: Value) {
        if key != "task_id" && self.write(index, key, value) {
            self.reread(index);
        }
    }

    /// Removes a field of task `index` (the typed task takes its default); not `task_id`.
    pub fn remove_field(&mut self, index: usize, key: &str) {
        if key == "task_id" {
            return;
        }
        let removed = self
            .task_object_mut(index)
            .and_then(|object| object.shift_remove(key));
        if removed.is_some() {
            self.note_change(index, key);
            self.reread(index);
        }
    }

    /// The file's text with `task` appended to its list, or the document written afresh. Changes
    /// nothing here: the caller takes it in with `merge`.
    pub fn text_with_task(&self, task: &Value) -> String {
        append_task(&self.text.shared().to_string(), &self.doc, task)
    }

    /// The document as pretty JSON with a trailing newline, for a file whose text cannot be kept.
    pub fn to_text(&self) -> String {
        format!("{:#}\n", self.doc)
    }

    /// Brings `text()` up to date, rewriting only changed fields; true if it changed.
    pub fn splice_changes(&mut self) -> bool {
        if self.changes.is_empty() {
            return false;
        }
        let changes = std::mem::take(&mut self.changes);
        let spliced = self.text.apply(&self.doc, &changes);
        match spliced {
            Some(changed) => changed,
            None => {
                self.text = TaskText::new(self.to_text());
                true
            }
        }
    }

    /// Drops the parsed positions: a run needs none after `parse` and they outweigh the
    /// document, which every agent is forked with.
    pub fn forget_positions(&mut self) {
        self.positions = PositionIndex::default();
    }

    /// True when fields were set or removed since the last `splice_changes`.
    pub fn has_changes(&self) -> bool {
        !self.changes.is_empty()
    }

    /// The file's text as of the last `splice_changes`, shared: a snapshot for a writer.
    pub fn shared_text(&self) -> SharedText {
        self.text.shared()
    }

    /// True when the operator removed task `index` from the file during the run (`merge`).
    pub fn is_removed(&self, index: usize) -> bool {
        matches!(self.slots.get(index), Some(None))
    }

    fn note_change(&mut self, index: usize, key: &str) {
        if HERD_OWNED.contains(&key) {
            self.touched
                .entry(index)
                .or_default()
                .insert(key.to_string());
        }
        if let Some(&Some(slot)) = self.slots.get(index) {
            self.changes
                .entry(slot)
                .or_default()
                .insert(key.to_string());
        }
    }

    /// Task `index`'s object: in the document, or held out of it (removed by the operator).
    fn task_object_mut(&mut self, index: usize) -> Option<&mut serde_json::Map<String, Value>> {
        match *self.slots.get(index)? {
            Some(slot) => self.doc.get_mut("tasks")?.get_mut(slot)?.as_object_mut(),
            None => self.held_out.get_mut(&index),
        }
    }

    /// Task `index`'s object as the document holds it.
    pub fn task_object(&self, index: usize) -> Option<&serde_json::Map<String, Value>> {
        match *self.slots.get(index)? {
            Some(slot) => self.doc.get("tasks")?.get(slot)?.as_object(),
            None => self.held_out.get(&index),
        }
    }

    /// Writes `key` into task `index`'s object; false if there is no such task.
    fn write(&mut self, index: usize, key: &str, value: Value) -> bool {
        match self.task_object_mut(index) {
            Some(object) => {
                object.insert(key.to_string(), value);
                self.note_change(index, key);
                true
            }
            None => false,
        }
    }

    /// Re-reads task `index` from the document into its `TaskSpec`.
    fn reread(&mut self, index: usize) {
        let (Some(&Some(slot)), Some(spec)) = (self.slots.get(index), self.tasks.get(index)) else {
            return;
        };
        let pointer = format!("/tasks/{slot}");
        let Some(object) = self
            .doc
            .get("tasks")
            .and_then(|t| t.get(slot))
            .and_then(Value::as_object)
        else {
            return;
        };
        let context = TaskContext {
            pointer: &pointer,
            label: "",
            task_id: Some(&spec.task_id),
            positions: &self.positions,
        };
        let effective = defaults::apply(&defaults::usable(&self.doc), object);
        let (spec, _problems_reported_by_the_next_parse) = read_task(&context, &effective);
        self.tasks[index] = spec;
        self.index_runnable(index);
    }

    fn index_runnable(&mut self, index: usize) {
        if self.tasks[index].is_runnable() && !self.is_removed(index) {
            self.runnable.insert(index);
        } else {
            self.runnable.remove(&index);
        }
    }
}

/// `text` (whose document is `doc`) with `task` appended to its list, or written afresh.
fn append_task(text: &str, doc: &Value, task: &Value) -> String {
    if let Some(appended) = splice::with_task_appended(text, task) {
        return appended;
    }
    let mut doc = doc.clone();
    if let Some(root) = doc.as_object_mut() {
        let list = root
            .entry("tasks")
            .or_insert_with(|| Value::Array(Vec::new()));
        if let Some(list) = list.as_array_mut() {
            list.push(task.clone());
        }
    }
    format!("{doc:#}\n")
}

#[cfg(test)]
mod tests;
