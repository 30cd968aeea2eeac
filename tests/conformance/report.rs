//! What the conformance suite prints: the table CLI × scenario → verdict, seconds, and for a
//! wrong verdict (the drift check's point) the profile rules that should have matched, which of
//! its prompt rules see the last screen, and that screen.

use std::fmt::Write;
use std::path::Path;

pub(crate) struct Row {
    pub cli: &'static str,
    pub profile: &'static str,
    pub scenario: String,
    pub expect: &'static str,
    pub verdict: String,
    pub seconds: f64,
    /// From the API's first error answer to the verdict (NaN without one).
    pub after_error: f64,
    pub leftovers: usize,
    pub conforms: bool,
    pub expected_failure: bool,
}

pub(crate) fn table(rows: &[Row]) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:<7} {:<12} {:<28} {:<26} {:<26} {:>6} {:>9} {:>5}  result",
        "cli", "profile", "scenario", "expected", "verdict", "secs", "err→end", "procs"
    );
    for r in rows {
        let result = match (r.conforms, r.expected_failure) {
            (true, false) => "ok",
            (false, true) => "expected failure",
            (false, false) => "WRONG",
            (true, true) => "UNEXPECTED PASS",
        };
        let _ = writeln!(
            out,
            "{:<7} {:<12} {:<28} {:<26} {:<26} {:>6.1} {:>9} {:>5}  {result}",
            r.cli,
            r.profile,
            r.scenario,
            r.expect,
            r.verdict,
            r.seconds,
            if r.after_error.is_nan() {
                "-".to_string()
            } else {
                format!("{:.1}", r.after_error)
            },
            r.leftovers
        );
    }
    out
}

/// For a wrong verdict: which of the profile's rules should have decided it, and the end of the
/// screen none of them matched. Names the rule list (`claude.auth`) so a maintainer knows what
/// to update after a CLI release.
pub(crate) fn drift(profile: &str, expect: &str, screen: &str) -> String {
    let key = match expect {
        "failed_auth" => "auth",
        "failed_quota" => "quota",
        "failed_process" => "transient",
        _ => "",
    };
    let file = profile.split('-').next().unwrap_or(profile);
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("assets/profiles/{file}.toml"));
    let table = std::fs::read_to_string(&path)
        .ok()
        .and_then(|text| text.parse::<toml::Table>().ok());
    let entry = table
        .as_ref()
        .and_then(|t| t.get("profiles")?.get(profile).cloned());
    let mut out = String::new();
    if !key.is_empty() {
        let rules = entry.as_ref().and_then(|e| e.get(key).cloned());
        let _ = writeln!(out, "  rule {profile}.{key} no longer matches: {:?}", rules);
    }
    // A dialog left on screen: which prompt rules see it. None matching a dialog the agent
    // waits on is the drift to fix.
    let prompts = entry
        .as_ref()
        .and_then(|e| e.get("prompts")?.as_array().cloned())
        .unwrap_or_default();
    let seen: Vec<String> = prompts
        .iter()
        .filter_map(|rule| {
            let name = rule.get("name")?.as_str()?;
            let pattern = regex::Regex::new(rule.get("pattern")?.as_str()?).ok()?;
            let verdict = if pattern.is_match(screen) {
                "matches"
            } else {
                "no match"
            };
            Some(format!("{profile}.prompts.{name}: {verdict}"))
        })
        .collect();
    if !seen.is_empty() {
        let _ = writeln!(
            out,
            "  prompt rules on the last screen: {}",
            seen.join(", ")
        );
    }
    let tail: Vec<&str> = screen.lines().filter(|l| !l.trim().is_empty()).collect();
    let tail = &tail[tail.len().saturating_sub(25)..];
    let _ = writeln!(out, "  last screen:\n    {}", tail.join("\n    "));
    out
}
