//! `herd explain` for an ACP attempt: the session's timeline from `attempt_<n>.acp.jsonl` (what
//! herd asked, permission requests and answers, tool calls, the turn's end, the outcome, the
//! agent's stderr). Pure; a line it cannot read is counted, never fatal.

use std::collections::HashMap;

use serde_json::Value;

/// The timeline lines of one ACP log.
pub fn explain_acp(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut methods: HashMap<String, String> = HashMap::new();
    let (mut chunks, mut stderr, mut unread) = (0u32, 0u32, 0u32);
    let mut garbage = 0u32;
    let mut last_stderr = None;
    for line in text.lines() {
        let Ok(record) = serde_json::from_str::<Value>(line) else {
            unread += 1;
            continue;
        };
        let t = record.get("t").and_then(Value::as_f64).unwrap_or(0.0);
        let msg = record.get("msg").unwrap_or(&Value::Null);
        let said: Vec<String> = match record.get("dir").and_then(Value::as_str) {
            Some("out") => vec![outgoing(msg, &mut methods)],
            Some("in") => {
                if record.get("garbage").is_some() || record.get("oversized").is_some() {
                    garbage += 1;
                    continue;
                }
                incoming(msg, &methods, &mut chunks).into_iter().collect()
            }
            Some("stderr") => {
                stderr += 1;
                last_stderr = record
                    .get("text")
                    .and_then(Value::as_str)
                    .map(str::to_string);
                Vec::new()
            }
            Some("herd") => herd_note(&record),
            _ => {
                unread += 1;
                Vec::new()
            }
        };
        out.extend(said.into_iter().map(|what| format!("{t:>8.2}s  {what}")));
    }
    out.push(format!(
        "agent message chunks {chunks}, stderr lines {stderr}, lines that were not messages \
         {garbage}, unreadable log lines {unread}"
    ));
    if let Some(last) = last_stderr {
        out.push(format!("last stderr line: {last}"));
    }
    out
}

/// What herd sent: a request (remembered by its id), a notification, or an answer.
fn outgoing(msg: &Value, methods: &mut HashMap<String, String>) -> String {
    let method = msg.get("method").and_then(Value::as_str);
    let id = msg.get("id").map(Value::to_string);
    match (method, id) {
        (Some(method), Some(id)) => {
            methods.insert(id, method.to_string());
            format!("→ {method}")
        }
        (Some(method), None) => format!("→ {method} (notification)"),
        (None, _) => {
            let outcome = &msg["result"]["outcome"];
            let chosen = outcome
                .get("optionId")
                .or_else(|| outcome.get("outcome"))
                .and_then(Value::as_str)
                .unwrap_or("?");
            format!("→ answer to the agent's request: {chosen}")
        }
    }
}

/// What the agent sent: a finished tool call, a permission request, another request, or an
/// answer to one of herd's (`methods`); message chunks are only counted.
fn incoming(msg: &Value, methods: &HashMap<String, String>, chunks: &mut u32) -> Option<String> {
    let method = msg.get("method").and_then(Value::as_str);
    let id = msg.get("id").map(Value::to_string);
    match (method, id) {
        (Some("session/update"), _) => {
            let update = &msg["params"]["update"];
            match update.get("sessionUpdate").and_then(Value::as_str) {
                Some("agent_message_chunk") => {
                    *chunks += 1;
                    None
                }
                Some("tool_call" | "tool_call_update") => {
                    let status = update.get("status").and_then(Value::as_str);
                    let Some(status @ ("completed" | "failed")) = status else {
                        return None;
                    };
                    let title = update
                        .get("title")
                        .or_else(|| update.get("toolCallId"))
                        .and_then(Value::as_str)
                        .unwrap_or("?");
                    Some(format!("← tool call {title}: {status}"))
                }
                _ => None,
            }
        }
        (Some("session/request_permission"), _) => {
            let call = &msg["params"]["toolCall"];
            let title = call.get("title").and_then(Value::as_str).unwrap_or("?");
            let kind = call.get("kind").and_then(Value::as_str).unwrap_or("?");
            Some(format!("← permission request ({kind}): {title}"))
        }
        (Some(method), _) => Some(format!("← request {method}")),
        (None, Some(id)) => {
            let asked = methods.get(&id).map_or("?", String::as_str);
            Some(answer_line(asked, msg))
        }
        (None, None) => None,
    }
}

