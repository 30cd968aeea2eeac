//! The agent's authentication methods and which one herd uses when the agent requires it: the
//! one the operator named (`HERD_ACP_AUTH`), an `env_var` method whose variables are all set,
//! an `agent` method; a `terminal` login is the operator's (`herd acp login`). With none, the
//! attempt ends at once with the fix. Raw JSON (the schema crate lacks `env_var`); only variable
//! names pass through here. Pure.

use std::collections::BTreeSet;

use serde_json::Value;

/// One authentication method the agent offers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuthMethod {
    pub id: String,
    pub name: String,
    pub kind: AuthKind,
}

/// What the client does for a method.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AuthKind {
    /// The agent authenticates by itself through `authenticate`.
    Agent,
    /// The client sets these variables (the required ones) for the agent.
    EnvVar { vars: Vec<String> },
    /// The operator logs in by running the agent with these arguments and variables.
    Terminal {
        args: Vec<String>,
        env: Vec<(String, String)>,
    },
    /// A type herd does not know (`_oauth`, …): never chosen.
    Other { kind: String },
}

/// What herd does when the agent wants authentication.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AuthChoice {
    /// `authenticate` with this method id.
    Use { method: String, why: String },
    /// No method can be used here: the attempt ends with this evidence.
    Impossible { message: String },
}

/// The methods of `initialize`'s result, in the agent's order (unreadable entries skipped).
pub fn methods(initialize_result: &Value) -> Vec<AuthMethod> {
    initialize_result
        .get("authMethods")
        .and_then(Value::as_array)
        .map(|list| list.iter().filter_map(method).collect())
        .unwrap_or_default()
}

fn method(value: &Value) -> Option<AuthMethod> {
    let id = value
        .get("id")
        .or_else(|| value.get("methodId"))
        .and_then(Value::as_str)?
        .to_string();
    let name = value
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or(&id)
        .to_string();
    let kind = match value.get("type").and_then(Value::as_str) {
        None | Some("agent") => AuthKind::Agent,
        Some("env_var") => AuthKind::EnvVar {
            vars: required_vars(value),
        },
        Some("terminal") => AuthKind::Terminal {
            args: strings(value.get("args")),
            env: terminal_env(value.get("env")),
        },
        Some(other) => AuthKind::Other {
            kind: other.to_string(),
        },
    };
    Some(AuthMethod { id, name, kind })
}

/// The variables an `env_var` method needs (`vars[].name` less optional ones, or `varName`).
fn required_vars(value: &Value) -> Vec<String> {
    let listed = value.get("vars").and_then(Value::as_array);
    let mut vars: Vec<String> = listed
        .into_iter()
        .flatten()
        .filter(|var| var.get("optional") != Some(&Value::Bool(true)))
        .filter_map(|var| var.get("name").and_then(Value::as_str).map(String::from))
        .collect();
    if let Some(name) = value.get("varName").and_then(Value::as_str) {
        vars.push(name.to_string());
    }
    vars
}

fn strings(value: Option<&Value>) -> Vec<String> {
    value
        .and_then(Value::as_array)
        .map(|list| {
            list.iter()
                .filter_map(Value::as_str)
                .map(String::from)
                .collect()
        })
        .unwrap_or_default()
}

