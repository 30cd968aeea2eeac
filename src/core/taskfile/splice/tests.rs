use proptest::prelude::*;
use serde_json::{Value, json};

use super::*;

/// Applies `edits` (key → new value, `None` removes) to task `slot` of `text` through a document.
fn splice(text: &str, slot: usize, edits: &[(&str, Option<Value>)]) -> String {
    let mut doc: Value = serde_json::from_str(text).expect("valid JSON");
    let mut changes = Changes::new();
    let object = doc["tasks"][slot].as_object_mut().expect("task object");
    for (key, value) in edits {
        match value {
            Some(v) => object.insert(key.to_string(), v.clone()),
            None => object.shift_remove(*key),
        };
        changes.entry(slot).or_default().insert(key.to_string());
    }
    let mut spliced = TaskText::new(text.to_string());
    spliced.apply(&doc, &changes).expect("spliced");
    let again: Value = serde_json::from_str(&spliced.to_string()).expect("still valid JSON");
    assert_eq!(again, doc, "{spliced}");
    spliced.to_string()
}

const HAND_WRITTEN: &str = "{\n    \"run_id\" : \"mine\",   // not JSON comments, just spaces below\n    \"tasks\": [\n        { \"task_id\": \"a\", \"agent\": \"generic\", \"prompt_template\": \"x\", \"status\": \"pending\" },\n        {\n            \"task_id\": \"b\",\n            \"agent\":\"generic\",\n            \"prompt_template\": \"y\",\n            \"inputs\": {\"k\": [1,2,3]},\n            \"result\": null\n        }\n    ]\n}\n";

#[test]
fn a_hand_written_file_keeps_its_layout_outside_the_changed_values() {
    // (The comment-looking text above is not valid JSON; use the file without it.)
    let text = HAND_WRITTEN.replace("   // not JSON comments, just spaces below", "");
    let inline = splice(
        &text,
        0,
        &[
            ("status", Some(json!("running"))),
            ("attempts", Some(json!(1))),
        ],
    );
    assert_eq!(
        inline,
        text.replace(
            "\"status\": \"pending\" }",
            "\"status\": \"running\", \"attempts\": 1 }"
        )
    );
    let multi = splice(
        &text,
        1,
        &[
            (
                "result",
                Some(json!({"exit_code": 0, "auto_inputs": [{"key": "1"}]})),
            ),
            ("status", Some(json!("completed"))),
        ],
    );
    let expected = text.replace(
        "\"result\": null\n",
        "\"result\": {\n                \"exit_code\": 0,\n                \"auto_inputs\": [\n                    {\n                        \"key\": \"1\"\n                    }\n                ]\n            },\n            \"status\": \"completed\"\n",
    );
    assert_eq!(multi, expected);
}

#[test]
fn removing_fields_takes_their_separator_and_nothing_else() {
    let text = "{\"tasks\": [\n  {\n    \"task_id\": \"a\",\n    \"retry_at\": \"x\",\n    \"agent\": \"g\"\n  },\n  {\"task_id\": \"b\", \"agent\": \"g\", \"retry_at\": \"y\"}\n]}";
    let middle = splice(text, 0, &[("retry_at", None)]);
    assert_eq!(middle, text.replace("\n    \"retry_at\": \"x\",", ""));
    let last = splice(text, 1, &[("retry_at", None)]);
    assert_eq!(last, text.replace(", \"retry_at\": \"y\"", ""));
}

#[test]
fn crlf_and_tabs_are_kept_for_new_and_rewritten_fields() {
    let text = "{\r\n\t\"tasks\": [\r\n\t\t{\r\n\t\t\t\"task_id\": \"a\",\r\n\t\t\t\"agent\": \"g\"\r\n\t\t}\r\n\t]\r\n}\r\n";
    let out = splice(text, 0, &[("result", Some(json!({"exit_code": 1})))]);
    assert_eq!(
        out,
        text.replace(
            "\"agent\": \"g\"\r\n",
            "\"agent\": \"g\",\r\n\t\t\t\"result\": {\r\n\t\t\t\t\"exit_code\": 1\r\n\t\t\t}\r\n"
        )
    );
}

