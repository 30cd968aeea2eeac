use std::time::Duration;

use serde_json::{Value, json};

use super::*;
use crate::core::guard::{GuardContext, RuleSet};

fn setup(auto_once: bool) -> SessionSetup {
    SessionSetup {
        cwd: "/work/task".into(),
        prompt: "Do it, then print DONE".into(),
        auth_method: Some("gemini-api-key".into()),
        policy: PermissionPolicy {
            guard: crate::core::approval::GuardSetup {
                rules: RuleSet::default(),
                context: GuardContext {
                    task_dir: "/work/task".into(),
                    home: "/home/u".into(),
                    ..GuardContext::default()
                },
            },
            auto_once,
            auto_always: false,
        },
        init_timeout: Duration::from_secs(30),
        load_session: None,
    }
}

fn msg(value: Value) -> Message {
    rpc::parse_line(&value.to_string()).unwrap()
}

fn sent(actions: &[Action]) -> Vec<Value> {
    actions
        .iter()
        .filter_map(|a| match a {
            Action::Send(v) => Some(v.clone()),
            _ => None,
        })
        .collect()
}

fn finished(actions: &[Action]) -> Option<&Outcome> {
    actions.iter().find_map(|a| match a {
        Action::Finish(o) => Some(o),
        _ => None,
    })
}

const T: Duration = Duration::from_secs(1);

/// initialize → session/new → session/prompt; returns the prompt's request id.
fn open(session: &mut Session) -> u64 {
    let first = sent(&session.start());
    assert_eq!(first[0]["method"], "initialize");
    let init = json!({"jsonrpc": "2.0", "id": first[0]["id"], "result": {"protocolVersion": 1, "agentCapabilities": {"loadSession": true}}});
    let next = sent(&session.handle(msg(init), T));
    assert_eq!(next[0]["method"], "session/new");
    assert_eq!(next[0]["params"]["cwd"], "/work/task");
    let created = json!({"jsonrpc": "2.0", "id": next[0]["id"], "result": {"sessionId": "s1"}});
    let prompt = sent(&session.handle(msg(created), T));
    assert_eq!(prompt[0]["method"], "session/prompt");
    assert_eq!(
        prompt[0]["params"]["prompt"][0]["text"],
        "Do it, then print DONE"
    );
    prompt[0]["id"].as_u64().unwrap()
}

fn update(text: &str) -> Message {
    msg(
        json!({"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s1",
        "update": {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}}}}),
    )
}

fn permission(id: u64, command: &str) -> Message {
    msg(
        json!({"jsonrpc": "2.0", "id": id, "method": "session/request_permission", "params": {
        "sessionId": "s1",
        "toolCall": {"toolCallId": "t1", "title": command, "kind": "execute", "rawInput": {"command": command}},
        "options": [
            {"optionId": "a", "name": "Allow", "kind": "allow_once"},
            {"optionId": "r", "name": "Reject", "kind": "reject_once"}]}}),
    )
}

#[test]
fn a_session_ends_with_the_agents_text_when_the_turn_ends() {
    let mut s = Session::new(setup(false));
    let prompt = open(&mut s);
    s.handle(update("All done. "), T);
    s.handle(update("DONE"), T);
    let end = s.handle(
        msg(json!({"jsonrpc": "2.0", "id": prompt, "result": {"stopReason": "end_turn"}})),
        T,
    );
    let outcome = finished(&end).unwrap();
    assert!(outcome.success);
    assert_eq!(outcome.text, "All done. DONE");
    assert_eq!(outcome.session_id.as_deref(), Some("s1"));
    assert!(s.is_finished());
}

