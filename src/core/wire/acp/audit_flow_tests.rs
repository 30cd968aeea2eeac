//! The pure pipeline of an ACP attempt's approvals: a session's requests drawn by the renderer
//! on the attempt's screen, the operator's answer through the dashboard's prompt rule, and the
//! session's final `result` event, read by the attempt: its approvals are the client's exact
//! record (request as data, option sent, guard's reason, who answered).

use std::time::Duration;

use serde_json::{Value, json};

use super::render::Renderer;
use super::{Action, Session, SessionSetup, rpc};
use crate::core::approval::{AnsweredBy, GuardSetup};
use crate::core::attempt::{Attempt, AttemptSetup, Effect, Event};
use crate::core::guard::{GuardContext, RuleSet};
use crate::core::profile::ProfileSet;
use crate::core::wire::acp::permission::PermissionPolicy;

fn attempt() -> Attempt {
    let profiles = ProfileSet::build(&crate::assets::built_in_profile_texts(), None).unwrap();
    let profile = profiles.get("gemini-acp").unwrap().clone();
    let rules = profile.prompts.len();
    Attempt::new(AttemptSetup {
        profile,
        marker: "TASK_COMPLETE:t1".into(),
        prompt: "do it".into(),
        rows: 30,
        cols: 100,
        timeout: Duration::from_secs(100),
        idle: Duration::from_secs(50),
        permission_wait: None,
        // The task's switches on: they are the client's to apply, never the screen's.
        auto_rules: vec![true; rules],
        answer_cap: 5,
        completion: crate::core::task::Completion::Marker,
        marker_required: true,
        guard: guard(),
    })
}

fn guard() -> GuardSetup {
    GuardSetup {
        rules: RuleSet::default(),
        context: GuardContext {
            task_dir: "/work/task".into(),
            home: "/home/u".into(),
            ..GuardContext::default()
        },
    }
}

fn session(auto_once: bool) -> Session {
    Session::new(SessionSetup {
        cwd: "/work/task".into(),
        prompt: "do it".into(),
        policy: PermissionPolicy {
            guard: guard(),
            auto_once,
            auto_always: false,
        },
        init_timeout: Duration::from_secs(30),
        ..SessionSetup::default()
    })
}

/// Carries the session's actions out as the client does: shown pieces drawn, the final
/// result as one JSON line; returns the bytes for the attempt's terminal.
fn draw(renderer: &mut Renderer, actions: &[Action]) -> Vec<u8> {
    let mut out = String::new();
    for action in actions {
        match action {
            Action::Show(shown) => out.push_str(&renderer.draw(shown)),
            Action::Finish(outcome) => out.push_str(&format!("\r\n{}\r\n", outcome.event())),
            Action::Send(_) => {}
        }
    }
    out.into_bytes()
}

fn msg(value: Value) -> rpc::Message {
    rpc::parse_line(&value.to_string()).unwrap()
}

fn permission(id: u64, command: &str) -> rpc::Message {
    msg(
        json!({"jsonrpc": "2.0", "id": id, "method": "session/request_permission", "params": {
        "sessionId": "s1",
        "toolCall": {"toolCallId": "t1", "title": format!("Run {command}"), "kind": "execute",
                     "rawInput": {"command": command}},
        "options": [
            {"optionId": "a", "name": "Allow", "kind": "allow_once"},
            {"optionId": "r", "name": "Reject", "kind": "reject_once"}]}}),
    )
}

/// Opens the session; returns the prompt request's id.
fn open(s: &mut Session) -> Value {
    let at = Duration::from_secs(1);
    let first = s.start();
    let Some(Action::Send(init)) = first.last() else {
        panic!("{first:?}")
    };
    let actions = s.handle(
        msg(json!({"jsonrpc": "2.0", "id": init["id"], "result": {"protocolVersion": 1}})),
        at,
    );
    let Some(Action::Send(new)) = actions.last() else {
        panic!("{actions:?}")
    };
    let actions = s.handle(
        msg(json!({"jsonrpc": "2.0", "id": new["id"], "result": {"sessionId": "s1"}})),
        at,
    );
    let Some(Action::Send(prompt)) = actions.last() else {
        panic!("{actions:?}")
    };
    prompt["id"].clone()
}

