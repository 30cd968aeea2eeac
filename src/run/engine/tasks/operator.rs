//! The operator's changes to tasks, from a frontend (`Command`) or the control socket: each
//! checks what it may do, changes the document and says what it did, in words; what follows
//! for the queue and the attempts (a start withdrawn, slots filled, keys sent) is the engine's
//! (`Engine::apply`). A refusal is the `ControlOutcome` the frontend shows.

use serde_json::{Map, Value, json};

use super::Tasks;
use crate::core::batch::{Batch, Input};
use crate::core::remote::hosts::HostSet;
use crate::core::rerun::RetryReset;
use crate::core::task::TaskStatus;
use crate::core::taskfile::{HERD_OWNED, Merged, TaskFile};
use crate::run::engine::api::{Added, without_place};
use crate::run::engine::control::{ControlOutcome, refused};
use crate::run::engine::event::EngineEvent;
use crate::run::engine::outgoing::Outgoing;
use crate::run::validate;
use std::time::Instant;

/// When a change of a task's operator fields applies, while an attempt of it runs or not.
pub(crate) fn next_attempt(running: bool) -> &'static str {
    if running {
        "from its next attempt"
    } else {
        "for its next attempt"
    }
}

/// The field a patch's key names (`prompt` stands for `prompt_template`).
fn field(key: &str) -> &str {
    if key == "prompt" {
        "prompt_template"
    } else {
        key
    }
}

/// What changing `patch`'s fields of task `task_id` did, in words.
pub(crate) fn saved(task_id: &str, patch: &Map<String, Value>, running: bool) -> ControlOutcome {
    let names: Vec<&str> = patch.keys().map(|k| field(k)).collect();
    let fields = names.join(",");
    tracing::info!(task_id, fields, "task changed through the control socket");
    let when = next_attempt(running);
    ControlOutcome::Done(format!("{task_id}: {} saved {when}", names.join(", ")))
}

impl Tasks {
    /// Cancels task `index`, no attempt of which runs: `cancelled` now, if it may be.
    pub(crate) fn cancel(
        &mut self,
        index: usize,
        batch: &mut Batch,
        at: Instant,
    ) -> ControlOutcome {
        let Some((task_id, status)) = self.label(index) else {
            return refused("no such task");
        };
        if !status.can_become(TaskStatus::Cancelled) {
            return refused(format!("{task_id} is {status}; it cannot be cancelled"));
        }
        batch.handle(Input::RetryCleared { task: index }, at);
        (self.store.file_mut()).set_status(index, TaskStatus::Cancelled);
        ControlOutcome::Done(format!("{task_id} cancelled"))
    }

    /// Task `index` may start again now, as `herd run --retry TASK_ID` does: a failed,
    /// cancelled or retryable task goes back to `pending` with a fresh retry budget (its
    /// attempts so far set aside) and without its retry wait. What was done, in words.
    pub(crate) fn retry_now(
        &mut self,
        index: usize,
        running: bool,
        batch: &mut Batch,
        at: Instant,
    ) -> Result<String, ControlOutcome> {
        let Some((task_id, status)) = self.label(index) else {
            return Err(refused("no such task"));
        };
        self.may_start_again(index, &task_id, running, batch)?;
        let said = match status {
            // What `herd run --retry TASK_ID` does: a fresh retry budget, the wait dropped.
            TaskStatus::Retryable | TaskStatus::Failed | TaskStatus::Cancelled => {
                let reset = RetryReset::of(index, &self.store.file().tasks()[index]);
                reset.apply(self.store.file_mut());
                tracing::info!(task = %task_id, "retry now: {}", reset.describe());
                reset.describe()
            }
            TaskStatus::Pending => format!("{task_id} is already queued"),
            _ if status.can_become(TaskStatus::Pending) => {
                (self.store.file_mut()).set_status(index, TaskStatus::Pending);
                format!("{task_id} is pending again")
            }
            _ => {
                return Err(refused(format!(
                    "{task_id} is {status}; it does not run again"
                )));
            }
        };
        batch.handle(Input::RetryCleared { task: index }, at);
        Ok(said)
    }

    /// Why task `index` may not be started again now, if it may not.
    fn may_start_again(
        &self,
        index: usize,
        task_id: &str,
        running: bool,
        batch: &Batch,
    ) -> Result<(), ControlOutcome> {
        if running {
            return Err(refused(format!("{task_id} is running")));
        }
        if !self.in_scope(index) {
            return Err(refused(format!(
                "{task_id} is not part of this run (disabled or not --only)"
            )));
        }
        if batch.queue().is_stopping() {
            return Err(refused("herd is stopping; nothing new starts"));
        }
        Ok(())
    }

