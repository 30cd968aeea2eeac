use super::*;
use crate::core::taskfile::TaskFile;

fn profiles() -> ProfileSet {
    let text = r#"
[profiles.a]
command = ["agent", "--prompt", "{rendered_prompt}", "--id={task_id}"]
env = { A_HOME = "/tmp/{task_id}" }
[profiles.bare]
command = []
"#;
    ProfileSet::build(&[text], None).unwrap()
}

fn task(json: &str) -> TaskSpec {
    let text = format!("{{\"tasks\": [{json}]}}");
    TaskFile::parse(&text).unwrap().tasks()[0].clone()
}

fn tpl(t: &TaskSpec) -> PromptSource {
    PromptSource::Template(t.prompt_template.clone().unwrap())
}

fn text(template: &str) -> PromptSource {
    PromptSource::Template(template.to_string())
}

/// The instruction herd adds to a prompt of task `t` that does not name its marker.
const ADDED: &str = "\n\nWhen complete, print exactly: TASK_COMPLETE:t";

fn ctx() -> LaunchContext<'static> {
    LaunchContext {
        base_dir: Path::new("/base"),
        run_id: Some("r1"),
        attempt: 2,
        run_dir: Path::new("/base/runs/t"),
        cwd: None,
        hook_settings: None,
    }
}

#[test]
fn renders_prompt_marker_command_and_env() {
    let p = profiles();
    let t = task(
        r#"{"task_id": "t", "agent": "a", "inputs": {"doc": "D", "n": 3}, "prompt_template": "Do {doc} x{n} #{attempt} then print {completion_marker}"}"#,
    );
    let plan = render_launch(&t, p.get("a").unwrap(), &tpl(&t), None, &ctx()).unwrap();
    assert_eq!(plan.prompt, "Do D x3 #2 then print TASK_COMPLETE:t");
    assert_eq!(
        plan.argv,
        [
            "agent",
            "--prompt",
            "Do D x3 #2 then print TASK_COMPLETE:t",
            "--id=t"
        ]
    );
    assert_eq!(plan.marker, "TASK_COMPLETE:t");
    assert_eq!(plan.env["A_HOME"], "/tmp/t");
    assert_eq!(plan.env["HERD_ATTEMPT"], "2");
    assert_eq!(plan.cwd, Path::new("/base"));
}

#[test]
fn a_retry_carries_the_previous_failure() {
    let p = profiles();
    let json = r#"{"task_id": "t", "agent": "a", "prompt_template": "Fix it.", "attempts": 1,
        "result": {"failure_summary": "The previous attempt failed. error[E0308] at src/main.rs:4"}}"#;
    let t = task(json);
    let first = LaunchContext {
        attempt: 1,
        ..ctx()
    };
    let plan = render_launch(&t, p.get("a").unwrap(), &text("Fix it."), None, &first).unwrap();
    assert_eq!(plan.prompt, format!("Fix it.{ADDED}"));
    let plan = render_launch(&t, p.get("a").unwrap(), &text("Fix it."), None, &ctx()).unwrap();
    assert_eq!(
        plan.prompt,
        format!("Fix it.\n\nThe previous attempt failed. error[E0308] at src/main.rs:4{ADDED}")
    );
    let placed = "Fix it. Last time: {previous_failure}";
    let plan = render_launch(&t, p.get("a").unwrap(), &text(placed), None, &ctx()).unwrap();
    assert_eq!(
        plan.prompt,
        format!(
            "Fix it. Last time: The previous attempt failed. error[E0308] at src/main.rs:4{ADDED}"
        )
    );
    let plan = render_launch(&t, p.get("a").unwrap(), &text(placed), None, &first).unwrap();
    assert_eq!(plan.prompt, format!("Fix it. Last time: {ADDED}"));
}

