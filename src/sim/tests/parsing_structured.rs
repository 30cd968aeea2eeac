//! Parsing the structured-output steps (`json_*`, `raw`, `signal`) and `when_resumed`.

use super::super::structured::SignalStatus;
use super::*;

fn only_step(toml: &str) -> scenario::Step {
    let scenario = parse_scenario("t.toml", toml).unwrap_or_else(|error| panic!("{error}"));
    assert_eq!(scenario.steps.len(), 1);
    scenario.steps.into_iter().next().expect("one step")
}

fn only_action(toml: &str) -> Action {
    only_step(toml).action
}

fn error_of(toml: &str) -> String {
    match parse_scenario("bad.toml", toml) {
        Ok(scenario) => panic!("expected an error, got {scenario:?}"),
        Err(error) => error.to_string(),
    }
}

#[test]
fn json_steps_take_their_fields_and_defaults() {
    let Action::JsonInit(init) = only_action("[[step]]\njson_init = {}\n") else {
        panic!("json_init");
    };
    assert_eq!(init.model, "claude-opus-4-8[1m]");
    let Action::JsonInit(init) = only_action("[[step]]\njson_init = \"claude-haiku-4-5\"\n") else {
        panic!("json_init shorthand");
    };
    assert_eq!(init.model, "claude-haiku-4-5");

    let Action::JsonSay(say) = only_action("[[step]]\njson_say = \"hi {marker}\"\n") else {
        panic!("json_say");
    };
    assert_eq!(say.text, "hi {marker}");

    let Action::JsonTool(tool) = only_action(
        "[[step]]\njson_tool = { name = \"Read\", command = \"cat a\", result = \"x\", \
         is_error = true, description = \"d\" }\n",
    ) else {
        panic!("json_tool");
    };
    assert_eq!(
        (
            tool.name.as_str(),
            tool.command.as_str(),
            tool.result.as_str()
        ),
        ("Read", "cat a", "x")
    );
    assert!(tool.is_error);
    assert_eq!(tool.description.as_deref(), Some("d"));
    let Action::JsonTool(tool) = only_action("[[step]]\njson_tool = \"ls\"\n") else {
        panic!("json_tool shorthand");
    };
    assert_eq!((tool.name.as_str(), tool.command.as_str()), ("Bash", "ls"));
    assert!(!tool.is_error);

    let Action::JsonError(error) = only_action("[[step]]\njson_error = \"Overloaded\"\n") else {
        panic!("json_error");
    };
    assert_eq!(
        (error.kind.as_str(), error.message.as_str()),
        ("api_error", "Overloaded")
    );
    let Action::JsonError(error) = only_action(
        "[[step]]\njson_error = { type = \"overloaded_error\", message = \"Overloaded\" }\n",
    ) else {
        panic!("json_error table");
    };
    assert_eq!(error.kind, "overloaded_error");
}

#[test]
fn json_result_reads_every_field() {
    let Action::JsonResult(result) = only_action(
        "[[step]]\njson_result = { text = \"Done.\\n{marker}\", is_error = true, \
         subtype = \"error_max_turns\", cost_usd = 0.0123, turns = 2, input_tokens = 1200, \
         output_tokens = 340, cache_read_tokens = 5, api_error_status = 429, \
         denials = [{ tool = \"Bash\", command = \"touch x\" }, { command = \"rm y\" }], \
         assistant_error = \"rate_limit\" }\n",
    ) else {
        panic!("json_result");
    };
    assert_eq!(result.text, "Done.\n{marker}");
    assert!(result.is_error);
    assert_eq!(result.subtype, "error_max_turns");
    assert_eq!(result.cost_usd, 0.0123);
    assert_eq!(
        (
            result.turns,
            result.input_tokens,
            result.output_tokens,
            result.cache_read_tokens
        ),
        (2, 1200, 340, 5)
    );
    assert_eq!(result.api_error_status, Some(429));
    assert_eq!(result.denials.len(), 2);
    assert_eq!(result.denials[1].tool, "Bash", "the default tool");
    assert_eq!(result.denials[1].command, "rm y");
    assert_eq!(result.assistant_error.as_deref(), Some("rate_limit"));

    let Action::JsonResult(plain) = only_action("[[step]]\njson_result = \"ok\"\n") else {
        panic!("json_result shorthand");
    };
    assert_eq!(plain.text, "ok");
    assert!(!plain.is_error);
    assert_eq!((plain.subtype.as_str(), plain.turns), ("success", 1));
    assert!(plain.denials.is_empty() && plain.api_error_status.is_none());
}

#[test]
fn raw_keeps_its_text_exactly() {
    let Action::Raw(text) =
        only_action("[[step]]\nraw = '{\"type\":\"result\",\"subtype\":\"succ'\n")
    else {
        panic!("raw");
    };
    assert_eq!(text, "{\"type\":\"result\",\"subtype\":\"succ");
    assert!(error_of("[[step]]\nraw = 3\n").contains("step 1: `raw`"));
}

