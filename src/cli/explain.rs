//! `herd explain PATH`: reads an attempt's recording and facts file (a `.cast`, or a task's
//! folder for its latest attempt) and prints the timeline `replay::explain` makes of them.

use std::io::BufReader;
use std::path::Path;

use color_eyre::eyre::Result;
use serde_json::Value;

use super::args::ExplainArgs;
use super::inputs::{EXIT_INVALID, load_profiles, print_problems};
use crate::core::failure_context::headline_of;
use crate::replay::cast::{Step, read_header};
use crate::replay::explain::{AttemptRecord, explain as explain_attempt};
use crate::replay::print::resolve_cast;

pub(super) fn explain(args: &ExplainArgs) -> Result<i32> {
    let cast = match resolve_cast(&args.path) {
        Ok(cast) => cast,
        Err(error) => {
            eprintln!("herd: {}: {error}", args.path.display());
            return Ok(EXIT_INVALID);
        }
    };
    let file = match std::fs::File::open(&cast) {
        Ok(file) => file,
        Err(error) => {
            eprintln!(
                "herd: {}: cannot read the recording: {error}",
                cast.display()
            );
            return Ok(EXIT_INVALID);
        }
    };
    let (header, mut problems, mut reader) = match read_header(BufReader::new(file)) {
        Ok(read) => read,
        Err(error) => {
            eprintln!("herd: {}: {error}", cast.display());
            return Ok(EXIT_INVALID);
        }
    };
    let mut events = Vec::new();
    while let Some(step) = reader.next_step()? {
        match step {
            Step::Event(event) => events.push(event),
            Step::Problem(problem) => problems.push(problem),
        }
    }
    let facts = read_facts(&cast.with_extension("json"));
    let profiles = match load_profiles(args.profiles.as_deref()) {
        Ok(profiles) => profiles,
        Err(problems) => {
            print_problems(&problems);
            return Ok(EXIT_INVALID);
        }
    };
    let agent = facts
        .as_ref()
        .and_then(|f| f.get("agent"))
        .and_then(Value::as_str)
        .map(str::to_string);
    let profile = args
        .agent
        .as_deref()
        .or(agent.as_deref())
        .and_then(|name| profiles.get(name));
    let errors = read_facts(&cast.with_extension("errors.json"));
    println!("{}", cast.display());
    for line in explain_attempt(&AttemptRecord {
        header: &header,
        events: &events,
        facts: facts.as_ref(),
        profile,
        failure_cause: errors.as_ref().and_then(headline),
    }) {
        println!("{line}");
    }
    // An ACP attempt's session, from its protocol log beside the recording.
    let acp_log = cast.with_extension("acp.jsonl");
    if let Ok(text) = std::fs::read_to_string(&acp_log) {
        println!("ACP session ({}):", acp_log.display());
        for line in crate::replay::explain_acp::explain_acp(&text) {
            println!("  {line}");
        }
    }
    for problem in &problems {
        println!("recording problem: {problem}");
    }
    Ok(0)
}

/// The headline of an attempt's `errors.json` (its `lines`, each with `text` and `score`).
fn headline(errors: &Value) -> Option<&str> {
    let lines = errors.get("lines")?.as_array()?;
    headline_of(lines.iter().filter_map(|line| {
        let text = line.get("text")?.as_str()?;
        let score = u8::try_from(line.get("score")?.as_u64()?).ok()?;
        Some((text, score))
    }))
}

/// The attempt's facts file beside the recording, when it is there and is JSON.
fn read_facts(path: &Path) -> Option<Value> {
    let text = std::fs::read_to_string(path).ok()?;
    serde_json::from_str(&text).ok()
}
