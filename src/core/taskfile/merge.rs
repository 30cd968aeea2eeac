//! Taking in the operator's version of the tasks file during a run: their text is the base, and
//! herd puts back only what it owns and changed (`HERD_OWNED` fields it set during the run, and
//! any change not yet written), spliced into their text in the style around it. A child of
//! `taskfile`; pure, like it.
//!
//! Tasks are matched by `task_id`. A task herd holds keeps its index (the engine refers to tasks
//! by index): its spec becomes the operator's (a changed prompt, inputs or switches apply to its
//! next attempt), a task gone from their version is kept in memory as removed (nothing of it is
//! written again), and a new task is appended to the list herd holds.
//!
//! A task herd added itself (`merge_own`, `tasks.add` through the control socket) and that their
//! version lacks, while no version of theirs has had it yet, is kept: their version was edited
//! from one written before herd added the task (a three-way merge against the version they
//! edited, which is the last one herd knows they had), so its absence is not a removal. It is
//! put back at the end of their list and reported in `kept`; a later version of theirs that
//! lacks it removes it.
//!
//! The same holds for an operator field herd changed itself (`set_field_unseen`, `tasks.update`
//! through the control socket): a version of theirs that still has the value from before the
//! change was edited from a version before it, so herd's value is put back; a version that has
//! another value is their decision and stands. Either way the change is seen from then on.
//!
//! Why herd's values of its own fields win even when the operator's version has others: an editor
//! or script that read the file a while ago writes back the `status` and `result` it read, and
//! those must not undo what herd learned since. A field herd did not set during the run (a task
//! it has not started yet) is the operator's.

use std::fmt;

use super::*;

/// The fields herd writes as it runs a task. On a merge, herd's values of those it set during
/// the run replace the operator's.
pub const HERD_OWNED: &[&str] = &[
    "status",
    "attempts",
    "result",
    "retry_at",
    "resume_message",
    "lost_on",
    "attempts_before_retry",
];

/// What a merge took in from the operator's version, by task index.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Merged {
    /// Tasks new in their version, appended to the list.
    pub added: Vec<usize>,
    /// Tasks herd held that their version no longer has.
    pub removed: Vec<usize>,
    /// Tasks whose `prompt_template` changed.
    pub prompt_changed: Vec<usize>,
    /// Tasks switched off (`enabled` true before, false now).
    pub disabled: Vec<usize>,
    /// Tasks switched back on.
    pub enabled: Vec<usize>,
    /// Tasks with any other field of the operator's changed, added or removed.
    pub other_changed: Vec<usize>,
    /// Every problem of their version (the engine fails the tasks they name that may start).
    pub problems: Vec<Problem>,
    /// Tasks herd added that their version, edited from an older one, lacked: put back.
    pub kept: Vec<usize>,
}

impl Merged {
    /// Nothing about any task changed (the operator's version differs in layout only).
    pub fn is_empty(&self) -> bool {
        self.added.is_empty()
            && self.removed.is_empty()
            && self.prompt_changed.is_empty()
            && self.disabled.is_empty()
            && self.enabled.is_empty()
            && self.other_changed.is_empty()
    }
}

/// `tasks file changed: 1 task added, 1 prompt changed, 1 disabled`.
impl fmt::Display for Merged {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let count = |n: usize, one: &str, many: &str| match n {
            1 => format!("1 {one}"),
            n => format!("{n} {many}"),
        };
        let parts: Vec<String> = [
            (self.added.len(), "task added", "tasks added"),
            (self.removed.len(), "task removed", "tasks removed"),
            (
                self.prompt_changed.len(),
                "prompt changed",
                "prompts changed",
            ),
            (self.disabled.len(), "disabled", "disabled"),
            (self.enabled.len(), "enabled", "enabled"),
            (
                self.other_changed.len(),
                "task's fields changed",
                "tasks' fields changed",
            ),
            (self.problems.len(), "problem", "problems"),
            (
                self.kept.len(),
                "task added by herd kept (your version was older)",
                "tasks added by herd kept (your version was older)",
            ),
        ]
        .into_iter()
        .filter(|(n, _, _)| *n > 0)
        .map(|(n, one, many)| count(n, one, many))
        .collect();
        if parts.is_empty() {
            f.write_str("tasks file changed: no task changed")
        } else {
            write!(f, "tasks file changed: {}", parts.join(", "))
        }
    }
}

