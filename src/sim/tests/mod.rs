//! Tests across the simulator's parts: built-in scenarios and the command line here, drawing
//! checked through a vt100 screen in `drawing`, scenarios played in-process against fixed input
//! in `playing`.

mod drawing;
mod parsing_structured;
mod playing;
mod playing_structured;

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
    placeholders.set("prompt", PROMPT);
    placeholders.set("dir", "demo");
    placeholders.set("attempt", attempt.to_string());
    placeholders.set("session_id", "sim-t1-1");
    Context {
        marker: MARKER.to_string(),
        marker_asked: true,
        prompt: PROMPT.to_string(),
        attempt,
        session_id: "sim-t1-1".to_string(),
        resumed: false,
        signal_file: None,
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
    play_in(scenario, input, context(attempt))
}

fn play_in(scenario: &Scenario, input: Input, context: Context) -> Played {
    let size = Size::Fixed {
        columns: WIDTH,
        rows: HEIGHT,
    };
    let mut player = Player::new(Terminal::new(Vec::new(), size), input, context);
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
fn the_marker_is_asked_for_by_the_prompt_or_by_the_resumed_session() {
    assert!(is_marker_asked(PROMPT, MARKER, false));
    assert!(!is_marker_asked("Fix issue 2.", MARKER, false));
    assert!(!is_marker_asked("Print TASK_COMPLETE:t2", MARKER, false));
    assert!(is_marker_asked("Use Postgres.", MARKER, true));
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