    /// Keeps `text` in task `index` for its next attempt, which continues its agent's session
    /// (`resume_message`): the task becomes `retryable`. Its id and the session it resumes.
    pub(crate) fn queue_message(
        &mut self,
        index: usize,
        text: &str,
        running: bool,
        batch: &mut Batch,
        at: Instant,
    ) -> Result<(String, Option<String>), ControlOutcome> {
        let Some((task_id, status)) = self.label(index) else {
            return Err(refused("no such task"));
        };
        if running {
            let message = format!("{task_id} is running: its agent gets messages directly (m)");
            return Err(refused(message));
        }
        if text.trim().is_empty() {
            return Err(refused("empty message not sent"));
        }
        self.may_start_again(index, &task_id, false, batch)?;
        if !(status.is_runnable() || status.can_become(TaskStatus::Retryable)) {
            let message = format!("{task_id} is {status}; it cannot take a message");
            return Err(refused(message));
        }
        let session = self.resumable_session(index);
        batch.handle(Input::RetryCleared { task: index }, at);
        let file = self.store.file_mut();
        file.set_field(index, "resume_message", json!(text));
        file.set_status(index, TaskStatus::Retryable);
        file.remove_field(index, "retry_at");
        tracing::info!(task = %task_id, session = ?session, "operator message queued");
        Ok((task_id, session))
    }

    /// Task `index`'s `permission_policy` with herd answering its prompt rule `rule` by
    /// itself or not (`auto`): (its task id, the rule's name, the policy).
    pub(crate) fn auto_answer_policy(
        &self,
        index: usize,
        rule: usize,
        auto: bool,
    ) -> Result<(String, String, Value), ControlOutcome> {
        let Some(task) = self.store.file().tasks().get(index) else {
            return Err(refused("no such task"));
        };
        let task_id = task.task_id.clone();
        let Some(name) = (self.profiles.get(&task.agent))
            .and_then(|p| p.prompts.get(rule))
            .map(|r| r.name.clone())
        else {
            let message = format!("{task_id}: its profile has no prompt rule {rule}");
            return Err(refused(message));
        };
        // Key order inside the policy object follows the typed map (sorted by name).
        let mut policy: Map<String, Value> = (task.permission_policy.iter())
            .map(|(k, v)| (k.clone(), json!(v)))
            .collect();
        policy.insert(format!("auto_{name}"), json!(auto));
        // The rule lists stay as they are.
        let rules = &task.permission_rules;
        for (key, list) in [
            ("allow", &rules.allow),
            ("ask", &rules.ask),
            ("deny", &rules.deny),
        ] {
            if !list.is_empty() {
                policy.insert(key.to_string(), json!(list));
            }
        }
        Ok((task_id, name, Value::Object(policy)))
    }

    /// Replaces task `index`'s `prompt_template`; it takes effect from its next attempt.
    pub(crate) fn set_prompt_template(
        &mut self,
        index: usize,
        text: &str,
        running: bool,
    ) -> ControlOutcome {
        let Some((task_id, status)) = self.label(index) else {
            return refused("no such task");
        };
        if status == TaskStatus::Completed {
            return refused(format!("{task_id} is completed; it never runs again"));
        }
        (self.store.file_mut()).set_field(index, "prompt_template", json!(text));
        let when = next_attempt(running);
        ControlOutcome::Done(format!("{task_id}: prompt saved {when}"))
    }

    /// Takes task `index` into this run: a run limited by `--only` takes it in, a disabled
    /// task is enabled. Its id and what was done, in words.
    pub(crate) fn take_into_run(
        &mut self,
        index: usize,
    ) -> Result<(String, Vec<&'static str>), ControlOutcome> {
        let Some((task_id, _)) = self.label(index) else {
            return Err(refused("no such task"));
        };
        if self.store.file().is_removed(index) {
            return Err(refused(format!(
                "{task_id} was removed from the tasks file"
            )));
        }
        let mut notes = Vec::new();
        if !self.opts.only.is_empty() && !self.opts.only.contains(&task_id) {
            self.opts.only.push(task_id.clone());
            notes.push("taken into this run");
        }
        if !self.store.file().tasks()[index].enabled {
            (self.store.file_mut()).set_field(index, "enabled", Value::Bool(true));
            notes.push("enabled");
        }
        Ok((task_id, notes))
    }

