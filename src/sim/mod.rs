//! `herd sim`: the built-in agent simulator that stands in for agent CLIs in tests and the demo.
//! It plays a scenario in a terminal, drawing and failing like the real CLIs, or prints Claude's
//! event stream and writes the signal file. This file resolves the command line and herd's
//! environment and owns raw mode. Like a model, it prints the marker only when its prompt asks.

mod builtin;
mod draw;
mod interact;
mod keys;
mod parse;
mod player;
mod scenario;
mod signal_file;
mod step_error;
mod stream_json;
mod structured;
mod structured_play;
mod terminal;
mod text;

use std::io::{self, IsTerminal};

use color_eyre::eyre::WrapErr;

use keys::Input;
use parse::{ScenarioError, parse_scenario};
use player::{Context, Ending, Player};
use scenario::{Action, Scenario};
use terminal::{RawMode, Size, Terminal};
use text::Placeholders;

/// Exit code for a scenario that cannot be found or parsed.
const BAD_SCENARIO_EXIT: i32 = 2;

#[derive(Debug, clap::Args, Clone)]
pub struct SimArgs {
    /// Scenario: a built-in name (see --list) or a path to a scenario .toml file
    #[arg(required_unless_present = "list")]
    pub scenario: Option<String>,
    /// The task's rendered prompt, as the real CLIs take it; echoing scenarios show it. With
    /// --resume: the new message for the resumed session (the operator's answer)
    #[arg(long)]
    pub prompt: Option<String>,
    /// Play the scenario as a resumed session with this id: steps with `when_resumed = true`
    /// play instead of those with `when_resumed = false`, and {session_id} is this id [default:
    /// a new session, sim-$HERD_TASK_ID-$HERD_ATTEMPT (sim-session without a task id)]
    #[arg(long, value_name = "SESSION_ID")]
    pub resume: Option<String>,
    /// The completion marker to print [default: $HERD_COMPLETION_MARKER, else
    /// TASK_COMPLETE:$HERD_TASK_ID]
    #[arg(long)]
    pub marker: Option<String>,
    /// List the built-in scenarios with a line on each
    #[arg(long)]
    pub list: bool,
}

/// Runs `herd sim`; returns the process exit code.
pub fn run(args: &SimArgs) -> color_eyre::Result<i32> {
    if args.list {
        print_list();
        return Ok(0);
    }
    let Some(name) = args.scenario.as_deref() else {
        eprintln!("herd sim: name a scenario (see `herd sim --list`)");
        return Ok(BAD_SCENARIO_EXIT);
    };
    if args
        .resume
        .as_deref()
        .is_some_and(|id| id.trim().is_empty())
    {
        eprintln!("herd sim: --resume needs a session id");
        return Ok(BAD_SCENARIO_EXIT);
    }
    let scenario = match load(name) {
        Ok(scenario) => scenario,
        Err(error) => {
            eprintln!("herd sim: {error}");
            return Ok(BAD_SCENARIO_EXIT);
        }
    };
    let context = context_from_env(args);
    let stdin_is_terminal = io::stdin().is_terminal();
    let raw_mode = if reads_input(&scenario) {
        Some(RawMode::enable_if_terminal().wrap_err("cannot switch the terminal to raw mode")?)
    } else {
        None
    };
    let terminal = Terminal::new(io::stdout(), Size::OfStdout);
    let mut player = Player::new(terminal, Input::from_stdin(stdin_is_terminal), context);
    let played = player.play(&scenario);
    let finished = player.finish();
    drop(raw_mode);
    let ending = played.wrap_err("writing to the terminal failed")?;
    finished.wrap_err("writing to the terminal failed")?;
    Ok(match ending {
        Ending::Exit(code) => code,
        Ending::Failed { code, message } => {
            eprintln!("{message}");
            code
        }
    })
}

/// A built-in scenario by name, or a scenario file by path.
fn load(name: &str) -> Result<Scenario, ScenarioError> {
    let looks_like_path = name.ends_with(".toml") || name.contains(std::path::MAIN_SEPARATOR);
    if !looks_like_path {
        return match builtin::built_in(name) {
            Some(text) => parse_scenario(&format!("built-in scenario {name}"), text),
            None => Err(ScenarioError {
                origin: name.to_string(),
                line: None,
                message: format!(
                    "no built-in scenario by that name; built-in: {} (or give a path to a .toml \
                     file)",
                    builtin::names()
                ),
            }),
        };
    }
    let text = std::fs::read_to_string(name).map_err(|error| ScenarioError {
        origin: name.to_string(),
        line: None,
        message: format!("cannot read the scenario file: {error}"),
    })?;
    parse_scenario(name, &text)
}

