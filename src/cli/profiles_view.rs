//! Text for `herd profiles`: a line per profile, or one profile with every rule in full.

use std::fmt::Write;

use crate::core::profile::{Profile, ProfileSet};

/// One line per profile: name, origin, command and rule names.
pub(super) fn describe_all(set: &ProfileSet) -> String {
    let mut out = String::new();
    let width = set.names().map(str::len).max().unwrap_or(4).max(4);
    let _ = writeln!(
        out,
        "{:<width$}  {:<20}  COMMAND / PROMPT RULES",
        "NAME", "ORIGIN"
    );
    for p in set.iter() {
        let command = if p.command.is_empty() {
            "(the task's \"command\")".to_string()
        } else {
            p.command.join(" ")
        };
        let _ = writeln!(
            out,
            "{:<width$}  {:<20}  {command}",
            p.name,
            p.origin.to_string()
        );
        let rules: Vec<String> = p
            .prompts
            .iter()
            .map(|r| {
                let auto = if r.auto_by_default { " (auto)" } else { "" };
                format!("{}{auto} -> {:?}", r.name, r.send)
            })
            .collect();
        if !rules.is_empty() {
            let _ = writeln!(
                out,
                "{:<width$}  {:<20}  prompts: {}",
                "",
                "",
                rules.join(", ")
            );
        }
        if !p.description.is_empty() {
            let _ = writeln!(out, "{:<width$}  {:<20}  {}", "", "", p.description);
        }
    }
    let _ = writeln!(
        out,
        "\nA task lets herd answer a prompt rule by itself with \"permission_policy\": {{\"auto_<rule>\": true}}.\nherd profiles NAME shows one profile in full; --profiles FILE adds or overrides profiles (TOML)."
    );
    out
}

/// Every field and rule of one profile.
pub(super) fn describe_full(p: &Profile) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "profile {} ({})", p.name, p.origin);
    if !p.description.is_empty() {
        let _ = writeln!(out, "  {}", p.description);
    }
    describe_run(&mut out, p);
    describe_screen(&mut out, p);
    describe_prompts_and_rules(&mut out, p);
    out
}

