//! `herd explain`: what herd saw and decided during one attempt, as a timeline a person can read
//! when a CLI update breaks something: from the recording's markers and output, the attempt's
//! facts, and the profile's rules applied to the last screen (which match, which do not). Pure.

use serde_json::Value;

use super::cast::{Event, EventKind, Header};
use crate::core::classify;
use crate::core::facts::failure_context;
use crate::core::profile::Profile;
use crate::core::screen::Screen;
use crate::core::screen::detect::{self, ScreenView};
use crate::core::task::FailureType;

/// What one attempt's files hold, read by the caller.
pub struct AttemptRecord<'a> {
    pub header: &'a Header,
    pub events: &'a [Event],
    /// The attempt's facts file, when there is one.
    pub facts: Option<&'a Value>,
    /// The profile the attempt ran with, when it is known and still defined.
    pub profile: Option<&'a Profile>,
    /// The line of the output that says best why it failed (`errors.json`'s headline).
    pub failure_cause: Option<&'a str>,
}

/// The explanation, a line each.
pub fn explain(record: &AttemptRecord<'_>) -> Vec<String> {
    let mut out = summary(record);
    out.push(String::new());
    out.push("timeline (seconds since the agent started):".into());
    out.extend(timeline(record.events));
    if let Some(facts) = record.facts {
        out.extend(answers(facts));
        out.extend(processes_ended(facts));
    }
    out.push(String::new());
    out.extend(last_screen(record));
    out
}

fn summary(record: &AttemptRecord<'_>) -> Vec<String> {
    let Some(facts) = record.facts else {
        return vec![
            format!(
                "{}x{} recording; no facts file beside it (the attempt was interrupted, or this is \
                 not one of herd's recordings)",
                record.header.cols, record.header.rows
            ),
            format!("{} events", record.events.len()),
        ];
    };
    let text = |k: &str| facts.get(k).and_then(Value::as_str).unwrap_or("?");
    let number = facts.get("attempt").and_then(Value::as_u64).unwrap_or(0);
    let mut out = vec![format!(
        "attempt {number} · agent {} · {}x{} · {} → {} ({:.1} s)",
        text("agent"),
        record.header.cols,
        record.header.rows,
        text("started_at"),
        text("ended_at"),
        facts
            .get("duration_sec")
            .and_then(Value::as_f64)
            .unwrap_or(0.0)
    )];
    if let Some(argv) = facts.get("argv").and_then(Value::as_array) {
        let words: Vec<String> = argv
            .iter()
            .filter_map(Value::as_str)
            .map(|w| shorten(w, 80))
            .collect();
        out.push(format!("argv: {}", words.join(" ")));
    }
    let exit = match (
        facts.get("exit_code").and_then(Value::as_i64),
        facts.get("exit_signal").and_then(Value::as_str),
    ) {
        (Some(code), _) => format!("exit code {code}"),
        (None, Some(signal)) => format!("ended by signal {signal}"),
        (None, None) => "no exit status".into(),
    };
    let marker = match facts.get("completion_marker_seen").and_then(Value::as_bool) {
        Some(true) => "marker seen",
        Some(false) => "marker not seen",
        None => "marker ?",
    };
    out.push(format!("verdict: {} ({marker}, {exit})", text("verdict")));
    let evidence = facts.get("failure_evidence").and_then(Value::as_str);
    let failure = facts
        .get("failure_type")
        .cloned()
        .and_then(|f| serde_json::from_value::<FailureType>(f).ok());
    let cause = record
        .failure_cause
        .filter(|_| evidence.is_some() && failure.is_some_and(failure_context::headline_says_more));
    if let Some(why) = failure_context::why_failed(evidence, cause) {
        let label = if cause.is_some() { "why" } else { "evidence" };
        out.push(format!("{label}: {}", shorten(&why, 300)));
    }
    out
}

