//! Reading a tasks file: the JSON parsed with every value's place, each task read, then the
//! checks that need the whole file (unique, safe `task_id`s, repeated keys).

use std::collections::HashSet;

use super::*;

type JsonObject = serde_json::Map<String, Value>;

impl TaskFile {
    /// Parses and checks `text`. `Err` only when the file cannot be used at all.
    pub fn parse(text: &str) -> Result<TaskFile, Vec<Problem>> {
        // Editors on Windows may add a byte order mark; it is not part of the JSON.
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        let doc: Value =
            serde_json::from_str(text).map_err(|e| vec![json_error::problem(text, &e)])?;
        let positions = json_pos::locate(text);
        let (root, items) = root_and_tasks(&doc, &positions)?;
        let mut problems = file_problems(root, &positions);
        problems.extend(defaults::problems(root, &positions));
        let shared = defaults::usable(&doc);
        let mut tasks = Vec::new();
        let mut slots = Vec::new();
        let mut labels = Vec::new();
        let mut first_line_of: HashMap<&str, usize> = HashMap::new();
        for (slot, item) in items.iter().enumerate() {
            let pointer = format!("/tasks/{slot}");
            let here = positions.value(&pointer);
            let mut label = format!("task #{}", slot + 1);
            let Some(object) = item.as_object() else {
                problems.push(Problem::of_file(
                    here,
                    format!(
                        "{label}: must be an object like {{\"task_id\": ..., \"agent\": ..., \
                         \"prompt_template\": ...}}, got {}",
                        describe(item)
                    ),
                ));
                labels.push(label);
                continue;
            };
            let id_at = positions.value(&format!("{pointer}/task_id")).or(here);
            let usable_id =
                read_task_id(object, &mut label, id_at, &mut first_line_of, &mut problems);
            let context = TaskContext {
                pointer: &pointer,
                label: &label,
                task_id: usable_id,
                positions: &positions,
            };
            let (spec, task_problems) = read_task(&context, &defaults::apply(&shared, object));
            problems.extend(task_problems);
            if usable_id.is_some() {
                tasks.push(spec);
                slots.push(slot);
            }
            labels.push(label);
        }
        problems.extend(duplicate_key_problems(&positions, &labels, &tasks, &slots));
        // Stable: problems without a place come last, the others in the order of the text.
        problems.sort_by_key(|p| (p.location.is_none(), p.location));
        let mut seen = HashSet::new();
        problems.retain(|p| seen.insert((p.location, p.message.clone())));
        let runnable = (0..tasks.len())
            .filter(|&i| tasks[i].is_runnable())
            .collect();
        Ok(TaskFile {
            doc,
            runnable,
            tasks,
            slots: slots.into_iter().map(Some).collect(),
            touched: BTreeMap::new(),
            held_out: HashMap::new(),
            unseen: BTreeSet::new(),
            unseen_fields: BTreeMap::new(),
            positions,
            problems,
            text: TaskText::new(text.to_string()),
            changes: Changes::new(),
        })
    }
}

/// The file's object and its `tasks` list; without them nothing can be read (one problem).
fn root_and_tasks<'a>(
    doc: &'a Value,
    positions: &PositionIndex,
) -> Result<(&'a JsonObject, &'a [Value]), Vec<Problem>> {
    let fatal =
        |pointer: &str, message: String| vec![Problem::of_file(positions.value(pointer), message)];
    let Some(root) = doc.as_object() else {
        return Err(fatal(
            "",
            format!(
                "the file must be a JSON object like {{\"tasks\": [ ... ]}}, got {}",
                describe(doc)
            ),
        ));
    };
    let Some(items) = root.get("tasks") else {
        return Err(fatal(
            "",
            "the file has no \"tasks\" list: add \"tasks\": [ ... ] with one object per task"
                .into(),
        ));
    };
    let Some(items) = items.as_array() else {
        return Err(fatal(
            "/tasks",
            format!(
                "\"tasks\" must be a list of task objects, got {}",
                describe(items)
            ),
        ));
    };
    Ok((root, items))
}