/// Regexes as `'a', 'b'`, or `(none)`.
fn list(v: &[regex::Regex]) -> String {
    if v.is_empty() {
        "(none)".to_string()
    } else {
        v.iter()
            .map(|r| format!("'{}'", r.as_str()))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// How the agent runs: its command, output, sessions, logs, environment, notifications.
fn describe_run(out: &mut String, p: &Profile) {
    let _ = writeln!(out, "  command         {:?}", p.command);
    let output = match p.output {
        crate::core::profile::OutputKind::Screen => "screen (the rendered terminal is read)",
        crate::core::profile::OutputKind::StreamJson => {
            "stream-json (events decide: result, errors, denials, cost; screen texts second)"
        }
    };
    let _ = writeln!(out, "  output          {output}");
    if p.protocol == crate::core::profile::Protocol::Acp {
        let _ = writeln!(out, "  resume          session/load (by herd's ACP client)");
        let mode = p.acp_mode.as_deref().map_or_else(
            || "(none: the agent's own, recorded)".to_string(),
            |mode| format!("{mode} (session/set_mode before the prompt; a task's acp_mode wins)"),
        );
        let _ = writeln!(out, "  acp_mode        {mode}");
    } else if p.resume.is_empty() {
        let _ = writeln!(
            out,
            "  resume          (none: sessions cannot be continued)"
        );
    } else {
        let _ = writeln!(out, "  resume          {:?}", p.resume);
    }
    if p.command
        .iter()
        .any(|a| a == crate::core::wire::app_server::PLACEHOLDER)
    {
        let _ = writeln!(
            out,
            "  approvals       Codex's app server, herd a second client of it ({}; the screen \
             on another host)",
            crate::core::wire::app_server::PLACEHOLDER
        );
    }
    if let Some(kind) = p.agent_log {
        let _ = writeln!(out, "  agent log       {kind:?} (read while it runs)");
    }
    if let Some(kind) = p.transcripts {
        let _ = writeln!(out, "  transcripts     {kind:?} (read after each attempt)");
    }
    if !p.env.is_empty() {
        let _ = writeln!(out, "  env             {:?}", p.env);
    }
    if !p.notify.is_empty() {
        let _ = writeln!(out, "  notify          {:?}", p.notify);
    }
}

/// How its screen is read: exit, readiness, idleness, the texts of each failure, the rows read.
fn describe_screen(out: &mut String, p: &Profile) {
    let _ = writeln!(
        out,
        "  exit_keys       {:?}",
        p.exit_keys
            .as_deref()
            .unwrap_or("(none: waits for the agent to exit)")
    );
    let _ = writeln!(out, "  exit_grace_sec  {}", p.exit_grace_sec);
    let _ = writeln!(
        out,
        "  ready           {}",
        p.ready
            .as_ref()
            .map_or("(none)".to_string(), |r| format!("'{}'", r.as_str()))
    );
    let _ = writeln!(out, "  idle_sec        {}", p.idle_sec);
    let _ = writeln!(out, "  busy            {}", list(&p.busy));
    let _ = writeln!(out, "  auth            {}", list(&p.auth));
    let _ = writeln!(out, "  quota           {}", list(&p.quota));
    let _ = writeln!(out, "  transient       {}", list(&p.transient));
    let _ = writeln!(out, "  config          {}", list(&p.config));
    if !p.config_exit_codes.is_empty() {
        let codes: Vec<String> = p.config_exit_codes.iter().map(i32::to_string).collect();
        let _ = writeln!(out, "  config exits    {}", codes.join(", "));
    }
    let _ = writeln!(out, "  tail_rows       {}", p.tail_rows);
}

/// Its prompt rules, the patterns that read a permission request, its allow, ask and deny rules.
fn describe_prompts_and_rules(out: &mut String, p: &Profile) {
    for r in &p.prompts {
        let _ = writeln!(out, "  prompt {} ({})", r.name, r.label);
        let _ = writeln!(
            out,
            "    pattern  '{}'  [{:?} anchor]",
            r.pattern.as_str(),
            r.anchor
        );
        if !r.unless.is_empty() {
            let _ = writeln!(out, "    unless   {}", list(&r.unless));
        }
        let _ = writeln!(out, "    send     {:?}", r.send);
        let _ = writeln!(
            out,
            "    policy   auto_{}: {}",
            r.name,
            if r.auto_by_default {
                "true by default"
            } else {
                "false by default (the operator answers)"
            }
        );
        if !r.guarded {
            let _ = writeln!(out, "    guard    off (approves nothing an agent does)");
        }
    }
    for c in &p.requests {
        let _ = writeln!(
            out,
            "  request {}  '{}'{}",
            c.kind,
            c.pattern.as_str(),
            if c.drop_last_line {
                "  [last line is a description]"
            } else {
                ""
            }
        );
    }
    for (name, rules) in [
        ("allow", &p.rules.allow),
        ("ask", &p.rules.ask),
        ("deny", &p.rules.deny),
    ] {
        if !rules.is_empty() {
            let texts: Vec<String> = rules.iter().map(ToString::to_string).collect();
            let _ = writeln!(out, "  {name:<15} {}", texts.join(", "));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_profile_on_codexs_app_server_says_where_its_approvals_are_decided() {
        let set = ProfileSet::build(&crate::assets::built_in_profile_texts(), None)
            .expect("built-in profiles");
        let line = "approvals       Codex's app server";
        let codex = describe_full(set.get("codex").expect("codex"));
        assert!(codex.contains(line), "{codex}");
        let json = describe_full(set.get("codex-json").expect("codex-json"));
        assert!(!json.contains(line), "{json}");
    }
}