/// A terminal method's variables: an object (protocol version 1) or `[{name, value}]` (2).
fn terminal_env(value: Option<&Value>) -> Vec<(String, String)> {
    match value {
        Some(Value::Object(map)) => map
            .iter()
            .filter_map(|(k, v)| v.as_str().map(|v| (k.clone(), v.to_string())))
            .collect(),
        Some(Value::Array(list)) => list
            .iter()
            .filter_map(|entry| {
                let name = entry.get("name")?.as_str()?;
                let value = entry.get("value")?.as_str()?;
                Some((name.to_string(), value.to_string()))
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// The method herd uses, else why none can be, with the fix (`agent` as `herd acp login` names
/// it).
pub fn choose(
    methods: &[AuthMethod],
    named: Option<&str>,
    set_vars: &BTreeSet<String>,
    agent: &str,
) -> AuthChoice {
    if let Some(method) = named {
        return AuthChoice::Use {
            method: method.to_string(),
            why: "named by HERD_ACP_AUTH".into(),
        };
    }
    let by_env = methods.iter().find(|m| match &m.kind {
        AuthKind::EnvVar { vars } => !vars.is_empty() && vars.iter().all(|v| set_vars.contains(v)),
        _ => false,
    });
    if let Some(method) = by_env {
        return AuthChoice::Use {
            method: method.id.clone(),
            why: "its variables are set".into(),
        };
    }
    if let Some(method) = methods.iter().find(|m| m.kind == AuthKind::Agent) {
        return AuthChoice::Use {
            method: method.id.clone(),
            why: "the agent logs in by itself".into(),
        };
    }
    AuthChoice::Impossible {
        message: impossible(methods, agent),
    }
}

/// The evidence when no method can be used: each method and what would make it usable.
fn impossible(methods: &[AuthMethod], agent: &str) -> String {
    if methods.is_empty() {
        return "the agent requires authentication and offers no method: log in to it \
                outside herd, or name one with HERD_ACP_AUTH in the task's env"
            .into();
    }
    let each: Vec<String> = methods
        .iter()
        .map(|m| match &m.kind {
            AuthKind::EnvVar { vars } => format!(
                "{} (env_var: set {} in the task's env)",
                m.id,
                vars.join(" and ")
            ),
            AuthKind::Terminal { .. } => {
                format!("{} (terminal: run `herd acp login {agent}` once)", m.id)
            }
            AuthKind::Agent => format!("{} (agent)", m.id),
            AuthKind::Other { kind } => format!("{} ({kind}: a type herd does not know)", m.id),
        })
        .collect();
    format!(
        "the agent requires authentication and herd can use none of its methods: {}",
        each.join("; ")
    )
}

/// The first `terminal` method, for `herd acp login`.
pub fn terminal_method(methods: &[AuthMethod]) -> Option<&AuthMethod> {
    methods
        .iter()
        .find(|m| matches!(m.kind, AuthKind::Terminal { .. }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn offered() -> Vec<AuthMethod> {
        methods(&json!({"authMethods": [
            {"id": "login", "name": "Log in", "type": "terminal", "args": ["--login"],
             "env": {"MODE": "tui"}},
            {"id": "api-key", "name": "API key", "type": "env_var",
             "vars": [{"name": "FAKE_KEY"}, {"name": "FAKE_ORG", "optional": true}]},
            {"id": "oauth", "name": "OAuth", "type": "_oauth"},
        ]}))
    }

    fn set(names: &[&str]) -> BTreeSet<String> {
        names.iter().map(|n| n.to_string()).collect()
    }

    #[test]
    fn every_type_reads_and_no_type_is_agent() {
        let read = methods(&json!({"authMethods": [{"id": "a", "name": "A"},
            {"methodId": "v2", "name": "V2", "type": "env_var", "varName": "K"}, {"name": "no id"}]}));
        assert_eq!(read[0].kind, AuthKind::Agent);
        assert_eq!(
            read[1].kind,
            AuthKind::EnvVar {
                vars: vec!["K".into()]
            }
        );
        assert_eq!(read.len(), 2);
        let offered = offered();
        assert_eq!(
            offered[0].kind,
            AuthKind::Terminal {
                args: vec!["--login".into()],
                env: vec![("MODE".into(), "tui".into())]
            }
        );
        assert_eq!(
            offered[1].kind,
            AuthKind::EnvVar {
                vars: vec!["FAKE_KEY".into()]
            }
        );
        assert_eq!(
            terminal_method(&offered).map(|m| m.id.as_str()),
            Some("login")
        );
    }

    #[test]
    fn an_env_var_method_is_chosen_when_its_variable_is_set() {
        let chosen = choose(&offered(), None, &set(&["FAKE_KEY"]), "acp:fake");
        assert!(matches!(chosen, AuthChoice::Use { method, .. } if method == "api-key"));
    }

    #[test]
    fn the_operators_method_wins_and_an_agent_method_is_chosen_by_itself() {
        let named = choose(&offered(), Some("oauth"), &set(&[]), "x");
        assert!(matches!(named, AuthChoice::Use { method, .. } if method == "oauth"));
        let agent =
            methods(&json!({"authMethods": [{"id": "self", "name": "S", "type": "agent"}]}));
        let chosen = choose(&agent, None, &set(&[]), "x");
        assert!(matches!(chosen, AuthChoice::Use { method, .. } if method == "self"));
    }

    #[test]
    fn with_no_usable_method_the_evidence_names_each_method_and_its_fix() {
        let AuthChoice::Impossible { message } = choose(&offered(), None, &set(&[]), "acp:fake")
        else {
            panic!("nothing can be chosen");
        };
        assert!(
            message.contains("login (terminal: run `herd acp login acp:fake` once)"),
            "{message}"
        );
        assert!(
            message.contains("api-key (env_var: set FAKE_KEY in the task's env)"),
            "{message}"
        );
        assert!(message.contains("oauth (_oauth"), "{message}");
        let AuthChoice::Impossible { message } = choose(&[], None, &set(&[]), "x") else {
            panic!("no methods");
        };
        assert!(message.contains("offers no method"), "{message}");
    }
}
