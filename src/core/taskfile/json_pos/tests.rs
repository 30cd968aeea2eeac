use proptest::prelude::*;
use serde_json::Value;

use super::*;

fn loc(line: usize, column: usize) -> Location {
    Location { line, column }
}

#[test]
fn values_and_keys_of_a_small_document() {
    let text = "{\n  \"run_id\": \"x\",\n  \"tasks\": [\n    {\"agent\": \"codex\", \"n\": -5},\n    [true, null]\n  ]\n}\n";
    let index = locate(text);
    let table: &[(&str, Option<Location>, Option<Location>)] = &[
        ("", Some(loc(1, 1)), None),
        ("/run_id", Some(loc(2, 13)), Some(loc(2, 3))),
        ("/tasks", Some(loc(3, 12)), Some(loc(3, 3))),
        ("/tasks/0", Some(loc(4, 5)), None),
        ("/tasks/0/agent", Some(loc(4, 15)), Some(loc(4, 6))),
        ("/tasks/0/n", Some(loc(4, 29)), Some(loc(4, 24))),
        ("/tasks/1", Some(loc(5, 5)), None),
        ("/tasks/1/0", Some(loc(5, 6)), None),
        ("/tasks/1/1", Some(loc(5, 12)), None),
        ("/tasks/2", None, None),
    ];
    for (pointer, value, key) in table {
        assert_eq!(index.value(pointer), *value, "value of {pointer:?}");
        assert_eq!(index.key(pointer), *key, "key of {pointer:?}");
    }
}

#[test]
fn columns_count_characters_not_bytes() {
    let text = "{\"é€😀\": \"ü\", \"b\": 1}";
    let index = locate(text);
    assert_eq!(index.value("/é€😀"), Some(loc(1, 9)));
    assert_eq!(index.value("/b"), Some(loc(1, 19)));
}

#[test]
fn escaped_keys_become_pointer_tokens() {
    let text = r#"{"a/b": 1, "c~d": 2, "\u00e9\ud83d\ude00\"": 3}"#;
    let index = locate(text);
    assert_eq!(index.value("/a~1b"), Some(loc(1, 9)));
    assert_eq!(index.value("/c~0d"), Some(loc(1, 19)));
    assert_eq!(index.value("/é😀\""), Some(loc(1, 46)));
}

#[test]
fn repeated_keys_are_reported_and_the_last_one_wins() {
    let text = "{\"a\": {\"x\": 1},\n \"a\": 2}";
    let index = locate(text);
    assert_eq!(
        index.duplicate_keys(),
        &[DuplicateKey {
            pointer: "/a".into(),
            first: loc(1, 2),
            repeat: loc(2, 2)
        }]
    );
    assert_eq!(index.value("/a"), Some(loc(2, 7)));
    assert_eq!(index.value("/a/x"), None);
}

#[test]
fn broken_text_stops_without_panicking() {
    for text in [
        "",
        "{",
        "[",
        "\"",
        "{\"a\"",
        "{\"a\":",
        "{\"a\": [1,",
        "\"\\u12",
        "\"\\ud800\\u",
        "}",
        "]]]",
        ":",
        "{,}",
        "[1 2]",
        "{\"a\" 1}",
        "\u{feff}{}",
        "nul",
        "{\"\\",
    ] {
        let _ = locate(text);
    }
    let deep = "[".repeat(100_000);
    assert!(locate(&deep).len() <= MAX_DEPTH + 1);
}

#[test]
fn char_column_converts_serde_json_error_columns() {
    let text = "{\n  \"é\": 1\n  \"b\": 2\n}";
    let error = serde_json::from_str::<Value>(text).expect_err("missing comma");
    assert_eq!((error.line(), error.column()), (3, 3));
    assert_eq!(char_column(text, error.line(), error.column()), 3);
    let text = "{\"é€\": 1 \"b\": 2}";
    let error = serde_json::from_str::<Value>(text).expect_err("missing comma");
    assert_eq!(char_column(text, error.line(), error.column()), 10);
    assert_eq!(text.chars().nth(9), Some('"'));
    assert_eq!(char_column(text, 9, 4), 4);
    assert_eq!(char_column("", 1, 0), 1);
}

fn any_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        (-1e6f64..1e6).prop_map(Value::from),
        "[a-z\"\\\\/~é😀\n\t\u{1}]{0,6}".prop_map(Value::String),
    ];
    leaf.prop_recursive(5, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            prop::collection::vec(("[a-z/~\"é😀 ]{0,4}", inner), 0..5)
                .prop_map(|members| Value::Object(members.into_iter().collect())),
        ]
    })
}

/// Every (pointer, value) of a document, the root included.
fn walk<'a>(pointer: String, value: &'a Value, out: &mut Vec<(String, &'a Value)>) {
    out.push((pointer.clone(), value));
    match value {
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                walk(format!("{pointer}/{i}"), item, out);
            }
        }
        Value::Object(members) => {
            for (key, member) in members {
                walk(format!("{pointer}/{}", pointer_token(key)), member, out);
            }
        }
        _ => {}
    }
}

/// The text from a line and column on.
fn text_at(text: &str, at: Location) -> Option<&str> {
    let mut line = 1;
    let mut column = 1;
    for (i, c) in text.char_indices() {
        if line == at.line && column == at.column {
            return Some(&text[i..]);
        }
        if c == '\n' {
            line += 1;
            column = 1;
        } else {
            column += 1;
        }
    }
    None
}

proptest! {
    #[test]
    fn locate_never_panics(text in "[{}\\[\\]:,\"\\\\ u0-9a-ftrnl\n\u{e9}-]{0,80}") {
        let _ = locate(&text);
    }

    #[test]
    fn positions_point_at_each_value(doc in any_json(), pretty in any::<bool>(), crlf in any::<bool>()) {
        let mut text = if pretty {
            serde_json::to_string_pretty(&doc).expect("serializes")
        } else {
            serde_json::to_string(&doc).expect("serializes")
        };
        if crlf {
            text = text.replace('\n', "\r\n");
        }
        let index = locate(&text);
        let mut all = Vec::new();
        walk(String::new(), &doc, &mut all);
        prop_assert_eq!(index.len(), all.len());
        prop_assert!(index.duplicate_keys().is_empty());
        for (pointer, value) in all {
            let at = index.value(&pointer);
            prop_assert!(at.is_some(), "no position for {:?}", pointer);
            let rest = at.and_then(|at| text_at(&text, at)).unwrap_or("");
            let compact = serde_json::to_string(value).expect("serializes");
            if pretty {
                prop_assert_eq!(rest.chars().next(), compact.chars().next(), "at {:?}", pointer);
            } else {
                prop_assert!(rest.starts_with(&compact), "{:?}: {:?} vs {:?}", pointer, rest, compact);
            }
            if let Some(key) = pointer.rsplit('/').next().filter(|_| !pointer.is_empty())
                && let Some(key_at) = index.key(&pointer)
            {
                let key = key.replace("~1", "/").replace("~0", "~");
                let quoted = serde_json::to_string(&key).expect("serializes");
                let rest = text_at(&text, key_at).unwrap_or("");
                prop_assert!(rest.starts_with(&quoted), "key of {:?}", pointer);
            }
        }
    }

    #[test]
    fn truncated_documents_never_panic(doc in any_json(), cut in 0usize..400) {
        let text = serde_json::to_string(&doc).expect("serializes");
        let cut: String = text.chars().take(cut).collect();
        let _ = locate(&cut);
    }
}
