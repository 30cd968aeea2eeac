//! The arguments of a tool call checked against the tool's input schema, before serde reads them,
//! so a wrong argument is named in JSON's words (`"timeout_sec" must be a number, got the string
//! "soon"`) instead of Rust's (`invalid type: string "soon", expected f64`). Pure: a schema and
//! a JSON object in, the first problem out. It knows the few schema keywords herd's input types
//! produce (`type`, `enum`, `const`, `oneOf`/`anyOf`, `items`, `minimum`, `$ref` into `$defs`,
//! `required`, `additionalProperties: false`); what it does not know it lets through to serde.

use serde_json::{Map, Value};

/// What is wrong with a call's arguments, as one sentence about one argument.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum ArgumentProblem {
    /// An argument the tool does not take.
    Unknown { name: String, known: Vec<String> },
    /// A required argument is absent.
    Missing { name: String },
    /// An argument (or an element of one) has the wrong kind or value.
    Wrong {
        path: String,
        expected: String,
        got: String,
    },
}

impl std::fmt::Display for ArgumentProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ArgumentProblem::Unknown { name, known } if known.is_empty() => {
                write!(f, "there is no argument {name:?}: the tool takes none")
            }
            ArgumentProblem::Unknown { name, known } => write!(
                f,
                "there is no argument {name:?}: the tool takes {}",
                known.join(", ")
            ),
            ArgumentProblem::Missing { name } => write!(f, "{name:?} is required"),
            ArgumentProblem::Wrong {
                path,
                expected,
                got,
            } => write!(f, "{path} must be {expected}, got {got}"),
        }
    }
}

/// The first problem of `arguments` against the object `schema`, if any. A `null` for an
/// argument that is not required counts as leaving it out.
pub(super) fn check(
    schema: &Map<String, Value>,
    arguments: &Map<String, Value>,
) -> Option<ArgumentProblem> {
    let empty = Map::new();
    let properties = schema
        .get("properties")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|names| names.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let closed = schema.get("additionalProperties") == Some(&Value::Bool(false));
    for (name, value) in arguments {
        let Some(property) = properties.get(name) else {
            if closed {
                return Some(ArgumentProblem::Unknown {
                    name: name.clone(),
                    known: properties.keys().cloned().collect(),
                });
            }
            continue;
        };
        if value.is_null() && !required.contains(&name.as_str()) {
            continue;
        }
        if let Some(problem) = check_value(schema, &format!("{name:?}"), property, value) {
            return Some(problem);
        }
    }
    required
        .iter()
        .find(|name| arguments.get(**name).is_none_or(Value::is_null))
        .map(|name| ArgumentProblem::Missing {
            name: (*name).to_string(),
        })
}

/// The problem of one value against its schema; `root` holds the `$defs` a `$ref` names.
fn check_value(
    root: &Map<String, Value>,
    path: &str,
    schema: &Value,
    value: &Value,
) -> Option<ArgumentProblem> {
    let schema = resolve(root, schema);
    let wrong = |expected: String| {
        Some(ArgumentProblem::Wrong {
            path: path.to_string(),
            expected,
            got: describe(value),
        })
    };
    if let Some(allowed) = allowed_values(root, schema) {
        if allowed.contains(value) {
            return None;
        }
        let words: Vec<String> = allowed.iter().map(Value::to_string).collect();
        return wrong(format!("one of {}", words.join(", ")));
    }
    if let Some(branches) = one_of(schema) {
        if branches
            .iter()
            .any(|branch| check_value(root, path, branch, value).is_none())
        {
            return None;
        }
        return wrong("one of the forms its schema gives".to_string());
    }
    let types = types(schema);
    if !types.is_empty() && !types.iter().any(|kind| is_of_type(value, kind)) {
        // A null optional argument was let through before; a required one is never null.
        let words: Vec<&str> = types
            .iter()
            .filter(|kind| **kind != "null")
            .map(|kind| type_words(kind))
            .collect();
        return wrong(words.join(" or "));
    }
    if let (Some(minimum), Some(number)) = (
        schema.get("minimum").and_then(Value::as_f64),
        value.as_f64(),
    ) && number < minimum
    {
        return wrong(format!("{minimum} or more"));
    }
    if let (Some(items), Some(elements)) = (schema.get("items"), value.as_array()) {
        return elements.iter().enumerate().find_map(|(index, element)| {
            check_value(root, &format!("{path}[{index}]"), items, element)
        });
    }
    None
}

/// The schema a `$ref` into `#/$defs/` names, or the schema itself.
fn resolve<'a>(root: &'a Map<String, Value>, schema: &'a Value) -> &'a Value {
    schema
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(|reference| reference.strip_prefix("#/$defs/"))
        .and_then(|name| root.get("$defs")?.get(name))
        .unwrap_or(schema)
}

fn one_of(schema: &Value) -> Option<&Vec<Value>> {
    schema
        .get("oneOf")
        .or_else(|| schema.get("anyOf"))
        .and_then(Value::as_array)
}