fn end_turn(s: &mut Session, prompt: &Value) -> Vec<Action> {
    let at = Duration::from_secs(9);
    let mut actions = s.handle(
        msg(json!({"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s1",
            "update": {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "Done.\nTASK_COMPLETE:t1"}}}})),
        at,
    );
    actions.extend(s.handle(
        msg(json!({"jsonrpc": "2.0", "id": prompt, "result": {"stopReason": "end_turn"}})),
        at,
    ));
    actions
}

#[test]
fn the_operators_answer_in_the_dashboard_is_recorded_as_the_client_gave_it() {
    let (mut s, mut r, mut a) = (session(false), Renderer::new(), attempt());
    let prompt = open(&mut s);
    let asked = s.handle(permission(7, "npm test"), Duration::from_secs(2));
    a.handle(Event::Output(&draw(&mut r, &asked)), Duration::from_secs(2));
    // The dialog settles on screen and waits for the operator.
    let mut at = Duration::from_secs(2);
    while a.waiting().is_none() && at < Duration::from_secs(10) {
        at += Duration::from_millis(250);
        a.handle(Event::Tick, at);
    }
    // herd never answers the client's dialog by itself, whatever the switches.
    assert!(a.approvals().is_empty(), "{:?}", a.approvals());
    let rule = a
        .waiting()
        .map(|w| w.rule)
        .expect("the dialog waits for the operator");
    let fx = a.handle(Event::OperatorAnswer { rule }, at);
    let keys: Vec<u8> = fx
        .iter()
        .find_map(|e| match e {
            Effect::Write { bytes, .. } => Some(bytes.clone()),
            _ => None,
        })
        .expect("the operator's key is written");
    assert_eq!(keys, b"1");
    // The screen's record of it: the rule and key the operator pressed.
    assert_eq!(a.approvals()[0].rule, "press_1");
    let answered = s.operator_key('1', at);
    a.handle(Event::Output(&draw(&mut r, &answered)), at);
    let end = end_turn(&mut s, &prompt);
    a.handle(Event::Output(&draw(&mut r, &end)), Duration::from_secs(9));
    // The client's record replaces it: one answer, the exact request and the option sent.
    let approvals = a.approvals();
    assert_eq!(approvals.len(), 1, "{approvals:?}");
    let record = &approvals[0];
    assert_eq!(record.by, AnsweredBy::Operator);
    assert_eq!(record.option.as_deref(), Some("allow_once"));
    assert_eq!(record.title.as_deref(), Some("Run npm test"));
    assert_eq!(
        record.request.as_ref().map(ToString::to_string).as_deref(),
        Some("Bash(npm test)")
    );
    assert_eq!(record.decision.as_ref().map(|d| d.name()), Some("ask"));
}

#[test]
fn automatic_answers_and_guard_refusals_reach_the_attempts_approvals() {
    let (mut s, mut r, mut a) = (session(true), Renderer::new(), attempt());
    let prompt = open(&mut s);
    let mut actions = s.handle(permission(7, "touch x"), Duration::from_secs(2));
    actions.extend(s.handle(permission(8, "rm -rf ~"), Duration::from_secs(3)));
    actions.extend(end_turn(&mut s, &prompt));
    a.handle(
        Event::Output(&draw(&mut r, &actions)),
        Duration::from_secs(9),
    );
    let lines: Vec<String> = a.approvals().iter().map(|a| a.summary()).collect();
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert_eq!(
        lines[0],
        "auto via acp allow_once: Bash(touch x) — allow (by auto_press_1)"
    );
    assert!(
        lines[1].starts_with("auto via acp reject_once: Bash(rm -rf ~) — refuse: "),
        "{lines:?}"
    );
    assert!(a.approvals().iter().all(|a| a.by == AnsweredBy::Herd));
    // The refusal is the verdict's evidence, with the floor's reason.
    let facts = a.stream_facts().expect("a structured stream");
    assert_eq!(facts.permission_denials.len(), 1);
    assert!(
        facts.permission_denials[0].starts_with("Bash(rm -rf ~) — refuse: "),
        "{:?}",
        facts.permission_denials
    );
}