#[test]
fn missing_placeholders_are_named() {
    let p = profiles();
    let t = task(r#"{"task_id": "t", "agent": "a", "prompt_template": "Do {doc} and {other}"}"#);
    let err = render_launch(&t, p.get("a").unwrap(), &tpl(&t), None, &ctx())
        .unwrap_err()
        .to_string();
    assert_eq!(
        err,
        "prompt_template: no value for {doc}, {other}; add them to \"inputs\" (or write {{ }} for literal braces)"
    );
}

#[test]
fn a_task_command_replaces_the_profile_and_bare_profiles_need_one() {
    let p = profiles();
    let t = task(
        r#"{"task_id": "t", "agent": "bare", "prompt_template": "x", "command": ["./go", "{rendered_prompt}"]}"#,
    );
    let plan = render_launch(&t, p.get("bare").unwrap(), &text("x"), None, &ctx()).unwrap();
    assert_eq!(plan.argv, ["./go".to_string(), format!("x{ADDED}")]);
    let t = task(r#"{"task_id": "t", "agent": "bare", "prompt_template": "x"}"#);
    assert!(
        render_launch(&t, p.get("bare").unwrap(), &text("x"), None, &ctx())
            .unwrap_err()
            .to_string()
            .contains("has no command")
    );
}

#[test]
fn unknown_agents_missing_folders_and_programs_are_config_errors() {
    let p = profiles();
    let t = task(r#"{"task_id": "t", "agent": "nope", "prompt_template": "x"}"#);
    assert!(
        prepare(&t, &p, &ctx())
            .unwrap_err()
            .to_string()
            .contains("not a known profile; use one of a, bare")
    );
    let t = task(
        r#"{"task_id": "t", "agent": "a", "prompt_template": "x", "cwd": "/definitely/not/here"}"#,
    );
    assert!(
        prepare(&t, &p, &ctx())
            .unwrap_err()
            .to_string()
            .contains("does not exist")
    );
    let dir = tempfile::tempdir().unwrap();
    let c = LaunchContext {
        base_dir: dir.path(),
        ..ctx()
    };
    let t = task(r#"{"task_id": "t", "agent": "a", "prompt_template": "x"}"#);
    assert!(
        prepare(&t, &p, &c)
            .unwrap_err()
            .to_string()
            .contains("command \"agent\" is not installed")
    );
}

#[test]
fn the_program_is_looked_up_on_the_tasks_own_path() {
    use std::os::unix::fs::PermissionsExt;
    let p = profiles();
    let bin = tempfile::tempdir().unwrap();
    let program = bin.path().join("agent");
    std::fs::write(&program, "#!/bin/sh\n").unwrap();
    std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o755)).unwrap();
    let json = format!(
        r#"{{"task_id": "t", "agent": "a", "prompt_template": "x", "env": {{"PATH": "{}"}}}}"#,
        bin.path().display()
    );
    let c = LaunchContext {
        base_dir: bin.path(),
        ..ctx()
    };
    let plan = prepare(&task(&json), &p, &c).unwrap();
    assert_eq!(plan.argv[0], program.display().to_string());
}

#[test]
fn a_signal_file_task_gets_the_path_and_how_to_write_it() {
    let p = profiles();
    let t = task(
        r#"{"task_id": "t", "agent": "a", "prompt_template": "Fix it.", "completion": "signal_file"}"#,
    );
    let plan = render_launch(&t, p.get("a").unwrap(), &tpl(&t), None, &ctx()).unwrap();
    let path = "/base/runs/t/attempt_2.signal.json";
    assert_eq!(plan.env["HERD_SIGNAL_FILE"], path);
    assert_eq!(plan.signal_file.as_deref(), Some(Path::new(path)));
    assert!(plan.prompt.starts_with(
        "Fix it.\n\nWhen you finish, write a JSON file at /base/runs/t/attempt_2.signal.json"
    ));
    assert!(!plan.prompt.contains("TASK_COMPLETE"), "{}", plan.prompt);
    assert_eq!(
        plan.added_instruction,
        Some(AddedInstruction::SignalFile(path.into()))
    );
    assert!(!plan.completion.marker_required);
    let placed = "Fix it, then report to {signal_file}.";
    let plan = render_launch(&t, p.get("a").unwrap(), &text(placed), None, &ctx()).unwrap();
    assert_eq!(plan.prompt, format!("Fix it, then report to {path}."));
}

#[test]
fn a_command_file_prompt_is_not_templated_and_learns_the_marker() {
    let p = profiles();
    let t = task(r#"{"task_id": "t", "agent": "a", "prompt_file": "x.md"}"#);
    let source = PromptSource::CommandFile("Keep {this} and $HOME.".into());
    let plan = render_launch(&t, p.get("a").unwrap(), &source, None, &ctx()).unwrap();
    assert_eq!(plan.prompt, format!("Keep {{this}} and $HOME.{ADDED}"));
    assert_eq!(plan.argv[2], plan.prompt);
}

#[test]
fn a_natural_prompt_gets_the_marker_instruction_once_after_everything() {
    let p = profiles();
    let json = r#"{"task_id": "t", "agent": "a", "prompt_template": "Fix issue 2.",
        "resume_message": "use sqlite", "attempts": 1,
        "result": {"failure_summary": "exit code 1"}}"#;
    let t = task(json);
    let plan = render_launch(&t, p.get("a").unwrap(), &tpl(&t), None, &ctx()).unwrap();
    assert_eq!(
        plan.prompt,
        format!("Fix issue 2.\n\nexit code 1\n\nA message from the operator:\nuse sqlite{ADDED}")
    );
    assert_eq!(plan.added_instruction, Some(AddedInstruction::Marker));
    assert_eq!(plan.prompt.matches("TASK_COMPLETE:t").count(), 1);
}

#[test]
fn a_prompt_that_names_its_marker_or_opts_out_is_left_as_written() {
    let p = profiles();
    let a = p.get("a").unwrap();
    // (template, extra fields, the prompt sent)
    let table = [
        (
            "Fix it, then say {completion_marker}.",
            "",
            "Fix it, then say TASK_COMPLETE:t.",
        ),
        (
            "Fix it, then say TASK_COMPLETE:{task_id}.",
            "",
            "Fix it, then say TASK_COMPLETE:t.",
        ),
        (
            "Fix it, then say TASK_COMPLETE:t.",
            "",
            "Fix it, then say TASK_COMPLETE:t.",
        ),
        (
            "Fix it, then say DONE-{task_id}.",
            r#", "completion_marker": "DONE-{task_id}""#,
            "Fix it, then say DONE-t.",
        ),
        ("Fix it.", r#", "marker_instruction": false"#, "Fix it."),
        (
            "Fix it.",
            r#", "completion": "signal_file", "marker_instruction": false"#,
            "Fix it.",
        ),
    ];
    for (template, extra, expected) in table {
        let json = format!(
            r#"{{"task_id": "t", "agent": "a", "prompt_template": {}{extra}}}"#,
            serde_json::Value::String(template.into())
        );
        let t = task(&json);
        let plan = render_launch(&t, a, &tpl(&t), None, &ctx()).unwrap();
        assert_eq!(plan.prompt, expected, "{json}");
        assert_eq!(plan.added_instruction, None, "{json}");
    }
    // A custom marker the prompt does not name is the one asked for.
    let t = task(
        r#"{"task_id": "t", "agent": "a", "prompt_template": "Fix it.", "completion_marker": "DONE"}"#,
    );
    let plan = render_launch(&t, a, &tpl(&t), None, &ctx()).unwrap();
    assert_eq!(plan.prompt, "Fix it.\n\nWhen complete, print exactly: DONE");
}

#[test]
fn structured_and_acp_agents_get_the_instruction_unless_the_result_decides() {
    let text = r#"
[profiles.json]
command = ["agent", "-p", "{rendered_prompt}"]
output = "stream-json"
[profiles.x]
command = ["agent-acp", "--stdio"]
protocol = "acp"
"#;
    let p = ProfileSet::build(&[text], None).unwrap();
    for agent in ["json", "x"] {
        let t = task(&format!(
            r#"{{"task_id": "t", "agent": "{agent}", "prompt_template": "Fix it."}}"#
        ));
        let plan = render_launch(&t, p.get(agent).unwrap(), &tpl(&t), None, &ctx()).unwrap();
        assert_eq!(plan.prompt, format!("Fix it.{ADDED}"), "{agent}");
    }
    let acp = task(r#"{"task_id": "t", "agent": "x", "prompt_template": "Fix it."}"#);
    let plan = render_launch(&acp, p.get("x").unwrap(), &tpl(&acp), None, &ctx()).unwrap();
    assert_eq!(plan.env["HERD_ACP_PROMPT"], format!("Fix it.{ADDED}"));
    let by_result = task(
        r#"{"task_id": "t", "agent": "json", "prompt_template": "Fix it.", "completion": "result"}"#,
    );
    let plan = render_launch(
        &by_result,
        p.get("json").unwrap(),
        &tpl(&by_result),
        None,
        &ctx(),
    )
    .unwrap();
    assert_eq!(plan.prompt, "Fix it.");
}

#[test]
fn a_resumed_attempt_runs_the_resume_command_with_the_message() {
    let text_profiles = r#"
[profiles.r]
command = ["agent", "{rendered_prompt}"]
resume = ["agent", "--resume", "{session_id}", "-p", "{rendered_prompt}"]
"#;
    let p = ProfileSet::build(&[text_profiles], None).unwrap();
    let t = task(r#"{"task_id": "t", "agent": "r", "prompt_template": "Original {task_id}"}"#);
    let resume = Resume {
        session_id: "s-1".into(),
        message: "Use Postgres; \"quoted\" $1".into(),
    };
    let plan = render_launch(&t, p.get("r").unwrap(), &tpl(&t), Some(&resume), &ctx()).unwrap();
    assert_eq!(
        plan.argv,
        [
            "agent",
            "--resume",
            "s-1",
            "-p",
            "Use Postgres; \"quoted\" $1"
        ]
    );
    assert_eq!(plan.resumed_session.as_deref(), Some("s-1"));
}

#[test]
fn an_acp_agent_runs_under_herds_client_and_resumes_by_loading_its_session() {
    let text = r#"
[profiles.x]
command = ["agent-acp", "--stdio"]
protocol = "acp"
"#;
    let p = ProfileSet::build(&[text], None).unwrap();
    let profile = p.get("x").unwrap();
    assert_eq!(profile.output, crate::core::profile::OutputKind::StreamJson);
    let t = task(
        r#"{"task_id": "t", "agent": "x", "prompt_template": "Do {task_id}",
            "permission_policy": {"auto_press_1": true, "deny": ["Bash(git push:*)"]}}"#,
    );
    let plan = render_launch(&t, profile, &tpl(&t), None, &ctx()).unwrap();
    assert_eq!(
        plan.argv,
        ["herd", "acp-client", "--", "agent-acp", "--stdio"]
    );
    assert_eq!(plan.env["HERD_ACP_PROMPT"], plan.prompt);
    assert!(plan.env["HERD_ACP_LOG"].ends_with("attempt_2.acp.jsonl"));
    let policy: serde_json::Value = serde_json::from_str(&plan.env["HERD_ACP_POLICY"]).unwrap();
    assert_eq!(policy["auto_press_1"], true);
    assert_eq!(policy["deny"][0], "Bash(git push:*)");
    assert!(!plan.env.contains_key("HERD_ACP_LOAD_SESSION"));
    let resume = Resume {
        session_id: "s-1".into(),
        message: "Go on".into(),
    };
    let plan = render_launch(&t, profile, &tpl(&t), Some(&resume), &ctx()).unwrap();
    assert_eq!(
        plan.argv,
        ["herd", "acp-client", "--", "agent-acp", "--stdio"]
    );
    assert_eq!(plan.env["HERD_ACP_LOAD_SESSION"], "s-1");
    assert_eq!(plan.env["HERD_ACP_PROMPT"], "Go on");
}

#[test]
fn an_acp_session_gets_the_profiles_mode_unless_the_task_names_its_own() {
    let text = r#"
[profiles.x]
command = ["agent-acp"]
protocol = "acp"
acp_mode = "default"
"#;
    let p = ProfileSet::build(&[text], None).unwrap();
    let profile = p.get("x").unwrap();
    let plain = task(r#"{"task_id": "t", "agent": "x", "prompt_template": "Do it"}"#);
    let plan = render_launch(&plain, profile, &tpl(&plain), None, &ctx()).unwrap();
    assert_eq!(plan.env["HERD_ACP_MODE"], "default");
    let own = task(
        r#"{"task_id": "t", "agent": "x", "acp_mode": "auto", "prompt_template": "Do it",
            "env": {"HERD_ACP_MODE": "bypassPermissions"}}"#,
    );
    let plan = render_launch(&own, profile, &tpl(&own), None, &ctx()).unwrap();
    assert_eq!(plan.env["HERD_ACP_MODE"], "auto");
    // The built-in profiles name each adapter's manual mode.
    let builtin = ProfileSet::build(&crate::assets::built_in_profile_texts(), None).unwrap();
    let modes: Vec<_> = ["gemini-acp", "claude-acp", "codex-acp"]
        .iter()
        .map(|name| builtin.get(name).unwrap().acp_mode.clone().unwrap())
        .collect();
    assert_eq!(modes, ["default", "default", "read-only"]);
}

#[test]
fn cwd_names_the_folder_the_agent_runs_in_on_its_host() {
    let p = profiles();
    let t = task(r#"{"task_id": "t", "agent": "a", "prompt_template": "Work in {cwd}."}"#);
    let here = render_launch(&t, p.get("a").unwrap(), &tpl(&t), None, &ctx()).unwrap();
    assert!(here.prompt.starts_with("Work in /base."), "{}", here.prompt);
    let on_host = LaunchContext {
        cwd: Some(Path::new("/srv/work/t")),
        ..ctx()
    };
    let there = render_launch(&t, p.get("a").unwrap(), &tpl(&t), None, &on_host).unwrap();
    assert!(
        there.prompt.starts_with("Work in /srv/work/t."),
        "{}",
        there.prompt
    );
    assert_eq!(there.cwd, Path::new("/srv/work/t"));
}

#[test]
fn built_in_clis_start_in_a_named_mode_the_task_may_change() {
    let p = ProfileSet::build(&crate::assets::built_in_profile_texts(), None).unwrap();
    // (profile, task inputs, the mode arguments expected in its command)
    let table: [(&str, &str, &[&str]); 6] = [
        ("claude", "{}", &["--permission-mode", "default"]),
        (
            "claude",
            r#"{"permission_mode": "acceptEdits"}"#,
            &["--permission-mode", "acceptEdits"],
        ),
        (
            "codex",
            "{}",
            &[
                "--ask-for-approval",
                "on-request",
                "--sandbox",
                "workspace-write",
            ],
        ),
        (
            "codex",
            r#"{"approval_policy": "never", "sandbox_mode": "read-only"}"#,
            &["--ask-for-approval", "never", "--sandbox", "read-only"],
        ),
        ("gemini", "{}", &["--approval-mode", "default"]),
        (
            "gemini-json",
            r#"{"permission_mode": "auto_edit"}"#,
            &["--approval-mode", "auto_edit"],
        ),
    ];
    for (agent, inputs, expected) in table {
        let t = task(&format!(
            r#"{{"task_id": "t", "agent": "{agent}", "inputs": {inputs}, "prompt_template": "x"}}"#
        ));
        let plan = render_launch(&t, p.get(agent).unwrap(), &tpl(&t), None, &ctx()).unwrap();
        assert!(
            plan.argv.windows(expected.len()).any(|w| w == expected),
            "{agent} {inputs}: {:?}",
            plan.argv
        );
    }
}

#[test]
fn trust_folder_names_the_cli_whose_config_gets_it() {
    use crate::core::profile::folder_trust::TrustedCli;
    let p = ProfileSet::build(&crate::assets::built_in_profile_texts(), None).unwrap();
    let table = [
        ("claude", true, Some(TrustedCli::Claude)),
        ("codex", true, Some(TrustedCli::Codex)),
        ("codex-json", true, Some(TrustedCli::Codex)),
        ("gemini", true, Some(TrustedCli::Gemini)),
        ("gemini-json", true, Some(TrustedCli::Gemini)),
        ("aider", true, None),
        ("codex", false, None),
    ];
    for (agent, trust, expected) in table {
        let t = task(&format!(
            r#"{{"task_id": "t", "agent": "{agent}", "trust_folder": {trust}, "prompt_template": "x"}}"#
        ));
        let plan = render_launch(&t, p.get(agent).unwrap(), &tpl(&t), None, &ctx()).unwrap();
        assert_eq!(
            plan.trust_folder.as_ref().map(|f| f.cli),
            expected,
            "{agent}"
        );
        if let Some(trust) = &plan.trust_folder {
            assert_eq!(trust.folder, plan.cwd, "{agent}");
        }
    }
}

#[test]
fn the_codex_profile_leaves_its_app_server_to_the_launch() {
    let p = ProfileSet::build(&crate::assets::built_in_profile_texts(), None).unwrap();
    let t = task(r#"{"task_id": "t", "agent": "codex", "prompt_template": "x"}"#);
    let plan = render_launch(&t, p.get("codex").unwrap(), &tpl(&t), None, &ctx()).unwrap();
    // A whole element, replaced when the attempt starts (`run::app_server::argv_for`): the
    // server's socket is the attempt's own.
    assert_eq!(
        plan.argv[..2],
        ["codex", crate::core::wire::app_server::PLACEHOLDER]
    );
    let launched = crate::run::app_server::argv_for(
        plan.argv.clone(),
        Some("unix:///run/h/codex.sock"),
        "/bin/herd",
    );
    assert_eq!(launched[..2], ["/bin/herd", "app-server-pair"]);
    assert!(
        launched
            .windows(2)
            .any(|w| w == ["--remote", "unix:///run/h/codex.sock"]),
        "{launched:?}"
    );
}