/// One line per marker, input and resize; the output between them summed up.
fn timeline(events: &[Event]) -> Vec<String> {
    let mut out = Vec::new();
    let mut pending: Option<(f64, usize, usize)> = None; // first time, writes, bytes
    let flush = |pending: &mut Option<(f64, usize, usize)>, out: &mut Vec<String>| {
        if let Some((at, writes, bytes)) = pending.take() {
            let what = if writes == 1 { "write" } else { "writes" };
            out.push(format!(
                "{at:>9.3}  output    {writes} {what}, {bytes} bytes"
            ));
        }
    };
    for event in events {
        if event.kind == EventKind::Output {
            let entry = pending.get_or_insert((event.time, 0, 0));
            entry.1 += 1;
            entry.2 += event.data.len();
            continue;
        }
        flush(&mut pending, &mut out);
        let (what, text) = match event.kind {
            EventKind::Marker => marker_kind(&event.data),
            EventKind::Input => ("typed", format!("herd sent {:?}", event.data)),
            EventKind::Resize => ("resize", format!("the terminal became {}", event.data)),
            EventKind::Exit => ("exit", format!("the agent exited ({})", event.data)),
            EventKind::Output | EventKind::Other(_) => ("event", event.data.clone()),
        };
        out.push(format!(
            "{:>9.3}  {what:<9} {}",
            event.time,
            shorten(&text, 300)
        ));
    }
    flush(&mut pending, &mut out);
    if out.is_empty() {
        out.push("      (no events)".into());
    }
    out
}

/// A marker's kind, from the labels herd writes (`run::engine::note_label`).
fn marker_kind(label: &str) -> (&'static str, String) {
    let kinds = [
        ("prompt ", "prompt"),
        ("waiting for operator", "waiting"),
        ("auto answer", "answered"),
        ("operator answer", "answered"),
        ("answer ", "decision"),
        ("taken ", "taken"),
        ("not taken ", "resent"),
        ("completion marker seen", "marker"),
        ("result event", "result"),
        ("signal file", "signal"),
        ("ending", "ending"),
        ("verdict", "verdict"),
        ("bell", "bell"),
        // Take-over keys, counted but not recorded (`run::recorder`).
        ("operator typed", "typed"),
    ];
    let kind = kinds
        .iter()
        .find(|(prefix, _)| label.starts_with(prefix))
        .map_or("note", |(_, kind)| kind);
    (kind, label.to_string())
}

/// Every answer of the attempt with the guard's reason, from the facts file.
fn answers(facts: &Value) -> Vec<String> {
    let Some(list) = facts.get("approvals").and_then(Value::as_array) else {
        return Vec::new();
    };
    if list.is_empty() {
        return Vec::new();
    }
    let mut out = vec![
        String::new(),
        "answers (with what the guard decided and why):".into(),
    ];
    for a in list {
        let text = |k: &str| a.get(k).and_then(Value::as_str).unwrap_or("");
        let at = a.get("at_sec").and_then(Value::as_f64).unwrap_or(0.0);
        let request = a
            .get("request")
            .filter(|r| !r.is_null())
            .map(|r| {
                let field = |k: &str| r.get(k).and_then(Value::as_str).unwrap_or("?");
                format!("{} {}", field("kind"), field("text"))
            })
            .unwrap_or_else(|| "(a prompt that approves nothing)".into());
        let decision = match (text("decision"), text("why")) {
            ("", _) => String::new(),
            (d, "") => format!(" — {d}"),
            (d, why) => format!(" — {d}: {why}"),
        };
        let channel = channel_of(a);
        out.push(format!(
            "{at:>9.3}  {} via {channel} {}: {request}{decision}",
            text("by"),
            answer_given(a)
        ));
    }
    out
}

/// What was answered: the option sent over a structured channel, else the rule and the keys.
pub fn answer_given(answer: &Value) -> String {
    let text = |k: &str| answer.get(k).and_then(Value::as_str).unwrap_or("");
    match (text("option"), channel_of(answer)) {
        ("", _) => format!("{} {:?}", text("rule"), text("keys")),
        (option, "hook") if !text("title").is_empty() => format!("{} {option}", text("title")),
        (option, _) => option.to_string(),
    }
}