/// The values beside the tasks: `run_id` a string, `notify` a program to run.
fn file_problems(root: &JsonObject, positions: &PositionIndex) -> Vec<Problem> {
    let mut problems = Vec::new();
    if let Some(run_id) = root.get("run_id").filter(|v| !v.is_string()) {
        problems.push(Problem::of_file(
            positions.value("/run_id"),
            format!("\"run_id\" must be a string, got {}", describe(run_id)),
        ));
    }
    if let Some(problem) = root
        .get("notify")
        .and_then(crate::core::operator::notify::command_problem)
    {
        problems.push(Problem::of_file(positions.value("/notify"), problem));
    }
    problems
}

/// A task's `task_id`, when it is a string, a safe folder name and not used before; a string id
/// becomes the task's `label` in messages.
fn read_task_id<'a>(
    object: &'a JsonObject,
    label: &mut String,
    id_at: Option<Location>,
    first_line_of: &mut HashMap<&'a str, usize>,
    problems: &mut Vec<Problem>,
) -> Option<&'a str> {
    let id_problem = |task_id: Option<&str>, message: String| Problem {
        location: id_at,
        task_id: task_id.map(str::to_string),
        field: Some("task_id".to_string()),
        message,
    };
    match object.get("task_id") {
        None => {
            problems.push(id_problem(
                None,
                format!(
                    "{label}: missing \"task_id\": give every task a unique name, e.g. \
                     \"task_id\": \"fix-login-001\""
                ),
            ));
            None
        }
        Some(Value::String(id)) => {
            *label = format!("task {}", Value::String(id.clone()));
            if !is_safe_task_id(id) {
                problems.push(id_problem(
                    Some(id),
                    format!(
                        "{label}: \"task_id\" cannot be used as a folder name: use only \
                         letters, digits and - _ . + @ (at most 128 characters)"
                    ),
                ));
                None
            } else if let Some(line) = first_line_of.get(id.as_str()) {
                problems.push(id_problem(
                    Some(id),
                    format!(
                        "{label}: \"task_id\" is already used by the task on line \
                         {line}: every task needs its own task_id"
                    ),
                ));
                None
            } else {
                first_line_of.insert(id, id_at.map_or(0, |at| at.line));
                Some(id.as_str())
            }
        }
        Some(other) => {
            problems.push(id_problem(
                None,
                format!(
                    "{label}: \"task_id\" must be a string, got {}",
                    describe(other)
                ),
            ));
            None
        }
    }
}

/// A key written twice in one object: serde_json keeps the last, so the rewrite would lose one.
fn duplicate_key_problems(
    positions: &PositionIndex,
    labels: &[String],
    tasks: &[TaskSpec],
    slots: &[usize],
) -> Vec<Problem> {
    let mut problems = Vec::new();
    for duplicate in positions.duplicate_keys() {
        let tokens: Vec<String> = duplicate
            .pointer
            .split('/')
            .skip(1)
            .map(|t| t.replace("~1", "/").replace("~0", "~"))
            .collect();
        let slot = match tokens.as_slice() {
            [tasks_key, slot, _, ..] if tasks_key == "tasks" => slot.parse::<usize>().ok(),
            _ => None,
        };
        let (prefix, name, task_id) = match slot {
            Some(slot) => (
                labels
                    .get(slot)
                    .map(|l| format!("{l}: "))
                    .unwrap_or_default(),
                tokens[2..].join("."),
                slots
                    .iter()
                    .position(|s| *s == slot)
                    .map(|i| tasks[i].task_id.clone()),
            ),
            None => (String::new(), tokens.join("."), None),
        };
        problems.push(Problem {
            location: Some(duplicate.repeat),
            task_id,
            field: None,
            message: format!(
                "{prefix}\"{name}\" is written twice (first on line {}): only the last one \
                 would be kept, remove the other",
                duplicate.first.line
            ),
        });
    }
    problems
}
