use super::*;
use serde_json::json;

fn ok(text: &str) -> SignalFile {
    parse(text).unwrap_or_else(|e| panic!("{text:?} should parse, got: {e}"))
}

fn err(text: &str) -> String {
    match parse(text) {
        Ok(parsed) => panic!("{text:?} should be refused, got {parsed:?}"),
        Err(e) => e.to_string(),
    }
}

fn questions(list: &[&str]) -> Signal {
    Signal::Questions {
        questions: list.iter().map(|q| q.to_string()).collect(),
    }
}

#[test]
fn done_keeps_any_result() {
    let cases: &[(&str, Option<Value>)] = &[
        (r#"{"status": "done"}"#, None),
        (r#"{"status": "done", "result": null}"#, None),
        (
            r#"{"status": "done", "result": "all tests pass"}"#,
            Some(json!("all tests pass")),
        ),
        (
            r#"{"status": "done", "result": {"files": ["a.rs"], "ok": true}}"#,
            Some(json!({"files": ["a.rs"], "ok": true})),
        ),
        (r#"{"status": "done", "result": 3}"#, Some(json!(3))),
        // Unknown fields are ignored.
        (r#"{"status": "done", "notes": "x"}"#, None),
    ];
    for (text, result) in cases {
        assert_eq!(
            ok(text).signal,
            Signal::Done {
                result: result.clone()
            },
            "for {text}"
        );
    }
}

#[test]
fn session_id_is_kept_when_a_non_empty_string() {
    let cases: &[(&str, Option<&str>)] = &[
        (
            r#"{"status": "done", "session_id": "abc-123"}"#,
            Some("abc-123"),
        ),
        (r#"{"status": "done", "session_id": " abc "}"#, Some("abc")),
        (r#"{"status": "done", "session_id": ""}"#, None),
        (r#"{"status": "done", "session_id": 7}"#, None),
        (r#"{"status": "done"}"#, None),
        (
            r#"{"status": "error", "error": "x", "session_id": "s"}"#,
            Some("s"),
        ),
    ];
    for (text, want) in cases {
        assert_eq!(ok(text).session_id.as_deref(), *want, "for {text}");
    }
}

#[test]
fn questions_come_in_several_shapes() {
    let cases: &[(&str, &[&str])] = &[
        (
            r#"{"status": "questions", "questions": ["Which DB?", "Keep the old API?"]}"#,
            &["Which DB?", "Keep the old API?"],
        ),
        (
            r#"{"status": "questions", "questions": [{"question": "Which DB?", "options": ["pg", "sqlite"]}]}"#,
            &["Which DB?"],
        ),
        (
            r#"{"status": "questions", "questions": [{"text": "Which DB?", "id": 1}]}"#,
            &["Which DB?"],
        ),
        // `question` wins over `text` when both are there.
        (
            r#"{"status": "questions", "questions": [{"question": "Q", "text": "T"}]}"#,
            &["Q"],
        ),
        (
            r#"{"status": "questions", "questions": ["A?", {"question": "B?"}]}"#,
            &["A?", "B?"],
        ),
        (
            r#"{"status": "questions", "questions": "Which DB?"}"#,
            &["Which DB?"],
        ),
        // Trimmed; empty ones dropped.
        (
            r#"{"status": "questions", "questions": ["  Which DB?\n", "", "   ", {"question": " "}, "B"]}"#,
            &["Which DB?", "B"],
        ),
    ];
    for (text, want) in cases {
        assert_eq!(ok(text).signal, questions(want), "for {text}");
    }
}

#[test]
fn questions_without_a_question_are_refused() {
    let cases: &[(&str, &str)] = &[
        (r#"{"status": "questions"}"#, "needs at least one question"),
        (
            r#"{"status": "questions", "questions": null}"#,
            "needs at least one question",
        ),
        (
            r#"{"status": "questions", "questions": []}"#,
            "needs at least one question",
        ),
        (
            r#"{"status": "questions", "questions": ["", "  "]}"#,
            "needs at least one question",
        ),
        (
            r#"{"status": "questions", "questions": "  "}"#,
            "needs at least one question",
        ),
        (
            r#"{"status": "questions", "questions": 3}"#,
            "\"questions\" is a number; expected a string or an array of strings",
        ),
        (
            r#"{"status": "questions", "questions": {"question": "Q"}}"#,
            "\"questions\" is an object",
        ),
        (
            r#"{"status": "questions", "questions": ["ok", 5]}"#,
            "questions[1] is a number",
        ),
        (
            r#"{"status": "questions", "questions": [{"id": 1}]}"#,
            "questions[0] is an object without a \"question\" string",
        ),
        (
            r#"{"status": "questions", "questions": [{"question": 1}]}"#,
            "questions[0] is an object without a \"question\" string",
        ),
    ];
    for (text, want) in cases {
        let e = err(text);
        assert!(e.contains(want), "for {text}: {e}");
    }
}

#[test]
fn error_message_comes_from_error_result_or_message() {
    let cases: &[(&str, &str)] = &[
        (
            r#"{"status": "error", "error": "no network"}"#,
            "no network",
        ),
        (
            r#"{"status": "error", "error": " no network\n"}"#,
            "no network",
        ),
        (
            r#"{"status": "error", "result": "tests fail"}"#,
            "tests fail",
        ),
        (r#"{"status": "error", "message": "gave up"}"#, "gave up"),
        (
            r#"{"status": "error", "error": "first", "result": "second", "message": "third"}"#,
            "first",
        ),
        // A non-string or empty `error` falls through to the next key.
        (
            r#"{"status": "error", "error": {"code": 1}, "message": "gave up"}"#,
            "gave up",
        ),
        (r#"{"status": "error", "error": "", "result": "r"}"#, "r"),
    ];
    for (text, want) in cases {
        assert_eq!(
            ok(text).signal,
            Signal::Error {
                error: want.to_string()
            },
            "for {text}"
        );
    }
}

#[test]
fn error_without_a_message_is_refused() {
    for text in [
        r#"{"status": "error"}"#,
        r#"{"status": "error", "error": null}"#,
        r#"{"status": "error", "error": "  "}"#,
        r#"{"status": "error", "result": {"x": 1}}"#,
        r#"{"status": "error", "error": 42}"#,
    ] {
        assert_eq!(
            err(text),
            "status \"error\" needs an \"error\" message (a non-empty string)",
            "for {text}"
        );
    }
}

#[test]
fn status_is_required_and_known() {
    let cases: &[(&str, &str)] = &[
        (
            r#"{"status": "finished"}"#,
            r#"unknown "status" "finished"; expected "done", "questions" or "error""#,
        ),
        (
            r#"{"status": ""}"#,
            r#"unknown "status" ""; expected "done", "questions" or "error""#,
        ),
        (
            r#"{"result": "x"}"#,
            r#"the signal file has no "status"; expected "done", "questions" or "error""#,
        ),
        (
            r#"{"status": 1}"#,
            r#""status" is a number, not a string; expected "done", "questions" or "error""#,
        ),
        (
            r#"{"status": null}"#,
            r#""status" is null, not a string; expected "done", "questions" or "error""#,
        ),
    ];
    for (text, want) in cases {
        assert_eq!(err(text), *want, "for {text}");
    }
}

#[test]
fn status_case_and_spaces_are_forgiven() {
    assert_eq!(
        ok(r#"{"status": " Done "}"#).signal,
        Signal::Done { result: None }
    );
    assert_eq!(
        ok(r#"{"status": "ERROR", "error": "x"}"#).signal,
        Signal::Error { error: "x".into() }
    );
}

#[test]
fn unusable_text_is_refused_with_what_is_expected() {
    let cases: &[(&str, &str)] = &[
        (
            "",
            "the signal file is empty (is the agent still writing it?)",
        ),
        ("  \n\t ", "the signal file is empty"),
        ("\u{feff}", "the signal file is empty"),
        // An agent mid-write.
        (
            r#"{"status": "do"#,
            "the signal file is not valid JSON (EOF while parsing",
        ),
        ("done", "the signal file is not valid JSON"),
        (
            r#"{"status": "done"} extra"#,
            "the signal file is not valid JSON",
        ),
        (
            r#"["done"]"#,
            "the signal file holds an array, not a JSON object",
        ),
        (
            r#""done""#,
            "the signal file holds a string, not a JSON object",
        ),
        ("null", "the signal file holds null, not a JSON object"),
        ("42", "the signal file holds a number, not a JSON object"),
    ];
    for (text, want) in cases {
        let e = err(text);
        assert!(e.starts_with(want), "for {text:?}: {e}");
        assert!(
            e.ends_with(EXPECTED),
            "the message should say what is expected: {e}"
        );
        assert!(!e.contains('\n'), "one line: {e:?}");
    }
}

#[test]
fn every_error_is_one_line() {
    for text in [
        "{\n\"status\":\n",
        "{\"status\": \"nope\"}",
        "{\"status\": \"questions\", \"questions\": [\n1\n]}",
        "{\"status\": \"error\"}",
        "{}",
    ] {
        let e = err(text);
        assert!(!e.contains('\n'), "for {text:?}: {e:?}");
    }
}

#[test]
fn leading_bom_and_whitespace_are_fine() {
    let want = Signal::Done {
        result: Some(json!("ok")),
    };
    for text in [
        "\u{feff}{\"status\": \"done\", \"result\": \"ok\"}",
        "\n\n  {\"status\": \"done\", \"result\": \"ok\"}\n",
        "\u{feff}  \r\n{\"status\": \"done\", \"result\": \"ok\"}",
    ] {
        assert_eq!(ok(text).signal, want, "for {text:?}");
    }
}

#[test]
fn signals_serialise_with_a_status_tag() {
    let cases = [
        (
            Signal::Done {
                result: Some(json!({"a": 1})),
            },
            json!({"status": "done", "result": {"a": 1}}),
        ),
        (
            questions(&["Q?"]),
            json!({"status": "questions", "questions": ["Q?"]}),
        ),
        (
            Signal::Error { error: "e".into() },
            json!({"status": "error", "error": "e"}),
        ),
    ];
    for (signal, want) in cases {
        assert_eq!(serde_json::to_value(&signal).unwrap(), want);
        // What herd writes out, it reads back.
        let text = serde_json::to_string(&signal).unwrap();
        assert_eq!(ok(&text).signal, signal);
    }
}