fn print_list() {
    let width = builtin::BUILT_IN
        .iter()
        .map(|(name, _)| name.len())
        .max()
        .unwrap_or(0);
    for (name, text) in builtin::BUILT_IN {
        let description = parse_scenario(name, text)
            .map(|scenario| scenario.description)
            .unwrap_or_else(|error| format!("(broken: {error})"));
        println!("{name:width$}  {description}");
    }
}

/// Whether any step waits for keys or terminal answers (then raw mode is needed).
fn reads_input(scenario: &Scenario) -> bool {
    scenario.steps.iter().any(|step| {
        matches!(
            step.action,
            Action::Query(_) | Action::Dialog(_) | Action::Press(_) | Action::Idle(_)
        )
    })
}

fn context_from_env(args: &SimArgs) -> Context {
    let env = |name: &str| std::env::var(name).ok().filter(|value| !value.is_empty());
    let task_id = env("HERD_TASK_ID");
    let marker = resolve_marker(
        args.marker.as_deref(),
        env("HERD_COMPLETION_MARKER"),
        task_id.as_deref(),
    );
    let attempt = env("HERD_ATTEMPT")
        .and_then(|value| value.trim().parse::<u32>().ok())
        .unwrap_or(1)
        .max(1);
    let prompt = args.prompt.clone().unwrap_or_else(|| {
        if args.resume.is_some() {
            "Continue.".to_string()
        } else {
            format!("Simulated task. Do the work, then print exactly: {marker}")
        }
    });
    let marker_asked = is_marker_asked(&prompt, &marker, args.resume.is_some());
    let session_id = args
        .resume
        .clone()
        .unwrap_or_else(|| new_session_id(task_id.as_deref(), attempt));
    let cwd_path = std::env::current_dir().unwrap_or_default();
    let cwd = cwd_path.display().to_string();
    let dir = cwd_path
        .file_name()
        .map_or_else(|| cwd.clone(), |name| name.to_string_lossy().into_owned());
    let mut placeholders = Placeholders::default();
    // What the agent says where a scenario's text has the marker, when nobody asked for it.
    let said_marker = if marker_asked { &marker } else { "Done." };
    placeholders.set("marker", said_marker.to_string());
    placeholders.set("prompt", prompt.clone());
    placeholders.set("task_id", task_id.unwrap_or_else(|| "sim".to_string()));
    placeholders.set("attempt", attempt.to_string());
    placeholders.set("session_id", session_id.clone());
    placeholders.set("cwd", cwd.clone());
    placeholders.set("dir", dir);
    Context {
        marker,
        marker_asked,
        prompt,
        attempt,
        session_id,
        resumed: args.resume.is_some(),
        signal_file: std::env::var_os("HERD_SIGNAL_FILE")
            .filter(|path| !path.is_empty())
            .map(std::path::PathBuf::from),
        cwd,
        placeholders,
    }
}

/// The id of a session this run starts: `sim-TASK-ATTEMPT`, `sim-session` without a task id.
fn new_session_id(task_id: Option<&str>, attempt: u32) -> String {
    match task_id {
        Some(task_id) => format!("sim-{task_id}-{attempt}"),
        None => "sim-session".to_string(),
    }
}

/// Whether the agent was told to print `marker`: its prompt contains it, or it resumes a session.
fn is_marker_asked(prompt: &str, marker: &str, resumed: bool) -> bool {
    resumed || prompt.contains(marker)
}

/// `--marker`, else `HERD_COMPLETION_MARKER`, else `TASK_COMPLETE:` + the task id.
fn resolve_marker(flag: Option<&str>, from_env: Option<String>, task_id: Option<&str>) -> String {
    flag.map(str::to_string)
        .or(from_env)
        .unwrap_or_else(|| format!("TASK_COMPLETE:{}", task_id.unwrap_or("sim")))
}

#[cfg(test)]
mod tests;