#[test]
fn signal_steps_per_status() {
    let Action::Signal(done) =
        only_action("[[step]]\nsignal = { status = \"done\", result = \"r\" }\n")
    else {
        panic!("signal");
    };
    assert_eq!(done.status, Some(SignalStatus::Done));
    assert_eq!(done.result.as_deref(), Some("r"));
    let Action::Signal(shorthand) = only_action("[[step]]\nsignal = \"done\"\n") else {
        panic!("signal shorthand");
    };
    assert_eq!(shorthand.status, Some(SignalStatus::Done));
    let Action::Signal(questions) = only_action(
        "[[step]]\nsignal = { status = \"questions\", questions = [\"A?\", \"B?\"], \
         session_id = \"s1\" }\n",
    ) else {
        panic!("signal questions");
    };
    assert_eq!(questions.questions, Some(vec!["A?".into(), "B?".into()]));
    assert_eq!(questions.session_id.as_deref(), Some("s1"));
    let Action::Signal(error) =
        only_action("[[step]]\nsignal = { status = \"error\", error = \"e\" }\n")
    else {
        panic!("signal error");
    };
    assert_eq!(error.error.as_deref(), Some("e"));
    let Action::Signal(text) = only_action("[[step]]\nsignal = { text = \"not json {\" }\n") else {
        panic!("signal text");
    };
    assert_eq!(text.text.as_deref(), Some("not json {"));
    assert_eq!(text.status, None);
}

#[test]
fn when_resumed_is_a_condition_on_any_step() {
    let resumed = only_step("[[step]]\nsay = \"x\"\nwhen_resumed = true\nwhen_attempt_below = 3\n");
    assert_eq!(resumed.resumed, Some(true));
    assert!(resumed.plays(1, true));
    assert!(!resumed.plays(1, false));
    assert!(!resumed.plays(3, true), "the attempt condition still holds");
    let fresh = only_step("[[step]]\njson_say = \"x\"\nwhen_resumed = false\n");
    assert!(fresh.plays(1, false) && !fresh.plays(1, true));
    let always = only_step("[[step]]\nexit = 0\n");
    assert_eq!(always.resumed, None);
    assert!(always.plays(1, false) && always.plays(7, true));
}

#[test]
fn bad_values_are_explained() {
    let cases = [
        (
            "[[step]]\nsay = \"x\"\nwhen_resumed = \"yes\"\n",
            "`when_resumed` must be true or false",
        ),
        (
            "[[step]]\njson_result = { subtype = \"great\" }\n",
            "subtype \"great\" is not one of success",
        ),
        (
            "[[step]]\njson_result = { cost_usd = -1.0 }\n",
            "cost_usd -1 must be >= 0",
        ),
        (
            "[[step]]\njson_result = { api_error_status = 42 }\n",
            "api_error_status 42 is not an HTTP status",
        ),
        (
            "[[step]]\njson_result = { assistant_error = \"\" }\n",
            "assistant_error must not be empty",
        ),
        (
            "[[step]]\njson_result = { denials = [{ tool = \"Bash\", command = \"\" }] }\n",
            "the Bash denial has an empty command",
        ),
        ("[[step]]\njson_result = { txt = \"x\" }\n", "txt"),
        (
            "[[step]]\njson_result = { turns = -1 }\n",
            "step 1: `json_result`",
        ),
        (
            "[[step]]\njson_tool = { result = \"x\" }\n",
            "missing field `command`",
        ),
        (
            "[[step]]\njson_tool = { name = \" \", command = \"ls\" }\n",
            "name must not be empty",
        ),
        (
            "[[step]]\njson_error = { type = \"\", message = \"m\" }\n",
            "type must not be empty",
        ),
        (
            "[[step]]\njson_error = { type = \"x\" }\n",
            "missing field `message`",
        ),
        ("[[step]]\njson_init = { modle = \"x\" }\n", "modle"),
        (
            "[[step]]\nsignal = \"finished\"\n",
            "unknown variant `finished`",
        ),
        ("[[step]]\nsignal = {}\n", "give a status"),
        (
            "[[step]]\nsignal = { status = \"questions\" }\n",
            "needs questions",
        ),
        (
            "[[step]]\nsignal = { status = \"questions\", questions = [] }\n",
            "needs questions",
        ),
        ("[[step]]\nsignal = { status = \"error\" }\n", "needs error"),
        (
            "[[step]]\nsignal = { status = \"done\", error = \"x\" }\n",
            "`error` does not belong to status done",
        ),
        (
            "[[step]]\nsignal = { status = \"error\", error = \"x\", questions = [\"q\"] }\n",
            "`questions` does not belong to status error",
        ),
        (
            "[[step]]\nsignal = { text = \"x\", status = \"done\" }\n",
            "leave out `status`",
        ),
    ];
    for (toml, wanted) in cases {
        let shown = error_of(toml);
        assert!(shown.contains(wanted), "{toml:?}: {shown}");
        assert!(shown.starts_with("bad.toml:1: step 1: "), "{shown}");
    }
}

#[test]
fn unknown_actions_list_the_new_ones() {
    let shown = error_of("[[step]]\njson_sai = \"x\"\n");
    for name in [
        "json_init",
        "json_say",
        "json_tool",
        "json_result",
        "json_error",
        "raw",
    ] {
        assert!(shown.contains(name), "{shown}");
    }
    assert!(
        shown.contains("signal") && shown.contains("when_resumed"),
        "{shown}"
    );
}