/// The channel an answer came through; older facts files name none (screen, or ACP with an option).
pub fn channel_of(answer: &Value) -> &str {
    let option = answer.get("option").is_some_and(|o| !o.is_null());
    match answer.get("channel").and_then(Value::as_str) {
        Some(channel) => channel,
        None if option => "acp",
        None => "screen",
    }
}

/// Processes herd ended at the attempt's end (process hygiene), from the facts file.
fn processes_ended(facts: &Value) -> Vec<String> {
    let list = ["processes_ended", "ended_processes", "survivors_ended"]
        .iter()
        .find_map(|k| facts.get(*k).and_then(Value::as_array));
    let Some(list) = list.filter(|l| !l.is_empty()) else {
        return Vec::new();
    };
    let mut out = vec![String::new(), "processes herd ended:".into()];
    out.extend(
        list.iter()
            .map(|p| format!("  {}", shorten(&p.to_string(), 200))),
    );
    out
}

/// The recording's last screen, fed through herd's emulator, and what the profile makes of it.
fn last_screen(record: &AttemptRecord<'_>) -> Vec<String> {
    let mut screen = Screen::new(record.header.rows, record.header.cols);
    for event in record.events {
        match event.kind {
            EventKind::Output => {
                screen.feed(event.data.as_bytes(), 0);
            }
            EventKind::Resize => {
                if let Some((cols, rows)) = super::cast::parse_size(&event.data) {
                    screen.resize(rows, cols);
                }
            }
            _ => {}
        }
    }
    let rows = screen.visible_rows();
    let mut out = vec!["the last screen:".to_string()];
    let last_text = rows
        .iter()
        .rposition(|r| !r.is_empty())
        .map_or(0, |i| i + 1);
    out.extend(rows[..last_text].iter().map(|r| format!("  │ {r}")));
    let Some(profile) = record.profile else {
        out.push("(the profile is unknown here: no rules applied)".into());
        return out;
    };
    out.push(String::new());
    out.push(format!(
        "the profile {}'s rules on the last screen:",
        profile.name
    ));
    let text = rows.join("\n");
    let yes_no = |b: bool| if b { "matches" } else { "no match" };
    if profile.ready.is_some() {
        out.push(format!(
            "  ready    {}",
            yes_no(detect::is_ready(profile, &text))
        ));
    }
    if !profile.busy.is_empty() {
        out.push(format!(
            "  busy     {}",
            yes_no(detect::is_busy(profile, &text))
        ));
    }
    let view = ScreenView {
        rows: &rows,
        cursor_row: usize::from(screen.cursor().0),
        first_row_number: screen.rows_scrolled_total(),
    };
    let sightings = detect::find_prompts(profile, view);
    for (index, rule) in profile.prompts.iter().enumerate() {
        let seen = sightings.iter().find(|s| s.rule == index);
        out.push(match seen {
            Some(s) => format!(
                "  prompt   {} matches: {}",
                rule.name,
                shorten(&s.text, 120)
            ),
            None => format!("  prompt   {} no match", rule.name),
        });
    }
    let failures = classify::failure_texts(&rows, profile);
    if failures.is_empty() {
        out.push("  failure texts (auth, quota, config, transient): none match".into());
    }
    for (list, line) in failures {
        out.push(format!("  {list:<8} matches: {}", shorten(&line, 200)));
    }
    out
}