impl TaskFile {
    /// Takes `text`, the operator's version of the file, as the base: see the module header.
    /// `Err` (and nothing changed here) when it cannot be used at all (a syntax error, no
    /// `tasks` list). The changes herd puts back are left for `splice_changes`.
    pub fn merge(&mut self, text: &str) -> Result<Merged, Vec<Problem>> {
        let (theirs, kept) = self.with_unseen_tasks(TaskFile::parse(text)?)?;
        let mut merged = Merged {
            problems: theirs.problems.clone(),
            kept,
            ..Merged::default()
        };
        // What herd puts back: what it set during the run, and what it changed since its last
        // write, with the values it holds (`None`: the field is removed).
        let mut ours: BTreeMap<usize, Vec<(String, Option<Value>)>> = BTreeMap::new();
        let mut pending = std::mem::take(&mut self.changes);
        let stale = self.stale_fields(&theirs);
        for index in 0..self.tasks.len() {
            let mut keys = self.touched.get(&index).cloned().unwrap_or_default();
            keys.extend(stale.get(&index).cloned().unwrap_or_default());
            if let Some(Some(slot)) = self.slots.get(index) {
                keys.extend(pending.remove(slot).unwrap_or_default());
            }
            let object = self.task_object(index);
            let values = keys
                .into_iter()
                .map(|key| {
                    let value = object.and_then(|o| o.get(&key)).cloned();
                    (key, value)
                })
                .collect::<Vec<_>>();
            if !values.is_empty() {
                ours.insert(index, values);
            }
        }
        let mut their_index: HashMap<String, usize> = theirs
            .tasks
            .iter()
            .enumerate()
            .map(|(i, t)| (t.task_id.clone(), i))
            .collect();
        let mut held_out = std::mem::take(&mut self.held_out);
        let mut tasks = Vec::with_capacity(self.tasks.len().max(theirs.tasks.len()));
        let mut slots = Vec::with_capacity(tasks.capacity());
        for (index, spec) in self.tasks.iter().enumerate() {
            match their_index.remove(&spec.task_id) {
                Some(their) => {
                    let slot = theirs.slots[their];
                    let their_object = slot.and_then(|s| theirs.doc["tasks"].get(s));
                    let their_object = their_object.and_then(Value::as_object);
                    compare(&mut merged, index, self.task_object(index), their_object);
                    held_out.remove(&index);
                    tasks.push(theirs.tasks[their].clone());
                    slots.push(slot);
                }
                None => {
                    if !self.is_removed(index) {
                        merged.removed.push(index);
                        let object = self.task_object(index).cloned().unwrap_or_default();
                        held_out.insert(index, object);
                    }
                    tasks.push(spec.clone());
                    slots.push(None);
                }
            }
        }
        // New tasks, in the order of their version.
        for (their, spec) in theirs.tasks.iter().enumerate() {
            if their_index.contains_key(&spec.task_id) {
                merged.added.push(tasks.len());
                tasks.push(spec.clone());
                slots.push(theirs.slots[their]);
            }
        }
        self.doc = theirs.doc;
        self.tasks = tasks;
        self.slots = slots;
        self.held_out = held_out;
        self.positions = PositionIndex::default();
        self.problems = theirs.problems;
        self.text = theirs.text;
        self.changes = Changes::new();
        self.put_back(ours);
        self.runnable = (0..self.tasks.len())
            .filter(|&i| self.tasks[i].is_runnable() && !self.is_removed(i))
            .collect();
        Ok(merged)
    }

    /// Sets operator field `key` of task `index` for herd itself (`tasks.update`), remembering
    /// the value before until an operator's version has been merged (see the module header).
    /// `None` removes the field.
    pub fn set_field_unseen(&mut self, index: usize, key: &str, value: Option<Value>) {
        let Some(task_id) = self.tasks.get(index).map(|t| t.task_id.clone()) else {
            return;
        };
        let before = self.task_object(index).and_then(|o| o.get(key)).cloned();
        let fields = self.unseen_fields.entry(task_id).or_default();
        // The value before the first unseen change is what a stale version holds.
        if !fields.iter().any(|(k, _)| k == key) {
            fields.push((key.to_string(), before));
        }
        match value {
            Some(value) => self.set_field(index, key, value),
            None => self.remove_field(index, key),
        }
    }

