//! Tests across the simulator's parts: built-in scenarios, drawing checked through a vt100
//! screen, and scenarios played in-process against fixed input.

use std::sync::mpsc;

use super::draw::{claude, codex};
use super::*;

const WIDTH: usize = 120;
const HEIGHT: usize = 40;
const MARKER: &str = "TASK_COMPLETE:t1";
const PROMPT: &str = "Do X. When complete, print exactly: TASK_COMPLETE:t1";

/// The screen rows (right-trimmed) after feeding `bytes` to a terminal of the given size.
fn screen_rows(bytes: &[u8], width: usize, height: usize) -> Vec<String> {
    let size = |value: usize| {
        std::num::NonZeroU16::new(u16::try_from(value).expect("small")).expect("non-zero")
    };
    let mut parser = vt100::Parser::new(size(height), size(width), 0);
    parser.process(bytes);
    parser
        .screen()
        .rows(0, width as u16)
        .map(|row| row.trim_end().to_string())
        .collect()
}

fn rows_of(drawn: &[String], width: usize) -> Vec<String> {
    let mut bytes = String::new();
    for row in drawn {
        bytes.push_str(row);
        bytes.push_str("\x1b[0m\r\n");
    }
    let height = drawn.len() + 1;
    let mut rows = screen_rows(bytes.as_bytes(), width, height);
    rows.truncate(drawn.len());
    rows
}

fn context(attempt: u32) -> Context {
    let mut placeholders = Placeholders::default();
    placeholders.set("marker", MARKER);
    placeholders.set("dir", "demo");
    placeholders.set("attempt", attempt.to_string());
    Context {
        marker: MARKER.to_string(),
        prompt: PROMPT.to_string(),
        attempt,
        cwd: "/home/dev/projects/demo".to_string(),
        placeholders,
    }
}

struct Played {
    ending: Ending,
    output: String,
    rows: Vec<String>,
}

fn play_with(scenario: &Scenario, input: Input, attempt: u32) -> Played {
    let size = Size::Fixed {
        columns: WIDTH,
        rows: HEIGHT,
    };
    let mut player = Player::new(Terminal::new(Vec::new(), size), input, context(attempt));
    let ending = player.play(scenario).expect("writes to memory");
    player.finish().expect("writes to memory");
    let bytes = player.terminal.output().clone();
    Played {
        ending,
        rows: screen_rows(&bytes, WIDTH, HEIGHT),
        output: String::from_utf8_lossy(&bytes).into_owned(),
    }
}

fn play(toml: &str, keys: &[u8]) -> Played {
    let scenario = parse_scenario("test.toml", toml).unwrap_or_else(|error| panic!("{error}"));
    play_with(&scenario, Input::from_bytes(keys), 1)
}

fn play_built_in(name: &str, keys: &[u8], attempt: u32) -> Played {
    let text = builtin::built_in(name).expect("a built-in scenario");
    let scenario = parse_scenario(name, text).unwrap_or_else(|error| panic!("{error}"));
    play_with(&scenario, Input::from_bytes(keys), attempt)
}

fn has_row(rows: &[String], wanted: &str) -> bool {
    rows.iter().any(|row| row.trim_end() == wanted)
}

#[test]
fn every_built_in_scenario_parses_and_has_a_description() {
    for (name, text) in builtin::BUILT_IN {
        let scenario = parse_scenario(name, text).unwrap_or_else(|error| panic!("{error}"));
        assert!(
            !scenario.description.is_empty(),
            "{name} has no description"
        );
    }
}

#[test]
fn spawned_scenarios_are_built_in() {
    for (name, text) in builtin::BUILT_IN {
        let scenario = parse_scenario(name, text).unwrap_or_else(|error| panic!("{error}"));
        for step in &scenario.steps {
            if let Action::Spawn(spawn) = &step.action {
                assert!(builtin::built_in(&spawn.scenario).is_some(), "{name}");
            }
        }
    }
}

#[test]
fn marker_comes_from_the_flag_then_the_environment_then_the_task_id() {
    assert_eq!(resolve_marker(Some("M"), Some("E".into()), Some("t")), "M");
    assert_eq!(resolve_marker(None, Some("E".into()), Some("t")), "E");
    assert_eq!(resolve_marker(None, None, Some("t")), "TASK_COMPLETE:t");
    assert_eq!(resolve_marker(None, None, None), "TASK_COMPLETE:sim");
}

#[test]
fn unknown_names_and_missing_files_are_clear_errors() {
    let unknown = load("no_such_scenario").expect_err("unknown").to_string();
    assert!(unknown.contains("no_such_scenario") && unknown.contains("plain_success"));
    let missing = load("/nonexistent/x.toml")
        .expect_err("missing")
        .to_string();
    assert!(
        missing.starts_with("/nonexistent/x.toml: cannot read"),
        "{missing}"
    );
}

