//! The file-level `defaults` object: task fields that every task takes unless it sets them
//! itself. A child of `taskfile`; pure.
//!
//! How a task and the defaults combine (`apply`): a field the task writes wins; a field only the
//! defaults write is taken as it is. The object fields `env`, `inputs` and `permission_policy`
//! combine key by key (the task's keys win), and the rule lists of `permission_policy`
//! (`allow`, `ask`, `deny`) add up: the task's rules, then the defaults' ones, so a task that
//! adds one allow rule keeps the shared deny rules.
//!
//! What it must not do: the combined object is only read, never written. `defaults` stays in the
//! document exactly as the user wrote it, and nothing of it is copied into a task's text. The
//! fields herd writes for each task (`status`, `attempts`, `result`, …) and `task_id` are no
//! defaults: they are reported where they are written and left out.

use serde_json::{Map, Value};

use super::Problem;
use super::merge::HERD_OWNED;
use crate::core::taskfile::json_pos::{PositionIndex, pointer_token};

type JsonObject = Map<String, Value>;

/// The key of the defaults object in the file, and its JSON pointer.
pub(super) const DEFAULTS_KEY: &str = "defaults";
const DEFAULTS_POINTER: &str = "/defaults";

/// The object fields that combine key by key.
const MERGED_BY_KEY: &[&str] = &["env", "inputs", "permission_policy"];

/// The lists inside `permission_policy` that add up.
const RULE_LISTS: &[&str] = &["allow", "ask", "deny"];

/// Why a field cannot be a default, or `None` when it can.
fn refusal(key: &str) -> Option<&'static str> {
    if key == "task_id" {
        Some("every task needs its own \"task_id\"; it cannot be a default")
    } else if key == "ran_on" || HERD_OWNED.contains(&key) {
        Some("herd writes it for each task as the task runs; it is never taken from \"defaults\"")
    } else {
        None
    }
}

/// The usable defaults of the document `doc`: its `defaults` object without the fields that
/// cannot be defaults. Empty when there is none or it is not an object.
pub(super) fn usable(doc: &Value) -> JsonObject {
    let Some(defaults) = doc.get(DEFAULTS_KEY).and_then(Value::as_object) else {
        return JsonObject::new();
    };
    defaults
        .iter()
        .filter(|(key, _)| refusal(key).is_none())
        .map(|(key, value)| (key.clone(), value.clone()))
        .collect()
}

/// The problems of the `defaults` object itself: not an object, or a field that cannot be a
/// default. The values of its fields are checked through the tasks that take them.
pub(super) fn problems(root: &JsonObject, positions: &PositionIndex) -> Vec<Problem> {
    let Some(defaults) = root.get(DEFAULTS_KEY) else {
        return Vec::new();
    };
    let Some(members) = defaults.as_object() else {
        return vec![Problem {
            location: positions.value(DEFAULTS_POINTER),
            task_id: None,
            field: None,
            message: format!(
                "\"defaults\" must be an object of task fields like {{\"agent\": \"claude\", \
                 \"timeout_sec\": 1800}}, got {}",
                kind_of(defaults)
            ),
        }];
    };
    members
        .keys()
        .filter_map(|key| {
            let why = refusal(key)?;
            let pointer = format!("{DEFAULTS_POINTER}/{}", pointer_token(key));
            Some(Problem {
                location: positions.key(&pointer).or(positions.value(&pointer)),
                task_id: None,
                field: None,
                message: format!("defaults: \"{key}\" is not allowed here: {why}; remove it"),
            })
        })
        .collect()
}

/// What a value that is not an object is, for "got ..." (a list, a string, a number…).
fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Array(_) => "a list",
        Value::String(_) => "a string",
        Value::Number(_) => "a number",
        Value::Bool(_) => "true or false",
        Value::Null => "null",
        Value::Object(_) => "an object",
    }
}

/// Where the value at `task_pointer` (a pointer inside the task at `task_root`, e.g.
/// `/tasks/3/env/HOME`) would be written in the defaults: `/defaults/env/HOME`.
pub(super) fn pointer_in_defaults(task_root: &str, task_pointer: &str) -> Option<String> {
    let rest = task_pointer.strip_prefix(task_root)?;
    rest.starts_with('/')
        .then(|| format!("{DEFAULTS_POINTER}{rest}"))
}

/// The task `task` as herd reads it: its own fields, then the defaults' (see the module
/// documentation for the object fields).
pub(super) fn apply(defaults: &JsonObject, task: &JsonObject) -> JsonObject {
    let mut effective = task.clone();
    for (key, default) in defaults {
        match effective.get_mut(key) {
            None => {
                effective.insert(key.clone(), default.clone());
            }
            Some(own) if MERGED_BY_KEY.contains(&key.as_str()) => {
                combine_objects(own, default, key == "permission_policy");
            }
            Some(_) => {}
        }
    }
    effective
}

/// Adds the members of `default` that `own` lacks, when both are objects (a wrong kind is the
/// task's to report, and its own value wins). `rule_lists`: lists in both add up.
fn combine_objects(own: &mut Value, default: &Value, rule_lists: bool) {
    let (Some(own), Some(default)) = (own.as_object_mut(), default.as_object()) else {
        return;
    };
    for (name, value) in default {
        match own.get_mut(name) {
            None => {
                own.insert(name.clone(), value.clone());
            }
            Some(Value::Array(items)) if rule_lists && RULE_LISTS.contains(&name.as_str()) => {
                if let Some(more) = value.as_array() {
                    items.extend(more.iter().cloned());
                }
            }
            Some(_) => {}
        }
    }
}

#[cfg(test)]
#[path = "defaults_tests.rs"]
mod tests;
