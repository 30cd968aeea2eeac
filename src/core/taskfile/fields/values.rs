//! The task fields that are more than a scalar: maps, the permission policy, lists and
//! enumerations. A child of `fields`; each problem is pushed with its field's place.

use std::collections::BTreeMap;

use serde_json::Value;

use super::Reader;
use crate::core::task::{
    Completion, FailureType, OnComplete, PermissionRules, RetryMode, TaskStatus,
};
use crate::core::taskfile::json_pos::pointer_token;
use crate::core::taskfile::template;

impl Reader<'_> {
    /// An object whose every value passes `item`.
    pub(super) fn map<T>(
        &mut self,
        key: &str,
        expected: &str,
        item_expected: &str,
        item: impl Fn(&Value) -> Option<T>,
    ) -> Option<BTreeMap<String, T>> {
        let value = self.object.get(key)?;
        let Some(members) = value.as_object() else {
            self.wrong_field(key, expected, value);
            return None;
        };
        let mut out = BTreeMap::new();
        for (name, member) in members {
            match item(member) {
                Some(v) => {
                    out.insert(name.clone(), v);
                }
                None => {
                    let pointer = format!(
                        "{}/{}/{}",
                        self.ctx.pointer,
                        pointer_token(key),
                        pointer_token(name)
                    );
                    self.wrong(
                        &pointer,
                        &format!("\"{key}.{name}\""),
                        item_expected,
                        member,
                    );
                }
            }
        }
        Some(out)
    }

    /// Environment values are templates too (`launch` renders them).
    pub(super) fn env(&mut self) -> BTreeMap<String, String> {
        let env = self.map(
            "env",
            "an object of strings like {\"NAME\": \"value\"}",
            "a string",
            |v| v.as_str().map(str::to_string),
        );
        let env = env.unwrap_or_default();
        for (name, value) in &env {
            if let Err(error) = template::placeholders(value) {
                let pointer = format!("{}/env/{}", self.ctx.pointer, pointer_token(name));
                let location = self.location(&pointer);
                self.push(&pointer, location, format!("\"env.{name}\": {error}"));
            }
        }
        env
    }

    /// `auto_<rule>` switches and `allow`/`ask`/`deny` rule lists; anything else is a problem.
    pub(super) fn permission_policy(&mut self) -> (BTreeMap<String, bool>, PermissionRules) {
        let mut switches = BTreeMap::new();
        let mut rules = PermissionRules::default();
        let Some(value) = self.object.get("permission_policy") else {
            return (switches, rules);
        };
        let Some(members) = value.as_object() else {
            self.wrong_field(
                "permission_policy",
                "an object of switches like {\"auto_press_1\": true}",
                value,
            );
            return (switches, rules);
        };
        for (name, member) in members {
            let pointer = format!(
                "{}/permission_policy/{}",
                self.ctx.pointer,
                pointer_token(name)
            );
            let list = match name.as_str() {
                "allow" => Some(&mut rules.allow),
                "ask" => Some(&mut rules.ask),
                "deny" => Some(&mut rules.deny),
                _ => None,
            };
            if let Some(list) = list {
                if let Some(items) = self.rule_list(name, &pointer, member) {
                    *list = items;
                }
                continue;
            }
            if let Some(on) = self.policy_switch(name, &pointer, member) {
                switches.insert(name.clone(), on);
            }
        }
        (switches, rules)
    }

    /// The rule list `permission_policy.<name>`: `None` when not a list of strings; a rule that
    /// does not parse is a problem, and kept.
    fn rule_list(&mut self, name: &str, pointer: &str, member: &Value) -> Option<Vec<String>> {
        let items: Option<Vec<String>> = member.as_array().and_then(|items| {
            items
                .iter()
                .map(|i| i.as_str().map(str::to_string))
                .collect()
        });
        let Some(items) = items else {
            self.wrong(
                pointer,
                &format!("\"permission_policy.{name}\""),
                "a list of rules like [\"Bash(npm test:*)\", \"Edit(src/**)\"]",
                member,
            );
            return None;
        };
        for (i, item) in items.iter().enumerate() {
            if let Err(e) = crate::core::guard::Rule::parse(item) {
                let at = format!("{pointer}/{i}");
                let location = self.location(&at);
                self.push(&at, location, format!("\"permission_policy.{name}\": {e}"));
            }
        }
        Some(items)
    }

    /// The switch `permission_policy.<name>`: a name not `auto_<rule>` is a problem (its value
    /// kept); a value not a boolean is a problem.
    fn policy_switch(&mut self, name: &str, pointer: &str, member: &Value) -> Option<bool> {
        if !name.starts_with("auto_") {
            let location = self
                .ctx
                .positions
                .key(pointer)
                .or_else(|| self.location(pointer));
            self.push(
                pointer,
                location,
                format!(
                    "\"permission_policy\" switch \"{name}\" does nothing: switches are named \
                     \"auto_<prompt rule>\", e.g. \"auto_press_1\", and rule lists \
                     \"allow\", \"ask\", \"deny\""
                ),
            );
            return member.as_bool();
        }
        let on = member.as_bool();
        if on.is_none() {
            self.wrong(
                pointer,
                &format!("\"permission_policy.{name}\""),
                "true or false",
                member,
            );
        }
        on
    }

    /// A list whose every item passes `item`; `None` if the field is absent or not a list.
    pub(super) fn list<T>(
        &mut self,
        key: &str,
        expected: &str,
        item_expected: &str,
        item: impl Fn(&Value) -> Option<T>,
    ) -> Option<Vec<Option<T>>> {
        let value = self.object.get(key)?;
        let Some(items) = value.as_array() else {
            self.wrong_field(key, expected, value);
            return None;
        };
        let mut out = Vec::with_capacity(items.len());
        for (i, element) in items.iter().enumerate() {
            let parsed = item(element);
            if parsed.is_none() {
                let pointer = format!("{}/{}/{i}", self.ctx.pointer, pointer_token(key));
                let shown = format!("\"{key}\" item {}", i + 1);
                self.wrong(&pointer, &shown, item_expected, element);
            }
            out.push(parsed);
        }
        Some(out)
    }

    pub(super) fn command(&mut self) -> Option<Vec<String>> {
        let expected = "a non-empty list of strings like [\"mycli\", \"{rendered_prompt}\"]";
        let items = self.list("command", expected, "a string", |v| {
            v.as_str().map(str::to_string)
        })?;
        if items.is_empty()
            && let Some(value) = self.object.get("command")
        {
            self.wrong_field("command", expected, value);
            return None;
        }
        for (i, arg) in items.iter().enumerate() {
            if let Some(Err(error)) = arg.as_deref().map(template::placeholders) {
                let pointer = format!("{}/command/{i}", self.ctx.pointer);
                let location = self.location(&pointer);
                self.push(
                    &pointer,
                    location,
                    format!("\"command\" item {}: {error}", i + 1),
                );
            }
        }
        items.into_iter().collect()
    }

    /// `args`: strings for a command file's `$ARGUMENTS` and `$1`, `$2`, ...
    pub(super) fn args(&mut self) -> Vec<String> {
        let items = self.list(
            "args",
            "a list of strings like [\"src/lib.rs\", \"fix the panic\"]",
            "a string",
            |v| v.as_str().map(str::to_string),
        );
        items.unwrap_or_default().into_iter().flatten().collect()
    }

    pub(super) fn completion(&mut self) -> Option<Completion> {
        let value = self.object.get("completion")?;
        let completion = value.as_str().and_then(Completion::parse);
        if completion.is_none() {
            let names = Completion::ALL
                .map(|c| format!("\"{}\"", c.as_str()))
                .join(", ");
            self.wrong_field("completion", &format!("one of {names}"), value);
        }
        completion
    }

    /// `on_complete`: `"commit"`, or a command as a non-empty list of strings.
    pub(super) fn on_complete(&mut self) -> Option<OnComplete> {
        let value = self.object.get("on_complete")?;
        let expected = "\"commit\" or a command as a non-empty list of strings like \
                        [\"gh\", \"pr\", \"create\", \"--draft\", \"--fill\"]";
        match value {
            Value::String(word) if word == "commit" => Some(OnComplete::Commit),
            Value::Array(items) if !items.is_empty() => {
                let argv: Option<Vec<String>> = items
                    .iter()
                    .map(|item| item.as_str().map(str::to_string))
                    .collect();
                if argv.is_none() {
                    self.wrong_field("on_complete", expected, value);
                }
                argv.map(OnComplete::Command)
            }
            _ => {
                self.wrong_field("on_complete", expected, value);
                None
            }
        }
    }

    pub(super) fn retry_mode(&mut self) -> RetryMode {
        let Some(value) = self.object.get("retry_mode") else {
            return RetryMode::default();
        };
        match value.as_str().and_then(RetryMode::parse) {
            Some(mode) => mode,
            None => {
                self.wrong_field("retry_mode", "\"restart\" or \"resume\"", value);
                RetryMode::default()
            }
        }
    }

    pub(super) fn retry_on(&mut self) -> Option<Vec<FailureType>> {
        let names = FailureType::ALL.map(FailureType::as_str).join(", ");
        let items = self.list(
            "retry_on",
            &format!("a list of failure types from {names}"),
            &format!("one of {names}"),
            |v| v.as_str().and_then(FailureType::parse),
        )?;
        items.into_iter().collect()
    }

    pub(super) fn status(&mut self) -> Option<TaskStatus> {
        let value = self.object.get("status")?;
        let status = value.as_str().and_then(TaskStatus::parse);
        if status.is_none() {
            let names = TaskStatus::ALL.map(TaskStatus::as_str).join(", ");
            self.wrong_field("status", &format!("one of {names}"), value);
        }
        status
    }

    pub(super) fn result(&mut self) -> Option<Value> {
        match self.object.get("result")? {
            Value::Null => None,
            value @ Value::Object(_) => Some(value.clone()),
            value => {
                self.wrong_field("result", "an object or null", value);
                None
            }
        }
    }
}
