//! Structured output played in-process: stream-json lines, raw bytes, the signal file, and
//! resumed sessions.

use std::path::Path;

use serde_json::{Value, json};

use super::super::keys::Input;
use super::super::parse::parse_scenario;
use super::super::player::Ending;
use super::*;

/// A context for attempt 1; `resume` makes it a resumed session with that id and prompt.
fn structured_context(signal_file: Option<&Path>, resume: Option<(&str, &str)>) -> Context {
    let mut context = context(1);
    context.signal_file = signal_file.map(Path::to_path_buf);
    if let Some((session_id, prompt)) = resume {
        context.resumed = true;
        context.session_id = session_id.to_string();
        context.prompt = prompt.to_string();
        context.placeholders.set("session_id", session_id);
        context.placeholders.set("prompt", prompt);
    }
    context
}

fn play_scenario(name_or_toml: &str, keys: &[u8], context: Context) -> Played {
    let scenario = match builtin::built_in(name_or_toml) {
        Some(text) => parse_scenario(name_or_toml, text),
        None => parse_scenario("test.toml", name_or_toml),
    }
    .unwrap_or_else(|error| panic!("{error}"));
    play_in(&scenario, Input::from_bytes(keys), context)
}

/// Every output line parsed as JSON; the output must end with a newline.
fn events(played: &Played) -> Vec<Value> {
    assert!(played.output.ends_with('\n'), "{:?}", played.output);
    played
        .output
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|error| panic!("{error}: {line}")))
        .collect()
}

fn read(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).expect("the signal file was written");
    serde_json::from_str(&text).unwrap_or_else(|error| panic!("{error}: {text}"))
}

#[test]
fn json_success_prints_only_json_lines_ending_in_a_successful_result() {
    let played = play_scenario("json_success", b"", structured_context(None, None));
    assert_eq!(played.ending, Ending::Exit(0));
    assert!(!played.output.contains('\r') && !played.output.contains('\x1b'));
    let events = events(&played);
    let kinds: Vec<&str> = events
        .iter()
        .map(|event| event["type"].as_str().expect("type"))
        .collect();
    assert_eq!(
        kinds,
        [
            "system",
            "assistant",
            "assistant",
            "user",
            "assistant",
            "result"
        ]
    );
    assert_eq!(events[4]["message"]["content"][0]["text"], MARKER);
    let result = &events[5];
    assert_eq!(result["result"], format!("Done.\n{MARKER}"));
    assert_eq!(result["is_error"], false);
    assert_eq!(result["total_cost_usd"], 0.0123);
    assert_eq!(result["num_turns"], 2);
    assert!(events.iter().all(|event| event["session_id"] == "sim-t1-1"));
}

#[test]
fn resuming_plays_other_steps_under_the_given_session() {
    let fresh = play_scenario("json_resume", b"", structured_context(None, None));
    assert_eq!(fresh.ending, Ending::Exit(1));
    let fresh_events = events(&fresh);
    assert_eq!(
        fresh_events.last(),
        Some(
            &json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})
        )
    );
    assert!(!fresh_events.iter().any(|event| event["type"] == "result"));

    let answer = "use \"Postgres\"\nand {marker} ✓";
    let resumed = play_scenario(
        "json_resume",
        b"",
        structured_context(None, Some(("abc-123", answer))),
    );
    assert_eq!(resumed.ending, Ending::Exit(0));
    let events = events(&resumed);
    assert_eq!(events[0]["subtype"], "init");
    assert_eq!(events[0]["session_id"], "abc-123");
    assert_eq!(
        events[1]["message"]["content"][0]["text"],
        format!("Resumed session abc-123: {answer}"),
        "the prompt is filled in once, exactly"
    );
    assert_eq!(events[2]["type"], "result");
    assert_eq!(events[2]["result"], MARKER);
    assert!(!events.iter().any(|event| event["type"] == "error"));
}

#[test]
fn raw_writes_its_bytes_unchanged() {
    let played = play_scenario(
        "[[step]]\njson_say = \"a\"\n[[step]]\nraw = '{marker} {\"x'\n",
        b"",
        structured_context(None, None),
    );
    assert!(
        played.output.ends_with("\n{marker} {\"x"),
        "{:?}",
        played.output
    );
}

#[test]
fn signal_writes_the_file_per_status() {
    let folder = tempfile::tempdir().expect("temp dir");
    let path = folder.path().join("signal.json");
    let done = play_scenario(
        "signal_done",
        b"/exit\r",
        structured_context(Some(&path), None),
    );
    assert_eq!(done.ending, Ending::Exit(0));
    assert_eq!(
        read(&path),
        json!({"status": "done", "result": "Fixed the failing test; all tests pass.", "session_id": "sim-t1-1"})
    );
    let error = play_scenario("signal_error", b"", structured_context(Some(&path), None));
    assert_eq!(error.ending, Ending::Exit(0));
    assert_eq!(read(&path)["status"], "error");
    assert_eq!(read(&path)["error"], "cannot reproduce the bug");

    let asking = play_scenario(
        "signal_questions",
        b"\x04",
        structured_context(Some(&path), None),
    );
    assert_eq!(asking.ending, Ending::Exit(0));
    assert_eq!(
        read(&path),
        json!({"status": "questions", "questions": ["Which database should I use?", "May I drop the old table?"], "session_id": "sim-t1-1"})
    );
    assert!(
        has_row(&asking.rows, "  ? for shortcuts"),
        "idles at the prompt: {:#?}",
        asking.rows
    );
    let answered = play_scenario(
        "signal_questions",
        b"",
        structured_context(Some(&path), Some(("s-9", "Postgres; yes"))),
    );
    assert_eq!(answered.ending, Ending::Exit(0));
    assert_eq!(
        read(&path),
        json!({"status": "done", "result": "answered: Postgres; yes", "session_id": "s-9"})
    );
    assert!(
        has_row(&answered.rows, "● Thanks: Postgres; yes"),
        "{:#?}",
        answered.rows
    );

    play_scenario(
        "[[step]]\nsignal = { text = \"not json {\" }\n",
        b"",
        structured_context(Some(&path), None),
    );
    assert_eq!(std::fs::read_to_string(&path).expect("read"), "not json {");
}

#[test]
fn a_signal_without_a_file_is_reported_on_screen_and_play_goes_on() {
    let played = play_scenario(
        "[[step]]\nsignal = \"done\"\n[[step]]\nline = \"after\"\n",
        b"",
        structured_context(None, None),
    );
    assert_eq!(played.ending, Ending::Exit(0));
    assert!(has_row(
        &played.rows,
        "herd sim: HERD_SIGNAL_FILE is not set"
    ));
    assert!(has_row(&played.rows, "after"));

    let folder = tempfile::tempdir().expect("temp dir");
    let unwritable = folder.path().join("missing/signal.json");
    let played = play_scenario(
        "[[step]]\nsignal = \"done\"\n[[step]]\nline = \"after\"\n",
        b"",
        structured_context(Some(&unwritable), None),
    );
    assert!(
        played
            .rows
            .iter()
            .any(|row| row.starts_with("herd sim: cannot write the signal file")),
        "{:#?}",
        played.rows
    );
    assert!(has_row(&played.rows, "after"));
}
