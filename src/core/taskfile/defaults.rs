//! The file-level `defaults` object: fields every task takes unless it sets them. The object
//! fields (`env`, `inputs`, `permission_policy`) combine key by key and the rule lists add up, so
//! a task's own allow rule keeps the shared deny rules. `defaults` is only read, never copied
//! into a task's text; herd's own fields and `task_id` cannot be defaults.

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

/// The usable defaults of `doc` (empty when there is none).
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

/// The problems of the `defaults` object itself (its values are checked through the tasks).
pub(super) fn problems(root: &JsonObject, positions: &PositionIndex) -> Vec<Problem> {
    let Some(defaults) = root.get(DEFAULTS_KEY) else {
        return Vec::new();
    };
    let Some(members) = defaults.as_object() else {
        return vec![Problem::of_file(
            positions.value(DEFAULTS_POINTER),
            format!(
                "\"defaults\" must be an object of task fields like {{\"agent\": \"claude\", \
                 \"timeout_sec\": 1800}}, got {}",
                kind_of(defaults)
            ),
        )];
    };
    members
        .keys()
        .filter_map(|key| {
            let why = refusal(key)?;
            let pointer = format!("{DEFAULTS_POINTER}/{}", pointer_token(key));
            Some(Problem::of_file(
                positions.key(&pointer).or(positions.value(&pointer)),
                format!("defaults: \"{key}\" is not allowed here: {why}; remove it"),
            ))
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

/// Where the value at `task_pointer` would be in the defaults (`/tasks/3/env/HOME` →
/// `/defaults/env/HOME`).
pub(super) fn pointer_in_defaults(task_root: &str, task_pointer: &str) -> Option<String> {
    let rest = task_pointer.strip_prefix(task_root)?;
    rest.starts_with('/')
        .then(|| format!("{DEFAULTS_POINTER}{rest}"))
}

/// The task as herd reads it: its own fields, then the defaults'.
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

/// Adds the members of `default` that `own` lacks (`rule_lists`: lists in both add up).
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
