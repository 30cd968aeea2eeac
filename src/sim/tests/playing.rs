//! Scenarios played in-process with fixed keys and a fixed 120x40 screen.

use std::sync::mpsc;

use super::super::keys::Input;
use super::super::parse::parse_scenario;
use super::super::player::Ending;
use super::*;

const DIALOG_THEN_MARKER: &str = r#"
[[step]]
echo = "claude"
[[step]]
dialog = { command = "touch x.txt", on_reject = "idle" }
[[step]]
marker = "claude"
[[step]]
idle = "claude"
"#;

#[test]
fn accepted_dialog_leads_to_the_marker_and_the_idle_prompt() {
    let played = play(DIALOG_THEN_MARKER, b"x1/exit\r");
    assert_eq!(played.ending, Ending::Exit(0));
    assert!(
        has_row(&played.rows, "● TASK_COMPLETE:t1"),
        "{:#?}",
        played.rows
    );
    assert!(has_row(&played.rows, "  ⎿ \u{a0}Done"));
    assert!(
        has_row(&played.rows, "❯\u{a0}/exit"),
        "typed text is echoed"
    );
    assert!(
        !played
            .rows
            .iter()
            .any(|row| row.contains("Do you want to proceed?")),
        "dialog erased"
    );
    assert!(
        played.output.contains("\x1b[2K\x1b[1A\x1b[2K"),
        "region erased row by row"
    );
}

#[test]
fn a_prompt_that_does_not_ask_for_the_marker_never_gets_it() {
    let scenario = parse_scenario("test.toml", DIALOG_THEN_MARKER).expect("parses");
    let mut context = context(1);
    context.marker_asked = false;
    context.prompt = "Fix issue 2.".to_string();
    context.placeholders.set("prompt", "Fix issue 2.");
    let played = play_in(&scenario, Input::from_bytes(b"1/exit\r"), context);
    assert_eq!(played.ending, Ending::Exit(0));
    assert!(
        has_row(&played.rows, "  ⎿ \u{a0}Done"),
        "{:#?}",
        played.rows
    );
    assert!(
        !played.output.contains(MARKER),
        "printed the marker nobody asked for: {:#?}",
        played.rows
    );
}

#[test]
fn rejected_dialog_idles_without_the_marker() {
    let played = play(DIALOG_THEN_MARKER, b"\x1b\x03\x03");
    assert_eq!(played.ending, Ending::Exit(0));
    assert!(
        has_row(&played.rows, "  ⎿ \u{a0}User rejected the command"),
        "{:#?}",
        played.rows
    );
    assert!(
        !played
            .rows
            .iter()
            .any(|row| row.starts_with("● TASK_COMPLETE"))
    );
    assert!(
        has_row(&played.rows, "  Press Ctrl-C again to exit"),
        "{:#?}",
        played.rows
    );
}

#[test]
fn repeating_dialog_comes_back_after_every_answer() {
    let played = play(
        "[[step]]\ndialog = { command = \"ls\", repeat = 3, gap = 0 }\n[[step]]\nline = \"after\"\n",
        b"1p\r",
    );
    assert_eq!(played.ending, Ending::Exit(0));
    assert_eq!(played.output.matches("Bash command").count(), 3);
    assert!(has_row(&played.rows, "after"));
}

#[test]
fn press_waits_for_its_own_key_only() {
    let played = play(
        "[[step]]\npress = { text = \"Press 1 to continue\", key = \"1\" }\n[[step]]\nmarker = \"plain\"\n",
        b"xy\r1",
    );
    assert_eq!(played.ending, Ending::Exit(0));
    assert!(has_row(&played.rows, MARKER));
    assert!(
        !played.rows.iter().any(|row| row.contains("Press 1")),
        "question erased"
    );
    let unanswered = play(
        "[[step]]\npress = { text = \"press p\", key = \"p\" }\n",
        b"1",
    );
    assert!(matches!(unanswered.ending, Ending::Failed { code: 1, .. }));
}

