//! The tasks file as a document: parse and check it (every problem with its line and column),
//! update tasks in place, and write it back as text.
//!
//! Owns the JSON document, so fields herd does not know and the order of keys survive every
//! rewrite, and keeps the typed `TaskSpec`s in step with it. Pure: no file I/O (that is
//! `run::store`), and no knowledge of profiles (an unknown agent name is the caller's to report).
//!
//! How tasks with problems appear: `parse` fails only when the file cannot be used at all (not
//! JSON, not an object, no `tasks` list). Otherwise every problem is in `problems()`, and
//! `tasks()` holds every task that has a usable `task_id` (a safe, unique string), with defaults in
//! place of its wrong fields. A task without a usable id (missing, not a string, unsafe, repeated,
//! or not an object at all) is only a problem. Callers that start work must refuse while
//! `problems()` is not empty.
//!
//! `read` parses and checks; this file holds the document and its updates; `fields` reads one
//! task, `splice` writes changed fields back into the text.

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
    /// The indices of the tasks that may start (`TaskSpec::is_runnable`): a scheduler walks
    /// these, not the whole file, most of which is done in a long batch.
    runnable: BTreeSet<usize>,
    /// `tasks[i]` is element `slots[i]` of the document's `tasks` list; `None` once the
    /// operator removed it from the file during a run (`merge`): herd still knows the task (an
    /// attempt of it may be ending) but writes nothing of it.
    slots: Vec<Option<usize>>,
    /// Per task, the fields of `HERD_OWNED` that herd set during this run: on a `merge`, its
    /// values of these are put back into the operator's version.
    touched: BTreeMap<usize, BTreeSet<String>>,
    /// The objects of the tasks the operator removed, kept up to date in memory only: put
    /// back into the file if the operator adds the task again.
    held_out: HashMap<usize, serde_json::Map<String, Value>>,
    /// The ids of the tasks herd added itself (`merge_own`) that no operator's version has
    /// had yet: one that lacks them was edited from a version before herd added them, and
    /// keeps them (`merge`).
    unseen: BTreeSet<String>,
    /// Operator fields herd changed itself (`tasks.update` through the control socket) that no
    /// operator's version has had yet, by task id: the field and its value before (`None`: it
    /// was absent). A version of theirs that still has the value before was edited from a
    /// version before the change, and keeps herd's value (`merge`).
    unseen_fields: BTreeMap<String, Vec<(String, Option<Value>)>>,
    positions: PositionIndex,
    problems: Vec<Problem>,
    /// The text as read, with the changes written so far spliced in (without a byte order
    /// mark). If it cannot be laid out, the next write is in full.
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

    /// Where task `index` (its `{`), or the value of one of its fields, was in the parsed text.
    /// Positions are those of the text given to `parse`; updates do not move them.
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

    /// The file's `defaults` object as the tasks take it (without the fields that cannot be
    /// defaults); empty when there is none.
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

    /// Sets any field of task `index`: in place if it exists, else appended at the end of the
    /// task object. Known fields update the typed task the way `parse` reads them (a wrong value
    /// is written but the typed field falls back to its default, and the next `parse` reports
    /// it). `task_id` is never changed this way: herd does not rename tasks.
    pub fn set_field(&mut self, index: usize, key: &str, value: Value) {
        if key != "task_id" && self.write(index, key, value) {
            self.reread(index);
        }
    }

    /// Removes a field of task `index`, keeping the order of the others; the typed task goes
    /// back to the default for it. `task_id` cannot be removed.
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

    /// The file's text with `task` (a JSON object) added at the end of its `tasks` list, in the
    /// layout of the tasks before it (`splice::with_task_appended`), or the whole document
    /// written afresh when the text has no task to copy the layout from. Changes nothing here:
    /// the caller takes the text in with `merge`, like an operator's version.
    pub fn text_with_task(&self, task: &Value) -> String {
        append_task(&self.text.shared().to_string(), &self.doc, task)
    }

    /// The document as pretty JSON (2-space indent) with a trailing newline: all of it written
    /// afresh, for a file whose own text cannot be kept.
    pub fn to_text(&self) -> String {
        format!("{:#}\n", self.doc)
    }

    /// Brings `text()` up to date with the changes made since the last call, rewriting only the
    /// changed fields' text; true if the text changed.
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

    /// Drops the positions of the parsed text (`location` answers `None` from then on). A run
    /// keeps the file for its whole length and needs no positions after `parse` reported its
    /// problems: they cost more memory than the document, and every agent is forked from it.
    pub fn forget_positions(&mut self) {
        self.positions = PositionIndex::default();
    }

    /// True when fields were set or removed since the last `splice_changes`.
    pub fn has_changes(&self) -> bool {
        !self.changes.is_empty()
    }

    /// The file's text as of the last `splice_changes` (without a byte order mark), shared
    /// without copying it: a snapshot for a writer, unchanged by later splices.
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

/// `text` (whose document is `doc`) with `task` added at the end of its `tasks` list, in the
/// layout of the tasks before it, or the whole document written afresh when the text has no
/// task to copy the layout from.
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