    /// The fields herd changed for the operator that `theirs` still holds as they were before
    /// the change, by index here: their version is older there, and herd's values go back.
    /// Every such change is seen from now on.
    fn stale_fields(&mut self, theirs: &TaskFile) -> BTreeMap<usize, BTreeSet<String>> {
        let mut stale: BTreeMap<usize, BTreeSet<String>> = BTreeMap::new();
        for (task_id, fields) in std::mem::take(&mut self.unseen_fields) {
            let (Some(index), Some(their)) =
                (self.task_index(&task_id), theirs.task_index(&task_id))
            else {
                continue;
            };
            let their_object = theirs.task_object(their);
            for (key, before) in fields {
                if their_object.and_then(|o| o.get(&key)) == before.as_ref() {
                    stale.entry(index).or_default().insert(key);
                }
            }
        }
        stale
    }

    /// Takes in a version of the file herd made itself (a task added through the control
    /// socket) like an operator's; the tasks it adds stay unseen by the operator until a
    /// version of theirs is merged.
    pub fn merge_own(&mut self, text: &str) -> Result<Merged, Vec<Problem>> {
        let unseen = std::mem::take(&mut self.unseen);
        // herd's own version does not show that the operator saw herd's field changes.
        let unseen_fields = self.unseen_fields.clone();
        let merged = self.merge(text);
        self.unseen = unseen;
        self.unseen_fields = unseen_fields;
        if let Ok(merged) = &merged {
            let added = merged.added.iter().map(|&i| self.tasks[i].task_id.clone());
            self.unseen.extend(added);
        }
        merged
    }

    /// `theirs` with the tasks herd added that no version of theirs has had appended back
    /// (see the module header), and their indices here. Every such task is seen from now on.
    fn with_unseen_tasks(
        &mut self,
        theirs: TaskFile,
    ) -> Result<(TaskFile, Vec<usize>), Vec<Problem>> {
        let unseen = std::mem::take(&mut self.unseen);
        let missing: Vec<usize> = unseen
            .iter()
            .filter(|id| theirs.task_index(id).is_none())
            .filter_map(|id| self.task_index(id))
            .filter(|&index| !self.is_removed(index))
            .collect();
        if missing.is_empty() {
            return Ok((theirs, Vec::new()));
        }
        let mut text = theirs.text.shared().to_string();
        let mut doc = theirs.doc.clone();
        for &index in &missing {
            let object = Value::Object(self.task_object(index).cloned().unwrap_or_default());
            text = append_task(&text, &doc, &object);
            doc = TaskFile::parse(&text)?.doc;
        }
        Ok((TaskFile::parse(&text)?, missing))
    }

    /// Writes herd's values back into the operator's document (where they differ), so that the
    /// next `splice_changes` rewrites only those fields in their text.
    fn put_back(&mut self, ours: BTreeMap<usize, Vec<(String, Option<Value>)>>) {
        for (index, values) in ours {
            if self.is_removed(index) {
                continue;
            }
            let mut changed = false;
            for (key, value) in values {
                let Some(object) = self.task_object_mut(index) else {
                    break;
                };
                match value {
                    Some(value) if object.get(&key) != Some(&value) => {
                        object.insert(key.clone(), value);
                    }
                    None if object.contains_key(&key) => {
                        object.shift_remove(&key);
                    }
                    _ => continue,
                }
                self.note_change(index, &key);
                changed = true;
            }
            if changed {
                self.reread(index);
            }
        }
    }
}

/// Notes what changed in task `index` between herd's object and the operator's (herd's own
/// fields aside: they are herd's to put back).
fn compare(
    merged: &mut Merged,
    index: usize,
    ours: Option<&serde_json::Map<String, Value>>,
    theirs: Option<&serde_json::Map<String, Value>>,
) {
    let value = |object: Option<&serde_json::Map<String, Value>>, key: &str| {
        object.and_then(|o| o.get(key)).cloned()
    };
    let enabled = |object| value(object, "enabled").and_then(|v| v.as_bool()) != Some(false);
    if value(ours, "prompt_template") != value(theirs, "prompt_template") {
        merged.prompt_changed.push(index);
    }
    match (enabled(ours), enabled(theirs)) {
        (true, false) => merged.disabled.push(index),
        (false, true) => merged.enabled.push(index),
        _ => {}
    }
    let keys = ours
        .into_iter()
        .chain(theirs)
        .flat_map(|o| o.keys().map(String::as_str));
    let other = keys
        .filter(|k| !HERD_OWNED.contains(k) && !["prompt_template", "enabled"].contains(k))
        .any(|k| value(ours, k) != value(theirs, k));
    if other {
        merged.other_changed.push(index);
    }
}

#[cfg(test)]
#[path = "merge_tests.rs"]
mod tests;