    /// Adds `task` (a task object, as in the file) at the end of the tasks file: checked like
    /// the file (`herd validate`'s problems of that task refuse it), then taken in like an
    /// operator's edit. A run limited by `--only` takes it in. Its id and the merge.
    pub(crate) fn add(
        &mut self,
        task: Map<String, Value>,
        hosts: &HostSet,
        out: &mut Outgoing,
    ) -> Result<(String, Merged), Added> {
        if let Some(problem) = self.file_problem() {
            return Err(Added::Refused(format!(
                "the tasks file does not parse ({problem}); fix it, then add the task"
            )));
        }
        let task_id = (task.get("task_id").and_then(Value::as_str))
            .unwrap_or_default()
            .to_string();
        if !task_id.is_empty() && self.store.file().task_index(&task_id).is_some() {
            let problem = format!("task_id {task_id:?} is already in the tasks file");
            return Err(Added::Invalid(vec![problem]));
        }
        let text = self.store.text_with_task(&Value::Object(task));
        let mut problems = self.problems_of_text(&text, &task_id, hosts);
        if !problems.is_empty() || task_id.is_empty() {
            if problems.is_empty() {
                problems.push("the task has no task_id".to_string());
            }
            return Err(Added::Invalid(problems));
        }
        let merged = (self.store.merge_own(&text)).map_err(|problems| {
            Added::Invalid(problems.iter().map(ToString::to_string).collect())
        })?;
        // Asked for by name: a run limited by `--only` takes it in.
        if !self.opts.only.is_empty() {
            self.opts.only.push(task_id.clone());
        }
        tracing::info!(task_id, "task added through the control socket");
        let summary = merged.to_string();
        out.events.push(EngineEvent::TasksFileChanged { summary });
        Ok((task_id, merged))
    }

    /// Changes task `index`'s operator fields (any field but `task_id` and those herd writes
    /// as it runs; `prompt` stands for `prompt_template`), checked like the file: its id, or
    /// why not (a refusal, or the problems of the task as it would be).
    pub(crate) fn update(
        &mut self,
        index: usize,
        patch: &Map<String, Value>,
        hosts: &HostSet,
    ) -> Result<String, Result<ControlOutcome, Vec<String>>> {
        let Some((task_id, _)) = self.label(index) else {
            return Err(Ok(refused("no such task")));
        };
        let owned: Vec<&str> = (patch.keys().map(|k| field(k)))
            .filter(|k| *k == "task_id" || *k == "ran_on" || HERD_OWNED.contains(k))
            .collect();
        if !owned.is_empty() {
            return Err(Ok(refused(format!(
                "{} {} herd's to write, not an operator field",
                owned.join(", "),
                if owned.len() == 1 { "is" } else { "are" }
            ))));
        }
        // The task as it would be, checked on its own like a file holding only it.
        let file = self.store.file();
        let mut object = file.task_object(index).cloned().unwrap_or_default();
        for (key, value) in patch {
            match value {
                Value::Null => object.shift_remove(field(key)),
                other => object.insert(field(key).to_string(), other.clone()),
            };
        }
        let defaults = Value::Object(file.defaults());
        let alone = json!({ "defaults": defaults, "tasks": [Value::Object(object)] }).to_string();
        let problems = self.problems_of_text(&alone, &task_id, hosts);
        if !problems.is_empty() {
            return Err(Err(problems));
        }
        let file = self.store.file_mut();
        for (key, value) in patch {
            let value = (!value.is_null()).then(|| value.clone());
            file.set_field_unseen(index, field(key), value);
        }
        Ok(task_id)
    }

    /// `herd validate`'s problems of task `task_id` in `text` (a version of the file that is
    /// not on disk), one line each, without a place in the file: the lines and columns would
    /// be those of that version.
    fn problems_of_text(&self, text: &str, task_id: &str, hosts: &HostSet) -> Vec<String> {
        let file = match TaskFile::parse(text) {
            Ok(file) => file,
            Err(problems) => return problems.iter().map(ToString::to_string).collect(),
        };
        let checks = validate::Checks {
            profiles: Some(&self.profiles),
            hosts,
            base_dir: self.store.base_dir(),
            runs_dir: &self.opts.runs_dir,
        };
        let path = self.store.path();
        validate::check(&file, &checks)
            .iter()
            .filter(|p| p.task_id().is_none_or(|id| id == task_id))
            .map(|p| without_place(&p.line(path), path))
            .collect()
    }
}