/// What herd itself noted: an answer, the outcome, how the agent exited, an error.
fn herd_note(record: &Value) -> Vec<String> {
    if let Some(a) = record.get("approval") {
        let field = |k: &str| a.get(k).and_then(Value::as_str).unwrap_or("?");
        vec![format!(
            "⚑ {} {}: {} — {} ({})",
            field("by"),
            field("option"),
            field("request"),
            field("decision"),
            field("why")
        )]
    } else if let Some(event) = record.get("outcome") {
        let result = event["result"].as_str().unwrap_or("");
        let verdict = if event["is_error"] == true {
            format!(
                "error {}: {}",
                event["subtype"].as_str().unwrap_or("?"),
                result
            )
        } else {
            format!("success, agent text {} chars", result.chars().count())
        };
        let mut said = vec![format!("= outcome: {verdict}")];
        if let Some(denials) = event["permission_denials"].as_array()
            && !denials.is_empty()
        {
            said.push(format!("= refused requests: {}", denials.len()));
        }
        said
    } else if let Some(how) = record.get("agent_exited").and_then(Value::as_str) {
        vec![format!("agent exited: {how}")]
    } else if let Some(error) = record.get("error").and_then(Value::as_str) {
        vec![format!("error: {error}")]
    } else {
        Vec::new()
    }
}

/// `← session/new: session s1`, `← session/prompt: stopReason end_turn`, or the error.
fn answer_line(asked: &str, msg: &Value) -> String {
    if let Some(error) = msg.get("error") {
        let message = error.get("message").and_then(Value::as_str).unwrap_or("?");
        let data = error.get("data").map(Value::to_string).unwrap_or_default();
        return format!("← {asked} failed: {} {message} {data}", error["code"]);
    }
    let result = &msg["result"];
    let detail = match asked {
        "initialize" => {
            let info = &result["agentInfo"];
            let caps = &result["agentCapabilities"];
            format!(
                "{} {}, loadSession {}, auth methods {}",
                info["name"].as_str().unwrap_or("?"),
                info["version"].as_str().unwrap_or("?"),
                caps["loadSession"].as_bool().unwrap_or(false),
                result["authMethods"].as_array().map_or(0, Vec::len)
            )
        }
        "session/new" => format!("session {}", result["sessionId"].as_str().unwrap_or("?")),
        "session/prompt" => format!(
            "stopReason {}",
            result["stopReason"].as_str().unwrap_or("?")
        ),
        _ => "ok".to_string(),
    };
    format!("← {asked}: {detail}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_session_reads_as_a_timeline_with_its_answers_and_outcome() {
        let log = [
            r#"{"t":0.0,"dir":"out","msg":{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}}"#,
            r#"{"t":0.8,"dir":"in","msg":{"jsonrpc":"2.0","id":0,"result":{"agentInfo":{"name":"gemini-cli","version":"0.61.0"},"agentCapabilities":{"loadSession":true},"authMethods":[{}]}}}"#,
            r#"{"t":1.0,"dir":"out","msg":{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{}}}"#,
            r#"{"t":1.2,"dir":"in","msg":{"jsonrpc":"2.0","id":0,"method":"session/request_permission","params":{"toolCall":{"title":"touch x","kind":"execute"}}}}"#,
            r#"{"t":1.2,"dir":"out","msg":{"jsonrpc":"2.0","id":0,"result":{"outcome":{"outcome":"selected","optionId":"cancel"}}}}"#,
            r#"{"t":1.2,"dir":"herd","approval":{"by":"auto","request":"Bash(touch x)","decision":"refuse","why":"denied by Bash(touch:*)","option":"reject_once"}}"#,
            r#"{"t":1.3,"dir":"in","garbage":"hello","why":"not JSON"}"#,
            r#"{"t":1.4,"dir":"stderr","text":"warning: x"}"#,
            r#"{"t":1.5,"dir":"in","msg":{"jsonrpc":"2.0","id":2,"result":{"stopReason":"end_turn"}}}"#,
            r#"{"t":1.5,"dir":"herd","outcome":{"type":"result","subtype":"success","is_error":false,"result":"ok","permission_denials":[{}]}}"#,
            "torn {",
        ]
        .join("\n");
        let lines = explain_acp(&log).join("\n");
        for want in [
            "→ initialize",
            "← initialize: gemini-cli 0.61.0, loadSession true, auth methods 1",
            "← permission request (execute): touch x",
            "→ answer to the agent's request: cancel",
            "⚑ auto reject_once: Bash(touch x) — refuse (denied by Bash(touch:*))",
            "← session/prompt: stopReason end_turn",
            "= outcome: success, agent text 2 chars",
            "= refused requests: 1",
            "stderr lines 1, lines that were not messages 1, unreadable log lines 1",
            "last stderr line: warning: x",
        ] {
            assert!(lines.contains(want), "{want:?} missing from:\n{lines}");
        }
    }
}