#[test]
fn claude_header_matches_the_captured_box() {
    let expected = [
        "╭─── Claude Code v2.1.197 ─────────────────────────────────────────────────────────────────────────────────────────────╮",
        "│                                                    │ Tips for getting started                                        │",
        "│                    Welcome back!                   │ Run /init to create a CLAUDE.md file with instructions for Cla… │",
        "│                                                    │ ─────────────────────────────────────────────────────────────── │",
        "│                       ▐▛███▜▌                      │ What's new                                                      │",
        "│                      ▝▜█████▛▘                     │ Check the Claude Code changelog for updates                     │",
        "│                        ▘▘ ▝▝                       │                                                                 │",
        "│                                                    │                                                                 │",
        "│     Opus 4.8 (1M context) · API Usage Billing      │                                                                 │",
        "│  /home/dev/projects/demo/claude-m_tool_permission  │                                                                 │",
        "╰──────────────────────────────────────────────────────────────────────────────────────────────────────────────────────╯",
    ];
    let drawn = claude::header(
        WIDTH,
        "2.1.197",
        "Opus 4.8 (1M context) · API Usage Billing",
        "/home/dev/projects/demo/claude-m_tool_permission",
    );
    assert_eq!(rows_of(&drawn, WIDTH), expected);
    assert!(
        drawn[2].contains("\x1b[30Gback!"),
        "words are placed with CSI nG"
    );
}

#[test]
fn claude_header_fits_a_narrow_terminal() {
    let drawn = claude::header(
        80,
        "2.1.197",
        "Opus",
        "/a/very/long/path/that/goes/on/and/on/and/on/for/ever/project",
    );
    for row in rows_of(&drawn, 80) {
        assert!(text::width_of(&row) <= 80, "{row}");
    }
}

#[test]
fn claude_messages_wrap_like_the_capture() {
    let text = "API Error: Repeated 529 Overloaded errors. The API is at capacity — this is usually \
                temporary. Try again in a moment. If it persists, check your inference gateway \
                (127.0.0.1:8787).";
    assert_eq!(
        rows_of(&claude::say(WIDTH, text, 220), WIDTH),
        [
            "● API Error: Repeated 529 Overloaded errors. The API is at capacity — this is usually temporary. Try again in a",
            "  moment. If it persists, check your inference gateway (127.0.0.1:8787).",
        ]
    );
}

#[test]
fn echo_only_puts_the_marker_alone_on_an_indented_row() {
    let rows = rows_of(&claude::echo(WIDTH, PROMPT, Some(MARKER)), WIDTH);
    assert_eq!(
        rows,
        [
            "❯ Do X. When complete, print exactly:",
            "  TASK_COMPLETE:t1"
        ]
    );
    let long_prompt = format!(
        "{} When complete, print exactly: {MARKER} and then stop working on it.",
        "Follow the procedure in the linked document and fix every failing test. ".repeat(3)
    );
    let rows = rows_of(&claude::echo(WIDTH, &long_prompt, Some(MARKER)), WIDTH);
    assert!(has_row(&rows, "  TASK_COMPLETE:t1"), "{rows:#?}");
    assert!(rows.iter().all(|row| text::width_of(row) <= WIDTH));
}

#[test]
fn echo_wraps_with_a_two_column_indent() {
    let prompt = "word ".repeat(40);
    let rows = rows_of(&claude::echo(60, &prompt, None), 60);
    assert!(rows[0].starts_with("❯ word"));
    assert!(
        rows[1..].iter().all(|row| row.starts_with("  word")),
        "{rows:#?}"
    );
}

#[test]
fn dialogs_look_like_the_captures() {
    let region = claude::dialog(
        WIDTH,
        "Bash",
        "touch x.txt",
        "Create a file",
        "Yes, and always allow access to demo/ from this project",
    );
    let rows = rows_of(&region.rows, WIDTH);
    for wanted in [
        "● Bash(touch x.txt)",
        "  ⎿ \u{a0}Waiting…",
        " Bash command",
        "   touch x.txt",
        " Do you want to proceed?",
        " ❯ 1. Yes",
        "   2. Yes, and always allow access to demo/ from this project",
        "   3. No",
        " Esc to cancel · Tab to amend · ctrl+e to explain",
    ] {
        assert!(has_row(&rows, wanted), "{wanted:?} missing from {rows:#?}");
    }
    let rows = rows_of(&codex::dialog(WIDTH, "touch x.txt", "Why").rows, WIDTH);
    for wanted in [
        "  Would you like to run the following command?",
        "  $ touch x.txt",
        "› 1. Yes, proceed (y)",
        "  2. Yes, and don't ask again for commands that start with `touch x.txt` (p)",
        "  3. No, and tell Codex what to do differently (esc)",
        "  Press enter to confirm or esc to cancel",
    ] {
        assert!(has_row(&rows, wanted), "{wanted:?} missing from {rows:#?}");
    }
}

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
