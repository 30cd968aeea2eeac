use super::*;

fn error_of(text: &str) -> ScenarioError {
    match parse_scenario("bad.toml", text) {
        Ok(scenario) => panic!("expected an error, got {scenario:?}"),
        Err(error) => error,
    }
}

#[test]
fn shorthand_values_fill_the_main_field() {
    let scenario = parse_scenario(
        "t.toml",
        "[[step]]\necho = \"codex\"\n[[step]]\nsay = \"hi\"\nwhen_attempt_below = 2\n\
         [[step]]\nsleep = 1\n[[step]]\nhang = true\n",
    )
    .expect("parses");
    assert_eq!(scenario.steps.len(), 4);
    assert!(
        matches!(&scenario.steps[0].action, Action::Echo(echo) if echo.style == crate::sim::scenario::Style::Codex)
    );
    assert!(matches!(&scenario.steps[1].action, Action::Say(say) if say.text == "hi"));
    assert_eq!(scenario.steps[1].attempts.below, Some(2));
    assert!(scenario.steps[1].attempts.includes(1));
    assert!(!scenario.steps[1].attempts.includes(2));
    assert!(matches!(scenario.steps[2].action, Action::Sleep(s) if s == 1.0));
}

#[test]
fn unknown_action_names_the_file_line_and_step() {
    let error = error_of("description = \"x\"\n\n[[step]]\nsleep = 1\n\n[[step]]\nslep = 2\n");
    assert_eq!(error.origin, "bad.toml");
    assert_eq!(
        error.line,
        Some(6),
        "the line of the step's [[step]] header"
    );
    let shown = error.to_string();
    assert!(
        shown.starts_with("bad.toml:6: step 2: unknown action `slep`"),
        "{shown}"
    );
    assert!(shown.contains("sleep"), "{shown}");
}

#[test]
fn unknown_field_is_named() {
    let shown = error_of("[[step]]\ndialog = { comand = \"ls\" }\n").to_string();
    assert!(shown.contains("step 1: `dialog`"), "{shown}");
    assert!(shown.contains("comand"), "{shown}");
}

#[test]
fn two_actions_in_one_step_are_refused() {
    let shown = error_of("[[step]]\nsleep = 1\nexit = 0\n").to_string();
    assert!(shown.contains("one action per step"), "{shown}");
}

#[test]
fn range_checks_explain_themselves() {
    assert!(
        error_of("[[step]]\nexit = 300\n")
            .to_string()
            .contains("outside 0..=255")
    );
    assert!(
        error_of("[[step]]\nquery = {}\n")
            .to_string()
            .contains("ask for something")
    );
    assert!(
        error_of("[[step]]\nretry = { delays = [] }\n")
            .to_string()
            .contains("delays")
    );
    assert!(
        error_of("[[step]]\nhang = false\n")
            .to_string()
            .contains("= true")
    );
    assert!(
        error_of("[[step]]\nsleep = -1\n")
            .to_string()
            .contains(">= 0")
    );
    let repeat = error_of("[[step]]\ndialog = { command = \"ls\", repeat = \"often\" }\n");
    assert!(repeat.to_string().contains("forever"), "{repeat}");
    let attempt = error_of("[[step]]\nsleep = 1\nwhen_attempt_below = 0\n");
    assert!(
        attempt.to_string().contains("when_attempt_below"),
        "{attempt}"
    );
}

#[test]
fn syntax_errors_and_empty_files_name_the_file() {
    let syntax = error_of("[[step]\nsleep = 1\n");
    assert_eq!(syntax.origin, "bad.toml");
    assert_eq!(syntax.line, Some(1));
    assert!(
        error_of("description = \"x\"\n")
            .to_string()
            .contains("no steps")
    );
    assert!(
        error_of("descripton = \"x\"\n")
            .to_string()
            .contains("descripton")
    );
}

#[test]
fn dialog_repeat_forever_parses() {
    let scenario = parse_scenario(
        "t.toml",
        "[[step]]\ndialog = { command = \"ls\", repeat = \"forever\" }\n",
    )
    .expect("parses");
    assert!(
        matches!(&scenario.steps[0].action, Action::Dialog(d) if d.repeat == Some(Repeat::Forever))
    );
}