#[test]
fn later_tasks_are_found_after_a_task_grows_or_shrinks() {
    let text =
        r#"{"tasks": [{"task_id": "a", "n": 1}, {"task_id": "b", "n": 2}, {"task_id": "c"}]}"#;
    let mut doc: Value = serde_json::from_str(text).expect("json");
    let mut spliced = TaskText::new(text.to_string());
    for (slot, value) in [(0, json!("a much longer value than before")), (1, json!(0))] {
        doc["tasks"][slot]["n"] = value;
        let changes = Changes::from([(slot, ["n".to_string()].into())]);
        assert_eq!(spliced.apply(&doc, &changes), Some(true));
    }
    doc["tasks"][2]["n"] = json!(true);
    let changes = Changes::from([(2, ["n".to_string()].into())]);
    assert_eq!(spliced.apply(&doc, &changes), Some(true));
    assert_eq!(
        serde_json::from_str::<Value>(&spliced.to_string()).expect("json"),
        doc
    );
    assert_eq!(spliced.apply(&doc, &changes), Some(false), "same value");
}

#[test]
fn a_splice_copies_only_the_piece_of_the_changed_task() {
    let tasks: Vec<String> = (0..300)
        .map(|i| format!(r#"  {{"task_id": "t{i}", "n": 0}}"#))
        .collect();
    let text = format!("{{\"tasks\": [\n{}\n]}}\n", tasks.join(",\n"));
    let mut doc: Value = serde_json::from_str(&text).expect("json");
    let mut spliced = TaskText::new(text.clone());
    let before = spliced.shared();
    assert_eq!(before.to_string(), text);
    assert_eq!(before.len(), text.len());
    assert_eq!(before.pieces().len(), 300usize.div_ceil(TASKS_PER_PIECE));
    doc["tasks"][150]["n"] = json!("a longer value");
    let changes = Changes::from([(150, ["n".to_string()].into())]);
    assert_eq!(spliced.apply(&doc, &changes), Some(true));
    let after = spliced.shared();
    let shared: Vec<bool> = (before.pieces.iter().zip(&after.pieces))
        .map(|(a, b)| Arc::ptr_eq(a, b))
        .collect();
    let changed = 150 / TASKS_PER_PIECE;
    for (piece, same) in shared.iter().enumerate() {
        assert_eq!(*same, piece != changed, "piece {piece}");
    }
    // The snapshot taken before is unchanged; the new text is the whole document.
    assert_eq!(before.to_string(), text);
    let again: Value = serde_json::from_str(&after.to_string()).expect("json");
    assert_eq!(again, doc);
    // The tasks after the changed one, in its piece and the next, are still found.
    doc["tasks"][151]["n"] = json!(1);
    doc["tasks"][299]["n"] = json!(2);
    let changes = Changes::from([
        (151, ["n".to_string()].into()),
        (299, ["n".to_string()].into()),
    ]);
    assert_eq!(spliced.apply(&doc, &changes), Some(true));
    let again: Value = serde_json::from_str(&spliced.to_string()).expect("json");
    assert_eq!(again, doc);
}

#[test]
fn text_that_is_not_a_tasks_object_cannot_be_spliced() {
    let mut text = TaskText::new("[1, 2]".to_string());
    let changes = Changes::from([(0, ["n".to_string()].into())]);
    assert_eq!(text.apply(&json!({"tasks": [{}]}), &changes), None);
    assert_eq!(text.to_string(), "[1, 2]");
}

// ---- property: random styles, random changes ----

#[derive(Debug, Clone)]
struct Layout {
    indent: &'static str,
    newline: &'static str,
    colon: &'static str,
    inline_tasks: Vec<bool>,
}

fn layout() -> impl Strategy<Value = Layout> {
    (
        prop::sample::select(vec!["  ", "    ", "\t", " "]),
        prop::sample::select(vec!["\n", "\r\n"]),
        prop::sample::select(vec![": ", ":", " : "]),
        prop::collection::vec(any::<bool>(), 1..5),
    )
        .prop_map(|(indent, newline, colon, inline_tasks)| Layout {
            indent,
            newline,
            colon,
            inline_tasks,
        })
}

fn scalar() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i32>().prop_map(Value::from),
        "[a-z\"\\\\é ]{0,8}".prop_map(Value::from),
    ]
}

