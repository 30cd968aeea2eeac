//! The drawing functions, rendered through vt100 and compared with the captured CLIs.

use super::super::draw::{claude, codex};
use super::super::text;
use super::*;

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
