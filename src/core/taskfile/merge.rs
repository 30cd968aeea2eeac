//! Taking in the operator's version of the tasks file during a run: their text is the base, and
//! herd puts back only what it owns and changed (`HERD_OWNED` fields it set during the run, and
//! changes not yet written): an editor that read the file a while ago writes back an old
//! `status` and `result`, which must not undo what herd learned since.
//!
//! Tasks are matched by `task_id` and keep their index: a task gone from their version is kept
//! in memory as removed, a new one is appended. A task or field herd changed itself (through the
//! control socket) that their version shows as it was before is theirs edited from an older
//! version (a three-way merge), so herd's change is put back; any other value is their decision.

use std::fmt;

use super::*;

/// The fields herd writes as it runs a task: on a merge, herd's values of those it set win.
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
    /// Takes `text`, the operator's version, as the base. `Err` (nothing changed) when it cannot
    /// be used at all. The changes herd puts back are left for `splice_changes`.
    pub fn merge(&mut self, text: &str) -> Result<Merged, Vec<Problem>> {
        let (theirs, kept) = self.with_unseen_tasks(TaskFile::parse(text)?)?;
        let mut merged = Merged {
            problems: theirs.problems.clone(),
            kept,
            ..Merged::default()
        };
        // What herd puts back: what it set during the run and changed since its last write.
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

    /// Sets operator field `key` of task `index` for herd itself, remembering the value before
    /// until an operator's version is merged. `None` removes the field.
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

    /// The fields herd changed that `theirs` still holds as before: herd's values go back. Every
    /// such change is seen from now on.
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

    /// Takes in a version herd made itself (a task added) like an operator's; its tasks stay
    /// unseen by the operator until a version of theirs is merged.
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

    /// `theirs` with herd's unseen tasks appended back, and their indices here.
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

    /// Writes herd's values back into the operator's document where they differ.
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

/// Notes what changed in task `index` between herd's object and the operator's.
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
