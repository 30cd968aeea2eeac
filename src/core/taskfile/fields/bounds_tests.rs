//! Every number of a task has a range (README, "Numbers"): values outside it are problems at
//! their line and column, never a panic later. A property test feeds arbitrary JSON values into
//! every numeric field.

use std::time::{Duration, Instant};

use proptest::prelude::*;
use serde_json::{Value, json};

use crate::core::task::{MAX_ATTEMPTS, MAX_RETRIES_LIMIT, MAX_TIMEOUT_SEC, MAX_WAIT_SEC};
use crate::core::taskfile::TaskFile;

const NUMERIC_FIELDS: &[&str] = &[
    "timeout_sec",
    "max_retries",
    "attempts",
    "idle_sec",
    "permission_wait_sec",
];

fn file_with(field: &str, value: &str) -> String {
    format!(
        "{{\"tasks\": [\n{{\"task_id\": \"t\", \"agent\": \"a\", \"prompt_template\": \"p\", \"{field}\": {value}}}\n]}}\n"
    )
}

/// The problems of a file, as `validate` prints them (without the file name).
fn problems(text: &str) -> Vec<String> {
    match TaskFile::parse(text) {
        Ok(file) => file.problems().iter().map(ToString::to_string).collect(),
        Err(problems) => problems.iter().map(ToString::to_string).collect(),
    }
}

#[test]
fn numbers_that_used_to_be_accepted_and_panic_are_refused_at_their_place() {
    let table = [
        ("timeout_sec", "18446744073709551615"),
        ("timeout_sec", "9223372036854775807"),
        ("timeout_sec", "2592001"),
        ("max_retries", "1001"),
        ("attempts", "4294967295"),
        ("idle_sec", "1e300"),
        ("permission_wait_sec", "1e300"),
        ("idle_sec", "-0.0"),
        ("permission_wait_sec", "2592000.5"),
    ];
    for (field, value) in table {
        let found = problems(&file_with(field, value));
        assert_eq!(found.len(), 1, "{field}={value}: {found:?}");
        let column = 60 + field.len();
        assert!(
            found[0].starts_with(&format!("2:{column}: task \"t\": \"{field}\" must be")),
            "{field}={value}: {found:?}"
        );
        let shown: f64 = value.parse().unwrap();
        let as_read = found[0].rsplit("got ").next().unwrap();
        assert_eq!(as_read.parse::<f64>().ok(), Some(shown), "{found:?}");
    }
}

#[test]
fn the_ends_of_every_range_are_accepted() {
    for (field, value) in [
        ("timeout_sec", json!(1)),
        ("timeout_sec", json!(MAX_TIMEOUT_SEC)),
        ("max_retries", json!(0)),
        ("max_retries", json!(MAX_RETRIES_LIMIT)),
        ("attempts", json!(MAX_ATTEMPTS)),
        ("idle_sec", json!(0.001)),
        ("idle_sec", json!(MAX_WAIT_SEC)),
        ("permission_wait_sec", json!(MAX_WAIT_SEC)),
    ] {
        let found = problems(&file_with(field, &value.to_string()));
        assert!(found.is_empty(), "{field}={value}: {found:?}");
    }
}

fn any_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        any::<u64>().prop_map(|n| json!(n)),
        any::<f64>()
            .prop_map(|f| serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)),
        (0u64..5_000_000).prop_map(|n| json!(n)),
        (-10.0f64..1e7).prop_map(|f| json!(f)),
        ".{0,8}".prop_map(Value::String),
    ];
    leaf.prop_recursive(2, 8, 3, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..3).prop_map(Value::Array),
            prop::collection::btree_map("[a-z]{1,3}", inner, 0..3)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

proptest! {
    #[test]
    fn any_value_in_any_numeric_field_is_refused_or_safe_to_run(
        field in prop::sample::select(NUMERIC_FIELDS),
        value in any_json(),
    ) {
        let text = file_with(field, &value.to_string());
        let Ok(file) = TaskFile::parse(&text) else {
            return Ok(());
        };
        if !file.problems().is_empty() {
            prop_assert!(file.problems().iter().all(|p| p.to_string().starts_with("2:")));
            return Ok(());
        }
        // Accepted: every number the run derives from the task must be computable.
        let task = &file.tasks()[0];
        prop_assert!((1..=MAX_TIMEOUT_SEC).contains(&task.timeout_sec));
        prop_assert!(Instant::now().checked_add(Duration::from_secs(task.timeout_sec)).is_some());
        prop_assert!(task.max_retries <= MAX_RETRIES_LIMIT);
        prop_assert!(task.attempts.checked_add(1).is_some());
        for wait in [task.idle_sec, task.permission_wait_sec].into_iter().flatten() {
            prop_assert!(Duration::try_from_secs_f64(wait).is_ok());
            prop_assert!(wait > 0.0 && wait <= MAX_WAIT_SEC);
        }
    }
}

#[test]
fn a_profiles_numbers_have_ranges_too() {
    use crate::core::profile::ProfileSet;
    let cases = [
        (
            "idle_sec = 1e300",
            "idle_sec must be above 0 and at most 2592000 seconds",
        ),
        ("idle_sec = 0", "idle_sec must be above 0"),
        (
            "exit_grace_sec = 1e9",
            "exit_grace_sec must be from 0 to 3600 seconds",
        ),
        (
            "exit_grace_sec = -1",
            "exit_grace_sec must be from 0 to 3600 seconds",
        ),
        ("tail_rows = 0", "tail_rows must be from 1 to 10000, got 0"),
        (
            "prompt_region_rows = 100000",
            "prompt_region_rows must be from 1 to 10000",
        ),
    ];
    for (line, expected) in cases {
        let text = format!("[profiles.p]\ncommand = [\"p\"]\n{line}\n");
        let errors = match ProfileSet::build(&[&text], None) {
            Ok(_) => panic!("{line} was accepted"),
            Err(errors) => format!("{errors:?}"),
        };
        assert!(errors.contains(expected), "{line}: {errors}");
    }
    let fine = "[profiles.p]\ncommand = [\"p\"]\nidle_sec = 2592000\nexit_grace_sec = 3600\ntail_rows = 10000\n";
    assert!(ProfileSet::build(&[fine], None).is_ok());
}