fn value() -> impl Strategy<Value = Value> {
    scalar().prop_recursive(3, 12, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::from),
            prop::collection::btree_map("[a-z_]{1,6}", inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// A tasks file written by hand in `layout`: each task has an id and fields `f0..fN`.
fn write_file(layout: &Layout, fields: &[Vec<Value>]) -> String {
    let nl = layout.newline;
    let ind = layout.indent;
    let mut out = format!(
        "{{{nl}{ind}\"run_id\"{}\"r\",{nl}{ind}\"tasks\": [",
        layout.colon
    );
    for (t, values) in fields.iter().enumerate() {
        if t > 0 {
            out.push(',');
        }
        let inline = layout.inline_tasks[t % layout.inline_tasks.len()];
        let mut members = vec![format!("\"task_id\"{}\"t{t}\"", layout.colon)];
        for (f, v) in values.iter().enumerate() {
            members.push(format!("\"f{f}\"{}{v}", layout.colon));
        }
        if inline {
            out.push_str(&format!("{nl}{ind}{ind}{{ {} }}", members.join(", ")));
        } else {
            let sep = format!(",{nl}{ind}{ind}{ind}");
            out.push_str(&format!(
                "{nl}{ind}{ind}{{{nl}{ind}{ind}{ind}{}{nl}{ind}{ind}}}",
                members.join(&sep)
            ));
        }
    }
    out.push_str(&format!("{nl}{ind}]{nl}}}{nl}"));
    out
}

#[derive(Debug, Clone)]
enum Edit {
    Set {
        task: usize,
        key: String,
        value: Value,
    },
    Remove {
        task: usize,
        key: String,
    },
}

fn edit() -> impl Strategy<Value = Edit> {
    let key = prop_oneof![
        (0usize..4).prop_map(|n| format!("f{n}")),
        prop::sample::select(vec!["status", "attempts", "result", "retry_at"])
            .prop_map(str::to_string),
    ];
    prop_oneof![
        (0usize..6, key.clone(), value()).prop_map(|(task, key, value)| Edit::Set {
            task,
            key,
            value
        }),
        (0usize..6, key).prop_map(|(task, key)| Edit::Remove { task, key }),
    ]
}

/// `text` with the given members of task objects cut out (with the separator before them, or
/// after them for a first member), so that what must not change can be compared.
fn without_members(text: &str, cut: &BTreeMap<usize, BTreeSet<String>>) -> String {
    let spans = task_spans(text.as_bytes()).expect("laid out");
    let mut out = String::new();
    let mut copied = 0;
    for (slot, keys) in cut {
        let span = spans[*slot].clone();
        let object = &text[span.clone()];
        let found = members(object).expect("members");
        let mut cut_ranges = Vec::new();
        for (i, m) in found.iter().enumerate() {
            if keys.contains(&m.key) {
                let range = if i > 0 {
                    found[i - 1].value.end..m.value.end
                } else if let Some(next) = found.get(1) {
                    m.key_start..next.key_start
                } else {
                    m.key_start..m.value.end
                };
                cut_ranges.push(range);
            }
        }
        out.push_str(&text[copied..span.start]);
        let mut at = 0;
        for range in cut_ranges {
            if range.start >= at {
                out.push_str(&object[at..range.start]);
                at = range.end;
            }
        }
        out.push_str(&object[at..]);
        copied = span.end;
    }
    out.push_str(&text[copied..]);
    out
}

proptest! {
    #[test]
    fn splicing_changes_exactly_the_changed_values(
        layout in layout(),
        fields in prop::collection::vec(prop::collection::vec(value(), 1..4), 1..6),
        edits in prop::collection::vec(edit(), 1..8),
        batches in 1usize..3,
        // Small pieces, so that changes fall in several and one piece holds several tasks.
        per_piece in 1usize..4,
    ) {
        let text = write_file(&layout, &fields);
        let mut doc: Value = serde_json::from_str(&text).expect("generated JSON");
        let mut spliced = TaskText::in_pieces_of(per_piece, text.clone());
        let mut touched: BTreeMap<usize, BTreeSet<String>> = BTreeMap::new();
        let per_batch = edits.len().div_ceil(batches);
        for batch in edits.chunks(per_batch) {
            let mut changes = Changes::new();
            for edit in batch {
                let (task, key) = match edit {
                    Edit::Set { task, key, .. } | Edit::Remove { task, key } => (*task % fields.len(), key.clone()),
                };
                let object = doc["tasks"][task].as_object_mut().expect("object");
                match edit {
                    Edit::Set { value, .. } => { object.insert(key.clone(), value.clone()); }
                    Edit::Remove { .. } => { object.shift_remove(&key); }
                }
                changes.entry(task).or_default().insert(key.clone());
                touched.entry(task).or_default().insert(key);
            }
            let before = spliced.shared();
            prop_assert!(spliced.apply(&doc, &changes).is_some());
            // What a writer that holds `before` has to write again: from the first change on.
            let after = spliced.shared();
            let (old, new) = (before.to_string(), after.to_string());
            let same = old.bytes().zip(new.bytes()).take_while(|(a, b)| a == b).count();
            prop_assert_eq!(after.common_prefix_len(&before), same);
            prop_assert_eq!(before.common_prefix_len(&after), same);
            for from in [0, same, new.len() / 2, new.len()] {
                let tail: Vec<u8> = after.bytes_from(from).flatten().copied().collect();
                prop_assert_eq!(tail, new.as_bytes()[from..].to_vec());
            }
            let parsed: Value = serde_json::from_str(&spliced.to_string()).expect("valid JSON");
            prop_assert_eq!(&parsed, &doc);
        }
        prop_assert_eq!(
            without_members(&spliced.to_string(), &touched),
            without_members(&text, &touched)
        );
        // A task that stays inline stays on one line.
        let spliced = spliced.to_string();
        for (slot, span) in task_spans(spliced.as_bytes()).expect("laid out").iter().enumerate() {
            if layout.inline_tasks[slot % layout.inline_tasks.len()] {
                prop_assert!(!spliced[span.clone()].contains('\n'));
            }
        }
    }
}

#[test]
fn an_added_task_is_written_like_the_tasks_before_it() {
    let task = json!({"task_id": "new", "agent": "sim"});
    let cases = [
        (
            "{\n  \"tasks\": [\n    {\"task_id\": \"a\"},\n    {\"task_id\": \"b\"}\n  ]\n}\n",
            "{\n  \"tasks\": [\n    {\"task_id\": \"a\"},\n    {\"task_id\": \"b\"},\n    {\n      \
             \"task_id\": \"new\",\n      \"agent\": \"sim\"\n    }\n  ]\n}\n",
        ),
        (
            "{\"tasks\": [{\"task_id\": \"a\"}], \"x\": 1}",
            "{\"tasks\": [{\"task_id\": \"a\"},{\"task_id\":\"new\",\"agent\":\"sim\"}], \"x\": 1}",
        ),
        (
            "{\r\n\t\"tasks\": [\r\n\t\t{\"task_id\": \"a\"}\r\n\t]\r\n}",
            "{\r\n\t\"tasks\": [\r\n\t\t{\"task_id\": \"a\"},\r\n\t\t{\r\n\t\t  \"task_id\": \
             \"new\",\r\n\t\t  \"agent\": \"sim\"\r\n\t\t}\r\n\t]\r\n}",
        ),
    ];
    for (text, want) in cases {
        let got = with_task_appended(text, &task).expect("appended");
        assert_eq!(got, want);
        let parsed: Value = serde_json::from_str(&got).expect("valid JSON");
        assert_eq!(
            parsed["tasks"].as_array().map(Vec::len),
            Some(text.matches("task_id").count() + 1)
        );
    }
    assert_eq!(with_task_appended("{\"tasks\": []}", &task), None);
    assert_eq!(with_task_appended("[1]", &task), None);
}