#[test]
fn permissions_are_judged_by_the_guard_and_refusals_recorded() {
    let mut s = Session::new(setup(true));
    let prompt = open(&mut s);
    let allowed = sent(&s.handle(permission(7, "npm test"), T));
    assert_eq!(allowed[0]["id"], 7);
    assert_eq!(allowed[0]["result"]["outcome"]["optionId"], "a");
    let refused = sent(&s.handle(permission(8, "rm -rf ~"), T));
    assert_eq!(refused[0]["result"]["outcome"]["optionId"], "r");
    assert_eq!(s.answers().len(), 2);
    assert_eq!(s.answers()[1].option, "reject_once");
    let end = s.handle(
        msg(json!({"jsonrpc": "2.0", "id": prompt, "result": {"stopReason": "end_turn"}})),
        T,
    );
    let outcome = finished(&end).unwrap();
    assert_eq!(outcome.denials.len(), 1);
    let event = outcome.event();
    assert_eq!(
        event["permission_denials"][0]["tool_input"]["command"],
        "rm -rf ~"
    );
    // With the guard's reason, so the verdict's evidence says why.
    let reason = event["permission_denials"][0]["reason"].as_str().unwrap();
    assert!(reason.starts_with("refuse: "), "{reason}");
}

#[test]
fn a_request_the_guard_leaves_open_waits_for_the_operators_key() {
    let mut s = Session::new(setup(false));
    open(&mut s);
    let shown = s.handle(permission(9, "npm test"), T);
    assert!(sent(&shown).is_empty());
    assert!(
        matches!(&shown[0], Action::Show(Shown::Permission { options, .. }) if options.len() == 2)
    );
    assert!(s.waiting().is_some());
    assert!(s.operator_key('7', T).is_empty(), "no such option");
    let answered = sent(&s.operator_key('1', T));
    assert_eq!(answered[0]["result"]["outcome"]["optionId"], "a");
    assert!(s.waiting().is_none());
    assert_eq!(s.answers()[0].by, "operator");
    // Esc: the first reject option, and the request counts as refused.
    s.handle(permission(10, "npm publish"), T);
    let rejected = sent(&s.operator_reject(T));
    assert_eq!(rejected[0]["result"]["outcome"]["optionId"], "r");
    assert!(s.operator_reject(T).is_empty());
    // Enter: allow once.
    s.handle(permission(11, "npm run build"), T);
    let accepted = sent(&s.operator_accept(T));
    assert_eq!(accepted[0]["id"], 11);
    assert_eq!(accepted[0]["result"]["outcome"]["optionId"], "a");
    assert_eq!(
        s.answers().last().map(|a| a.option.as_str()),
        Some("allow_once")
    );
    assert!(s.operator_accept(T).is_empty(), "nothing waits");
}

#[test]
fn enter_never_picks_a_broader_option_than_allow_once() {
    let mut s = Session::new(setup(false));
    open(&mut s);
    let ask = json!({"jsonrpc": "2.0", "id": 12, "method": "session/request_permission", "params": {
        "sessionId": "s1",
        "toolCall": {"toolCallId": "t1", "title": "npm test", "kind": "execute", "rawInput": {"command": "npm test"}},
        "options": [
            {"optionId": "always", "name": "Always", "kind": "allow_always"},
            {"optionId": "r", "name": "Reject", "kind": "reject_once"}]}});
    s.handle(msg(ask), T);
    assert!(s.operator_accept(T).is_empty());
    assert!(
        s.waiting().is_some(),
        "still the operator's to answer with a digit"
    );
}

#[test]
fn auth_is_asked_for_once_and_errors_end_the_session() {
    let mut s = Session::new(setup(false));
    let first = sent(&s.start());
    let init = json!({"jsonrpc": "2.0", "id": first[0]["id"], "result": {"protocolVersion": 1}});
    let new = sent(&s.handle(msg(init), T));
    let needs = json!({"jsonrpc": "2.0", "id": new[0]["id"], "error": {"code": -32000, "message": "Authentication required"}});
    let auth = sent(&s.handle(msg(needs.clone()), T));
    assert_eq!(auth[0]["method"], "authenticate");
    assert_eq!(auth[0]["params"]["methodId"], "gemini-api-key");
    let new_again = sent(&s.handle(
        msg(json!({"jsonrpc": "2.0", "id": auth[0]["id"], "result": {}})),
        T,
    ));
    assert_eq!(new_again[0]["method"], "session/new");
    let mut needs = needs;
    needs["id"] = new_again[0]["id"].clone();
    let end = s.handle(msg(needs), T);
    assert_eq!(finished(&end).unwrap().kind, "authentication_failed");
}

