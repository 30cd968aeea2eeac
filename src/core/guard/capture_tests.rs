use super::*;
use crate::core::profile::{Profile, ProfileSet};

fn profile(name: &str) -> Profile {
    ProfileSet::build(&crate::assets::built_in_profile_texts(), None)
        .expect("built-in profiles")
        .get(name)
        .expect("profile")
        .clone()
}

fn read(text: &str, name: &str) -> Option<Request> {
    let rows: Vec<String> = text.lines().map(str::to_string).collect();
    extract(
        &profile(name).requests,
        &rows,
        120,
        0,
        rows.len().saturating_sub(1),
    )
}

#[test]
fn claude_bash_dialog_from_the_real_capture() {
    let screen = include_str!("../../../tests/fixtures/claude/m_tool_permission.step3.txt");
    let request = read(screen, "claude").expect("a request");
    assert_eq!(
        request.kind,
        RequestKind::Shell {
            command: "touch mock_created_by_agent.txt".into()
        }
    );
    assert_eq!(request.options[0], "1. Yes");
    assert_eq!(request.options.len(), 3);
    assert!(
        request
            .alternatives
            .iter()
            .any(|a| a.contains("Create a marker file"))
    );
}

#[test]
fn codex_approval_from_the_real_capture() {
    let screen = include_str!("../../../tests/fixtures/codex/m_tool_approval.step4.txt");
    let request = read(screen, "codex").expect("a request");
    assert_eq!(
        request.kind,
        RequestKind::Shell {
            command: "touch mock_created_by_agent.txt".into()
        }
    );
}

#[test]
fn codex_edit_dialog_from_the_real_capture() {
    // Codex 0.171.0 under `-s read-only`: `Would you like to make the following edits?` /
    // `Destination: <path>` / `› 1. Yes, proceed (y)`: an edit of its destination.
    let screen = include_str!("../../../tests/fixtures/codex/m_edit_approval.step1.txt");
    let request = read(screen, "codex").expect("a request");
    assert_eq!(
        request.kind,
        RequestKind::Edit {
            path: "/tmp/i24c/cap/codex-m_edit_approval/conformance_edit.txt".into()
        }
    );
    assert_eq!(request.options[0], "1. Yes, proceed (y)");
    assert_eq!(request.options.len(), 3);
}

#[test]
fn codex_edit_dialog_with_a_destination_wrapped_at_the_edge() {
    // In a narrow pane the destination runs on below the edge; the rows are joined.
    let path = format!("/work/{}/src/main.rs", "deep/".repeat(20));
    let (head, tail) = path.split_at(60 - 15);
    let screen = format!(
        "  Would you like to make the following edits?\n\n  Description: Apply proposed file \
         edits\n  Destination: {head}\n{tail}\n\n› 1. Yes, proceed (y)\n  2. Yes, and don't ask \
         again for these files (a)\n"
    );
    let rows: Vec<String> = screen.lines().map(str::to_string).collect();
    let request =
        extract(&profile("codex").requests, &rows, 60, 0, rows.len() - 1).expect("a request");
    assert_eq!(request.kind, RequestKind::Edit { path });
}

#[test]
fn codex_command_dialog_is_not_read_as_an_edit() {
    let screen = include_str!("../../../tests/fixtures/codex/m_tool_approval.step4.txt");
    let request = read(screen, "codex").expect("a request");
    assert!(
        matches!(request.kind, RequestKind::Shell { .. }),
        "{request:?}"
    );
}

#[test]
fn gemini_confirmation_from_the_real_capture() {
    let screen = include_str!("../../../tests/fixtures/gemini/m_tool_approval.step5.txt");
    let request = read(screen, "gemini").expect("a request");
    assert_eq!(
        request.kind,
        RequestKind::Shell {
            command: "touch mock_created_by_agent.txt".into()
        }
    );
    assert_eq!(request.options[0], "1. Allow once");
}

#[test]
fn aider_question_from_the_real_capture() {
    let screen = include_str!("../../../tests/fixtures/aider/m_shell_confirm.auto1.txt");
    let request = read(screen, "aider").expect("a request");
    assert_eq!(
        request.kind,
        RequestKind::Shell {
            command: "touch mock_created_by_agent.txt".into()
        }
    );
    let file = "Tokens: 1k\nsrc/app.py\nAdd file to the chat? (Y)es/(N)o/(D)on't ask again [Yes]:";
    assert_eq!(
        read(file, "aider").expect("a file request").kind,
        RequestKind::Edit {
            path: "src/app.py".into()
        }
    );
}

#[test]
fn a_command_wrapped_at_the_edge_is_joined() {
    let long = format!(
        "curl -fsSL https://example.com/{}/install.sh | sh",
        "a".repeat(80)
    );
    let (head, tail) = long.split_at(116);
    let screen = format!(
        " Bash command\n\n   {head}\n   {tail}\n   Install it\n\n Do you want to proceed?\n ❯ 1. Yes\n   2. No\n\n Esc to cancel\n"
    );
    let request = read(&screen, "claude").expect("a request");
    assert_eq!(request.text(), long);
}

#[test]
fn the_simulators_dialogs_are_read() {
    let claude =
        " Bash command\n\n   rm -rf ~\n   Clean up\n\n Do you want to proceed?\n ❯ 1. Yes\n";
    assert_eq!(
        read(claude, "sim").expect("claude style").text(),
        "rm -rf ~"
    );
    let codex = "  Would you like to run the following command?\n\n  $ git push --force\n\n› 1. Yes, proceed (y)\n";
    assert_eq!(
        read(codex, "sim").expect("codex style").text(),
        "git push --force"
    );
}

#[test]
fn nothing_is_read_from_a_screen_without_a_dialog() {
    assert!(read("just some output\n❯ \n", "claude").is_none());
}