#[test]
fn queries_use_the_answers_and_give_up_without_them() {
    let played = play_built_in("queries", b"\x1b[7;3R\x1b[?64;1;2c", 1);
    assert_eq!(played.ending, Ending::Exit(0));
    assert!(
        has_row(&played.rows, "cursor at row 7 col 3"),
        "{:#?}",
        played.rows
    );
    assert!(played.output.starts_with("\x1b[6n\x1b[c"));

    let (_sender, silent) = mpsc::channel();
    let scenario = parse_scenario(
        "t.toml",
        "[[step]]\nquery = { device_attributes = true, timeout = 0.05 }\n",
    )
    .expect("parses");
    let played = play_with(&scenario, Input::from_channel(silent), 1);
    assert_eq!(
        played.ending,
        Ending::Failed {
            code: 3,
            message: "error: the terminal did not answer the device attributes query".into()
        }
    );
    let unanswered = play_built_in("queries", b"\x1b[?64c", 1);
    assert_eq!(
        unanswered.ending,
        Ending::Failed {
            code: 3,
            message: "error: the terminal did not answer the cursor position query".into()
        }
    );
}

#[test]
fn flaky_fails_the_first_attempt_only() {
    let first = play_built_in("flaky", b"", 1);
    assert_eq!(first.ending, Ending::Exit(1));
    assert!(has_row(&first.rows, "Error: connection reset by peer"));
    assert!(!has_row(&first.rows, MARKER));
    let second = play_built_in("flaky", b"", 2);
    assert_eq!(second.ending, Ending::Exit(0));
    assert!(has_row(&second.rows, MARKER));
    assert!(has_row(&second.rows, "Attempt 2: connected."));
}

#[test]
fn failures_print_the_real_texts() {
    let auth = play_built_in("auth_exit", b"", 1);
    assert_eq!(auth.ending, Ending::Exit(1));
    assert!(has_row(&auth.rows, "Invalid API key · Please run /login"));
    let quota = play_built_in("quota", b"", 1);
    assert_eq!(quota.ending, Ending::Exit(1));
    assert!(has_row(
        &quota.rows,
        "You've hit your usage limit · resets 3pm (Europe/Berlin)"
    ));
    let crash = play_built_in("crash", b"", 1);
    assert_eq!(crash.ending, Ending::Exit(3));
    assert!(crash.rows.iter().any(|row| row.contains("panicked at")));
    let incomplete = play_built_in("incomplete", b"", 1);
    assert_eq!(incomplete.ending, Ending::Exit(0));
    assert!(!incomplete.output.contains(MARKER));
}

#[test]
fn codex_approval_prints_the_marker_and_waits_at_the_composer() {
    let scenario = "[[step]]\ncodex_header = {}\n[[step]]\ndialog = { style = \"codex\", command = \"ls\" }\n\
                    [[step]]\nmarker = \"codex\"\n[[step]]\nidle = \"codex\"\n";
    let played = play(scenario, b"y\x03\x03");
    assert_eq!(played.ending, Ending::Exit(0));
    assert!(
        has_row(&played.rows, "  >_ OpenAI Codex (v0.169.0)"),
        "{:#?}",
        played.rows
    );
    assert!(has_row(&played.rows, "• TASK_COMPLETE:t1"));
    assert!(has_row(&played.rows, "› Ask Codex to do anything"));
    assert!(
        played
            .rows
            .iter()
            .any(|row| row.starts_with("✔ You approved codex to run ls"))
    );
    assert!(
        played.output.contains("\x1b[?2026h"),
        "codex repaints in synchronized updates"
    );
}

#[test]
fn flood_writes_about_the_requested_size() {
    let played = play("[[step]]\nflood = 0.2\n[[step]]\nmarker = \"plain\"\n", b"");
    let size = played.output.len();
    assert!((200_000..300_000).contains(&size), "{size} bytes");
    assert!(played.output.contains("\x1b[38;5;"), "coloured");
    assert_eq!(played.output.matches(MARKER).count(), 1);
}