#[test]
fn hostile_agents_end_with_evidence_not_a_crash() {
    // Never answers initialize.
    let mut s = Session::new(setup(false));
    s.start();
    assert!(s.tick(Duration::from_secs(5)).is_empty());
    let end = s.tick(Duration::from_secs(31));
    assert!(
        finished(&end)
            .unwrap()
            .message
            .contains("did not answer initialize")
    );
    // Unknown requests get method-not-found; answers to nothing are noted.
    let mut s = Session::new(setup(false));
    open(&mut s);
    let refused = sent(&s.handle(
        msg(json!({"jsonrpc": "2.0", "id": "x", "method": "fs/read_text_file", "params": {}})),
        T,
    ));
    assert_eq!(refused[0]["error"]["code"], rpc::METHOD_NOT_FOUND);
    assert!(sent(&s.handle(msg(json!({"jsonrpc": "2.0", "id": 99, "result": {}})), T)).is_empty());
    // Exiting mid-turn.
    let end = s.exited("exit code 1", &["Error: boom".into()]);
    let outcome = finished(&end).unwrap();
    assert!(!outcome.success);
    assert!(
        outcome.message.contains("Error: boom"),
        "{}",
        outcome.message
    );
    assert!(s.exited("again", &[]).is_empty());
}

#[test]
fn cancel_sends_session_cancel_and_follow_ups_wait_for_the_turn() {
    let mut s = Session::new(setup(false));
    let prompt = open(&mut s);
    assert!(sent(&s.follow_up("and also this")).is_empty());
    let next = sent(&s.handle(
        msg(json!({"jsonrpc": "2.0", "id": prompt, "result": {"stopReason": "end_turn"}})),
        T,
    ));
    assert_eq!(next[0]["params"]["prompt"][0]["text"], "and also this");
    s.handle(permission(3, "npm test"), T);
    let cancel = sent(&s.cancel());
    assert_eq!(cancel[0]["result"]["outcome"]["outcome"], "cancelled");
    assert_eq!(cancel[1]["method"], "session/cancel");
    assert!(s.cancel().is_empty());
}

#[test]
fn a_resumed_attempt_loads_its_session_when_the_agent_can() {
    let mut s = Session::new(SessionSetup {
        load_session: Some("old-1".into()),
        ..setup(false)
    });
    let first = sent(&s.start());
    let init = json!({"jsonrpc": "2.0", "id": first[0]["id"], "result": {"agentCapabilities": {"loadSession": true}}});
    let load = sent(&s.handle(msg(init), T));
    assert_eq!(load[0]["method"], "session/load");
    assert_eq!(load[0]["params"]["sessionId"], "old-1");
    // History replayed while loading does not count as this attempt's text.
    s.handle(update("old answer TASK_COMPLETE"), T);
    let prompt = sent(&s.handle(
        msg(json!({"jsonrpc": "2.0", "id": load[0]["id"], "result": {}})),
        T,
    ));
    assert_eq!(prompt[0]["method"], "session/prompt");
    assert_eq!(prompt[0]["params"]["sessionId"], "old-1");
    let end = s.handle(
        msg(json!({"jsonrpc": "2.0", "id": prompt[0]["id"], "result": {"stopReason": "end_turn"}})),
        T,
    );
    assert_eq!(finished(&end).unwrap().text, "");
    // An agent that cannot load sessions gets a new one.
    let mut s = Session::new(SessionSetup {
        load_session: Some("old-1".into()),
        ..setup(false)
    });
    let first = sent(&s.start());
    let init = json!({"jsonrpc": "2.0", "id": first[0]["id"], "result": {"agentCapabilities": {}}});
    assert_eq!(sent(&s.handle(msg(init), T))[0]["method"], "session/new");
}