/// The values a schema allows when it is a list of them (`enum`, `const`, or `oneOf` branches
/// that each are), `None` when it is not.
fn allowed_values(root: &Map<String, Value>, schema: &Value) -> Option<Vec<Value>> {
    if let Some(values) = schema.get("enum").and_then(Value::as_array) {
        return Some(values.clone());
    }
    if let Some(value) = schema.get("const") {
        return Some(vec![value.clone()]);
    }
    let branches = one_of(schema)?;
    let mut allowed = Vec::new();
    for branch in branches {
        allowed.extend(allowed_values(root, resolve(root, branch))?);
    }
    Some(allowed)
}

/// The JSON types a schema names: one (`"type": "number"`) or several (`["number", "null"]`).
fn types(schema: &Value) -> Vec<&str> {
    match schema.get("type") {
        Some(Value::String(kind)) => vec![kind.as_str()],
        Some(Value::Array(kinds)) => kinds.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}

fn is_of_type(value: &Value, kind: &str) -> bool {
    match kind {
        "string" => value.is_string(),
        "number" => value.is_number(),
        "integer" => value.is_i64() || value.is_u64(),
        "boolean" => value.is_boolean(),
        "array" => value.is_array(),
        "object" => value.is_object(),
        "null" => value.is_null(),
        _ => true,
    }
}

/// A JSON type as a sentence says it.
fn type_words(kind: &str) -> &str {
    match kind {
        "string" => "a string",
        "number" => "a number",
        "integer" => "a whole number",
        "boolean" => "true or false",
        "array" => "an array",
        "object" => "an object",
        "null" => "null",
        other => other,
    }
}

/// A value as a sentence says it: `the string "soon"`, `the number 7`, `an array`.
fn describe(value: &Value) -> String {
    match value {
        Value::Null => "null".to_string(),
        Value::Bool(flag) => format!("the boolean {flag}"),
        Value::Number(number) => format!("the number {number}"),
        Value::String(text) => format!("the string {}", Value::String(text.clone())),
        Value::Array(_) => "an array".to_string(),
        Value::Object(_) => "an object".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn schema() -> Map<String, Value> {
        json!({
            "type": "object",
            "additionalProperties": false,
            "required": ["task_id"],
            "properties": {
                "task_id": {"type": "string"},
                "timeout_sec": {"type": "number"},
                "attempt": {"type": "integer", "minimum": 0},
                "states": {"type": "array", "items": {"$ref": "#/$defs/State"}},
                "answer": {"oneOf": [
                    {"type": "string", "const": "approve"},
                    {"type": "string", "const": "deny"}
                ]}
            },
            "$defs": {"State": {"type": "string", "enum": ["pending", "failed"]}}
        })
        .as_object()
        .cloned()
        .unwrap_or_default()
    }

    fn problem(arguments: Value) -> Option<String> {
        let arguments = arguments.as_object().cloned().unwrap_or_default();
        check(&schema(), &arguments).map(|problem| problem.to_string())
    }

    #[test]
    fn a_wrong_argument_is_named_in_json_words() {
        let cases = [
            (
                json!({"task_id": "a", "timeout_sec": "soon"}),
                r#""timeout_sec" must be a number, got the string "soon""#,
            ),
            (
                json!({"task_id": 7}),
                r#""task_id" must be a string, got the number 7"#,
            ),
            (
                json!({"task_id": "a", "attempt": 1.5}),
                r#""attempt" must be a whole number, got the number 1.5"#,
            ),
            (
                json!({"task_id": "a", "attempt": -1}),
                r#""attempt" must be 0 or more, got the number -1"#,
            ),
            (
                json!({"task_id": "a", "states": ["pending", "done"]}),
                r#""states"[1] must be one of "pending", "failed", got the string "done""#,
            ),
            (
                json!({"task_id": "a", "states": "pending"}),
                r#""states" must be an array, got the string "pending""#,
            ),
            (
                json!({"task_id": "a", "answer": true}),
                r#""answer" must be one of "approve", "deny", got the boolean true"#,
            ),
            (json!({}), r#""task_id" is required"#),
            (
                json!({"task_id": null}),
                r#""task_id" must be a string, got null"#,
            ),
            (
                json!({"task_id": "a", "id": "b"}),
                r#"there is no argument "id": the tool takes task_id, timeout_sec, attempt, states, answer"#,
            ),
        ];
        for (arguments, said) in cases {
            assert_eq!(
                problem(arguments.clone()).as_deref(),
                Some(said),
                "{arguments}"
            );
        }
    }

    #[test]
    fn right_arguments_and_a_null_optional_one_pass() {
        for arguments in [
            json!({"task_id": "a"}),
            json!({"task_id": "a", "timeout_sec": 5, "attempt": 2, "states": ["failed"], "answer": "deny"}),
            json!({"task_id": "a", "timeout_sec": null}),
        ] {
            assert_eq!(problem(arguments.clone()), None, "{arguments}");
        }
    }
}