/// `text` cut to `max` characters with an ellipsis.
fn shorten(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let mut cut: String = text.chars().take(max.saturating_sub(1)).collect();
    cut.push('…');
    cut
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::profile::ProfileSet;

    fn event(time: f64, kind: EventKind, data: &str) -> Event {
        Event {
            time,
            kind,
            data: data.into(),
            line: 0,
        }
    }

    #[test]
    fn a_timeline_of_what_herd_saw_and_did_and_the_rules_on_the_last_screen() {
        let profiles =
            ProfileSet::build(&crate::assets::built_in_profile_texts(), None).expect("profiles");
        let profile = profiles.get("sim").expect("sim");
        let header = Header {
            version: 2,
            cols: 60,
            rows: 10,
            title: None,
            timestamp: None,
            idle_time_limit: None,
        };
        let events = [
            event(0.1, EventKind::Output, "Starting.\r\n"),
            event(
                0.2,
                EventKind::Output,
                "Bash command\r\n\r\n  rm -rf ~\r\n  Clean up\r\n\r\nDo you want to proceed?\r\n❯ 1. Yes\r\n",
            ),
            event(0.25, EventKind::Marker, "prompt press_1: ❯ 1. Yes"),
            event(
                0.25,
                EventKind::Marker,
                "waiting for operator press_1: ❯ 1. Yes",
            ),
            event(
                60.3,
                EventKind::Marker,
                "verdict: failed_permission_blocked (Bash(rm -rf ~) — refuse)",
            ),
        ];
        let facts: Value = serde_json::json!({
            "attempt": 1, "agent": "sim", "started_at": "2026-11-25T01:00:00Z",
            "ended_at": "2026-11-25T01:01:00Z", "duration_sec": 60.3, "exit_code": null,
            "exit_signal": "SIGTERM", "completion_marker_seen": false,
            "verdict": "failed", "failure_evidence": "Bash(rm -rf ~) — refuse",
            "approvals": []
        });
        let lines = explain(&AttemptRecord {
            header: &header,
            events: &events,
            facts: Some(&facts),
            profile: Some(profile),
            failure_cause: None,
        });
        let text = lines.join("\n");
        for expected in [
            "verdict: failed (marker not seen, ended by signal SIGTERM)",
            "    0.100  output    2 writes, 90 bytes",
            "    0.250  prompt    prompt press_1: ❯ 1. Yes",
            "    0.250  waiting   waiting for operator press_1",
            "   60.300  verdict   verdict: failed_permission_blocked",
            "  │ Do you want to proceed?",
            "  prompt   press_1 matches: ❯ 1. Yes",
            "  prompt   press_p no match",
            "  failure texts (auth, quota, config, transient): none match",
        ] {
            assert!(text.contains(expected), "missing {expected:?} in:\n{text}");
        }
    }

    #[test]
    fn a_failure_text_wrapped_over_two_rows_is_named_with_its_rule_list() {
        let profiles =
            ProfileSet::build(&crate::assets::built_in_profile_texts(), None).expect("profiles");
        let header = Header {
            version: 2,
            cols: 20,
            rows: 5,
            title: None,
            timestamp: None,
            idle_time_limit: None,
        };
        let events = [event(
            0.5,
            EventKind::Output,
            "Error: Invalid API\r\nkey\r\n",
        )];
        let lines = explain(&AttemptRecord {
            header: &header,
            events: &events,
            facts: None,
            profile: profiles.get("sim"),
            failure_cause: None,
        });
        let text = lines.join("\n");
        assert!(
            text.contains("auth     matches: Error: Invalid API key"),
            "{text}"
        );
        assert!(text.contains("no facts file"), "{text}");
    }

    #[test]
    fn the_output_s_headline_comes_before_a_bare_exit_code() {
        let header = Header {
            version: 2,
            cols: 40,
            rows: 5,
            title: None,
            timestamp: None,
            idle_time_limit: None,
        };
        let facts: Value = serde_json::json!({
            "attempt": 1, "agent": "generic", "exit_code": 101, "completion_marker_seen": false,
            "verdict": "failed", "failure_type": "failed_process",
            "failure_evidence": "exit code 101"
        });
        let lines = explain(&AttemptRecord {
            header: &header,
            events: &[],
            facts: Some(&facts),
            profile: None,
            failure_cause: Some("error: could not find `Cargo.toml`"),
        });
        let text = lines.join("\n");
        assert!(
            text.contains("why: error: could not find `Cargo.toml` (exit code 101)"),
            "{text}"
        );
    }
}
