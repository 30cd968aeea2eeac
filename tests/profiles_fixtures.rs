//! The built-in profiles of the real agent CLIs (claude, codex, gemini, aider) against the
//! captures in `tests/fixtures` (see its README for what each shows and what herd must
//! conclude):
//! - replayed in the recorded reads, each capture shows the prompt rules the README names, where
//!   it names them and nowhere else (Gemini's usage-limit menu is never `press_1`); `ready` and
//!   `busy` read its idle and working screens right; `classify` gives the README's verdict for
//!   the screen the attempt ends on;
//! - how the output is split into reads changes nothing: every two-way split and random
//!   chunkings give the same screens and prompt sightings, and a whole `Attempt` fed the capture
//!   in different chunkings makes the same decisions.
//!
//! Two tests guard fixes below the profiles: splits inside a UTF-8 character (vte drops a byte
//! unless the screen holds the partial character back) and dialogs erased and redrawn between
//! reads (one appearance, answered once).
//!
//! Every test skips (with a message) when the fixtures folder is missing.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use herd::assets::built_in_profile_texts;
use herd::core::attempt::{Attempt, AttemptSetup, Effect, Event, InputReason, Note};
use herd::core::classify::{EndCause, EndFacts, ExitStatus, Verdict, classify};
use herd::core::profile::{Profile, ProfileSet};
use herd::core::screen::Screen;
use herd::core::screen::detect::{ScreenView, find_prompts, is_busy, is_ready, tail_rows};
use herd::core::task::{Completion, FailureType};

const ROWS: u16 = 40;
const COLS: u16 = 120;
/// Scrolled-row context asked of `Screen::feed`, as the attempt does.
const CONTEXT: usize = 8;

fn fixtures_dir() -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    dir.join("README.md").is_file().then_some(dir)
}

macro_rules! fixtures_or_skip {
    () => {
        match fixtures_dir() {
            Some(dir) => dir,
            None => panic!(
                "the real CLIs' captures are missing: no README.md in {}/tests/fixtures \
                 (they are vendored in the repository: restore the folder)",
                env!("CARGO_MANIFEST_DIR")
            ),
        }
    };
}

fn profiles() -> ProfileSet {
    match ProfileSet::build(&built_in_profile_texts(), None) {
        Ok(set) => set,
        Err(errors) => panic!("built-in profiles do not compile: {errors:#?}"),
    }
}

fn profile(set: &ProfileSet, name: &str) -> Profile {
    set.get(name)
        .unwrap_or_else(|| panic!("no built-in profile {name}"))
        .clone()
}

// ---------------------------------------------------------------------------------------------
// Captures

/// One capture: the raw bytes, where the recorder's reads ended, and when its keys went in.
struct Capture {
    /// `agent/scenario`, e.g. `claude/m_tool_permission`.
    name: String,
    agent: String,
    raw: Vec<u8>,
    /// Per recorded read: its time and the offset in `raw` where it ends.
    reads: Vec<(f64, usize)>,
    /// Per scripted step N ("step N fired"): how many reads came before it.
    steps: BTreeMap<u32, usize>,
    /// Per automatic answer of the recorder ("auto N fired"): how many reads came before it.
    autos: BTreeMap<u32, usize>,
    exit: ExitStatus,
    end_time: f64,
}

fn read_text(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn json(line: &str, path: &Path) -> serde_json::Value {
    serde_json::from_str(line).unwrap_or_else(|e| panic!("{}: {e}: {line}", path.display()))
}

/// The number after `prefix` in a note like `step 3 fired: ...`.
fn numbered_note(text: &str, prefix: &str) -> Option<u32> {
    let rest = text.strip_prefix(prefix)?;
    let (number, tail) = rest.split_once(' ')?;
    tail.starts_with("fired").then(|| number.parse().ok())?
}

fn signal_name(signal: i64) -> String {
    match signal {
        2 => "SIGINT".into(),
        9 => "SIGKILL".into(),
        15 => "SIGTERM".into(),
        n => format!("signal {n}"),
    }
}

impl Capture {
    fn load(dir: &Path, name: &str) -> Capture {
        let base = dir.join(name);
        let with = |ext: &str| PathBuf::from(format!("{}.{ext}", base.display()));
        let raw_path = with("raw");
        let raw =
            std::fs::read(&raw_path).unwrap_or_else(|e| panic!("{}: {e}", raw_path.display()));
        let timeline_path = with("timeline.jsonl");
        let mut reads = Vec::new();
        let mut steps = BTreeMap::new();
        let mut autos = BTreeMap::new();
        let mut offset = 0;
        let mut end_time: f64 = 0.0;
        for line in read_text(&timeline_path)
            .lines()
            .filter(|l| !l.trim().is_empty())
        {
            let entry = json(line, &timeline_path);
            let t = entry["t"].as_f64().unwrap_or(0.0);
            end_time = end_time.max(t);
            match entry["dir"].as_str() {
                // The `text` field is lossy where a read split a UTF-8 character; `len` is exact.
                Some("out") => {
                    let len = entry["len"].as_u64().unwrap_or(0) as usize;
                    offset += len;
                    reads.push((t, offset));
                }
                Some("note") => {
                    let text = entry["text"].as_str().unwrap_or("");
                    if let Some(n) = numbered_note(text, "step ") {
                        steps.insert(n, reads.len());
                    }
                    if let Some(n) = numbered_note(text, "auto ") {
                        autos.insert(n, reads.len());
                    }
                }
                _ => {}
            }
        }
        assert_eq!(
            offset,
            raw.len(),
            "{name}: the reads add up to the raw bytes"
        );
        let meta_path = with("meta.json");
        let meta = json(&read_text(&meta_path), &meta_path);
        let exit = ExitStatus {
            code: meta["exit_code"].as_i64().map(|c| c as i32),
            signal: meta["exit_signal"].as_i64().map(signal_name),
        };
        Capture {
            name: name.to_string(),
            agent: name.split('/').next().unwrap_or(name).to_string(),
            raw,
            reads,
            steps,
            autos,
            exit,
            end_time,
        }
    }

    /// The recorded reads as (time, byte range).
    fn recorded_chunks(&self) -> Vec<(f64, std::ops::Range<usize>)> {
        let mut start = 0;
        self.reads
            .iter()
            .map(|&(t, end)| {
                let range = start..end;
                start = end;
                (t, range)
            })
            .collect()
    }
}

/// Every capture in the fixtures folder, by `agent/scenario`.
fn all_capture_names(dir: &Path) -> Vec<String> {
    let mut names = Vec::new();
    for agent in ["aider", "claude", "codex", "gemini"] {
        let Ok(entries) = std::fs::read_dir(dir.join(agent)) else {
            continue;
        };
        for entry in entries.flatten() {
            let file = entry.file_name().to_string_lossy().into_owned();
            if let Some(scenario) = file.strip_suffix(".raw") {
                names.push(format!("{agent}/{scenario}"));
            }
        }
    }
    names.sort();
    names
}

// ---------------------------------------------------------------------------------------------
// Reading a screen the way the attempt does

/// What the detectors say about one screen.
#[derive(Debug, Clone, PartialEq)]
struct Reading {
    text: String,
    rows: Vec<String>,
    cursor: (u16, u16),
    /// (rule name, appearance, rows) of every matching prompt rule, in rule order.
    prompts: Vec<(String, u64, (usize, usize))>,
    ready: bool,
    busy: bool,
}

fn read_screen(screen: &Screen, profile: &Profile) -> Reading {
    let rows = screen.visible_rows();
    let text = screen.text();
    let view = ScreenView {
        rows: &rows,
        cursor_row: usize::from(screen.cursor().0),
        first_row_number: screen.rows_scrolled_total(),
    };
    let prompts = find_prompts(profile, view)
        .into_iter()
        .map(|s| (profile.prompts[s.rule].name.clone(), s.appearance, s.rows))
        .collect();
    Reading {
        ready: is_ready(profile, &text),
        busy: is_busy(profile, &text),
        text,
        rows,
        cursor: screen.cursor(),
        prompts,
    }
}

/// The screen read after each recorded read.
fn replay(capture: &Capture, profile: &Profile) -> Vec<Reading> {
    let mut screen = Screen::new(ROWS, COLS);
    capture
        .recorded_chunks()
        .into_iter()
        .map(|(_, range)| {
            screen.feed(&capture.raw[range], CONTEXT);
            read_screen(&screen, profile)
        })
        .collect()
}

fn prompt_names(reading: &Reading) -> Vec<&str> {
    reading
        .prompts
        .iter()
        .map(|(name, ..)| name.as_str())
        .collect()
}

// ---------------------------------------------------------------------------------------------
// What the README says about each capture

/// A moment of a capture.
#[derive(Debug, Clone, Copy)]
enum At {
    /// Just before the recorder's scripted step N (the `.stepN.txt` screen).
    Step(u32),
    /// Just before the recorder's automatic answer N.
    Auto(u32),
    /// The final screen.
    End,
}

/// How the attempt ended, for `classify`.
#[derive(Debug, Clone, Copy)]
enum Cause {
    /// The agent exited with the capture's own exit status.
    Exited,
    /// herd found it idle at its input prompt (and ended it).
    Idle,
    Timeout,
}

struct Look {
    at: At,
    ready: bool,
    busy: bool,
    prompts: &'static [&'static str],
}

struct Conclusion {
    at: At,
    cause: Cause,
    failure: FailureType,
    /// Text the evidence contains.
    evidence: &'static str,
}

struct Expected {
    capture: &'static str,
    /// Prompt rules seen anywhere in the replay, in the order they first appear (rules seen on
    /// one screen in rule order). Nothing else may match anywhere.
    rules_seen: &'static [&'static str],
    looks: &'static [Look],
    conclusions: &'static [Conclusion],
}

const fn look(at: At, ready: bool, busy: bool, prompts: &'static [&'static str]) -> Look {
    Look {
        at,
        ready,
        busy,
        prompts,
    }
}

const fn conclude(
    at: At,
    cause: Cause,
    failure: FailureType,
    evidence: &'static str,
) -> Conclusion {
    Conclusion {
        at,
        cause,
        failure,
        evidence,
    }
}

use At::{Auto, End, Step};
use Cause::{Exited, Idle, Timeout};
use FailureType::{Auth, Incomplete, Process, Quota};

/// Captures whose README line states a conclusion herd draws from the screen.
const EXPECTED: &[Expected] = &[
    // --- Claude Code
    Expected {
        // Fresh home: the onboarding connectivity check fails, exit 1. Network, not auth.
        capture: "claude/a_interactive_nocreds",
        rules_seen: &[],
        looks: &[look(End, false, false, &[])],
        conclusions: &[conclude(
            End,
            Exited,
            Process,
            "Unable to connect to Anthropic services",
        )],
    },
    Expected {
        // Trust dialog, then `Not logged in · Please run /login` at the prompt.
        capture: "claude/a_interactive_onboarded_nocreds",
        rules_seen: &["trust"],
        looks: &[
            look(Step(1), false, false, &["trust"]),
            look(Step(2), true, false, &[]),
            look(Step(4), true, false, &[]),
        ],
        conclusions: &[
            conclude(Step(5), Idle, Auth, "Not logged in · Please run /login"),
            // It exited 0 after Ctrl-C: exit codes lie, the text decides.
            conclude(End, Exited, Auth, "Not logged in"),
        ],
    },
    Expected {
        // 2.1.332's trust dialog focuses `❯ No, exit`: herd moves down (trust_select), then the
        // focused `❯ Yes, I trust this folder` is confirmed (trust). Enter never lands on "No".
        capture: "claude/m_trust_v2_1_332",
        rules_seen: &["trust_select", "trust"],
        looks: &[
            look(Step(1), false, false, &["trust_select"]),
            look(Step(2), false, false, &["trust"]),
            look(Step(3), true, false, &[]),
        ],
        conclusions: &[],
    },
    Expected {
        // 2.1.332's Bash dialog in the `default` permission mode: both "yes" rules see it.
        capture: "claude/m_tool_dialog_v2_1_332",
        rules_seen: &["press_p", "press_1"],
        looks: &[look(Step(1), false, false, &["press_p", "press_1"])],
        conclusions: &[],
    },
    Expected {
        // 2.1.332's auto mode behind a gateway: its own question, not a "yes" of a tool dialog.
        capture: "claude/m_auto_mode_v2_1_332",
        rules_seen: &["auto_mode"],
        looks: &[look(Step(1), false, false, &["auto_mode"])],
        conclusions: &[],
    },
    Expected {
        // Bash dialog `Do you want to proceed?` / `❯ 1. Yes` / `2. Yes, and always allow ...`.
        capture: "claude/m_tool_permission",
        rules_seen: &["press_p", "press_1"],
        looks: &[
            look(Step(1), true, false, &[]),
            look(Step(4), false, false, &["press_p", "press_1"]),
            look(Step(5), false, false, &["press_p", "press_1"]),
            look(Step(6), true, false, &[]),
        ],
        conclusions: &[conclude(
            Step(7),
            Idle,
            Incomplete,
            "idle at the input prompt",
        )],
    },
    Expected {
        // A 401 retried as `✻ API error · Retrying in 32s · attempt 7/10`: busy at the prompt,
        // and the screen names no cause.
        capture: "claude/m_auth401",
        rules_seen: &[],
        looks: &[look(Step(1), true, false, &[]), look(End, true, true, &[])],
        conclusions: &[
            conclude(End, Timeout, FailureType::Timeout, "timeout after"),
            conclude(End, Exited, Process, "exit code 143"),
        ],
    },
    Expected {
        // `✻ Session limit reached · Retrying in 6s (3:12am) · attempt 5/10`: busy while Claude
        // retries (herd waits), and a quota with its reset time once the attempt ends there.
        capture: "claude/m_quota429_unified",
        rules_seen: &[],
        looks: &[
            look(Step(3), true, true, &[]),
            look(Step(5), true, true, &[]),
        ],
        conclusions: &[
            conclude(
                Step(3),
                Idle,
                Quota,
                "Session limit reached · Retrying in 6s (3:12am)",
            ),
            conclude(Step(5), Exited, Quota, "Session limit reached"),
        ],
    },
    Expected {
        // `API Error: Repeated 529 Overloaded errors...`, then idle at the prompt.
        capture: "claude/m_overloaded529",
        rules_seen: &[],
        looks: &[
            look(Step(3), true, false, &[]),
            look(Step(5), true, false, &[]),
        ],
        conclusions: &[
            conclude(
                Step(5),
                Idle,
                Process,
                "API Error: Repeated 529 Overloaded errors",
            ),
            conclude(End, Exited, Process, "529 Overloaded"),
        ],
    },
    Expected {
        // `-p` stream-json: `"result":"Not logged in · Please run /login"`, exit 1.
        capture: "claude/b_print_streamjson_nocreds",
        rules_seen: &[],
        looks: &[look(End, false, false, &[])],
        conclusions: &[conclude(
            End,
            Exited,
            Auth,
            "\"error\":\"authentication_failed\"",
        )],
    },
    Expected {
        capture: "claude/p_quota429_streamjson",
        rules_seen: &[],
        looks: &[look(End, false, false, &[])],
        conclusions: &[conclude(End, Exited, Quota, "· Rate limited")],
    },
    Expected {
        // Plain success in print mode: nothing on it reads as a failure (no marker, so
        // incomplete).
        capture: "claude/p_text_streamjson",
        rules_seen: &[],
        looks: &[look(End, false, false, &[])],
        conclusions: &[conclude(
            End,
            Exited,
            Incomplete,
            "no completion marker; exit code 0",
        )],
    },
    Expected {
        // The README's failed_permission_blocked comes from the JSON result's
        // `permission_denials`, which a screen rule does not read; the text itself must not
        // read as an auth, quota or transient failure.
        capture: "claude/p_tool_streamjson",
        rules_seen: &[],
        looks: &[look(End, false, false, &[])],
        conclusions: &[conclude(
            End,
            Exited,
            Incomplete,
            "no completion marker; exit code 0",
        )],
    },
    // --- Codex CLI
    Expected {
        // The sign-in picker waits for a person: idle there, and it names the failure.
        capture: "codex/a_interactive_nocreds",
        rules_seen: &[],
        looks: &[
            look(Step(1), true, false, &[]),
            look(Step(2), true, false, &[]),
        ],
        conclusions: &[conclude(Step(2), Idle, Auth, "Sign in with ChatGPT")],
    },
    Expected {
        // `Would you like to run the following command?` / `› 1. Yes, proceed (y)`.
        capture: "codex/m_tool_approval",
        rules_seen: &["press_p", "press_1"],
        looks: &[
            look(Step(2), true, false, &[]),
            look(Step(5), false, false, &["press_p", "press_1"]),
            look(Step(6), false, false, &["press_p", "press_1"]),
            look(Step(7), true, false, &[]),
        ],
        conclusions: &[conclude(
            Step(8),
            Idle,
            Incomplete,
            "idle at the input prompt",
        )],
    },
    Expected {
        // 0.171.0, `-s read-only`: `Would you like to make the following edits?` /
        // `Destination: <path>` / `› 1. Yes, proceed (y)` / `2. Yes, and don't ask again for
        // these files (a)`: press_1 only (option 2's key is `a`, and it would let later edits
        // pass unseen); `y` took it, the file was written, the marker, idle at the composer.
        capture: "codex/m_edit_approval",
        rules_seen: &["press_1"],
        looks: &[
            look(Step(1), false, false, &["press_1"]),
            look(Step(2), true, false, &[]),
        ],
        conclusions: &[conclude(
            Step(2),
            Idle,
            Incomplete,
            "idle at the input prompt",
        )],
    },
    Expected {
        // `■ unexpected status 401 Unauthorized ...` after `Reconnecting... n/5`.
        capture: "codex/m_auth401",
        rules_seen: &[],
        looks: &[
            look(Step(2), true, false, &[]),
            look(Step(6), true, false, &[]),
        ],
        conclusions: &[conclude(
            Step(6),
            Idle,
            Auth,
            "unexpected status 401 Unauthorized",
        )],
    },
    Expected {
        capture: "codex/m_quota429",
        rules_seen: &[],
        looks: &[look(Step(6), true, false, &[])],
        conclusions: &[conclude(Step(6), Idle, Quota, "■ Quota exceeded.")],
    },
    Expected {
        capture: "codex/e_auth401_json",
        rules_seen: &[],
        // Busy: the JSON log's `Reconnecting... 5/5` lines (exec mode, no idle end here).
        looks: &[look(End, false, true, &[])],
        conclusions: &[conclude(End, Exited, Auth, "401 Unauthorized")],
    },
    Expected {
        capture: "codex/e_quota429_json",
        rules_seen: &[],
        looks: &[look(End, false, false, &[])],
        conclusions: &[conclude(End, Exited, Quota, "Quota exceeded")],
    },
    Expected {
        // Success in exec mode, with an `"type":"error"` item about model metadata: not a
        // failure text.
        capture: "codex/e_text_json",
        rules_seen: &[],
        looks: &[look(End, false, false, &[])],
        conclusions: &[conclude(
            End,
            Exited,
            Incomplete,
            "no completion marker; exit code 0",
        )],
    },
    // --- Gemini CLI
    Expected {
        // Trust dialog (answered), then the authentication picker, which waits for a person.
        capture: "gemini/a_interactive_nocreds",
        rules_seen: &["trust"],
        looks: &[
            look(Step(1), false, false, &["trust"]),
            look(Step(3), true, false, &[]),
            look(Step(4), true, false, &[]),
        ],
        conclusions: &[conclude(
            Step(4),
            Idle,
            Auth,
            "How would you like to authenticate for this project?",
        )],
    },
    Expected {
        // `Allow execution of [Shell]?` / `● 1. Allow once` / `2. Allow for this session`.
        capture: "gemini/m_tool_approval",
        rules_seen: &["press_p", "press_1"],
        looks: &[
            look(Step(1), true, false, &[]),
            look(Step(5), false, false, &["press_p", "press_1"]),
            look(Step(6), false, false, &["press_p", "press_1"]),
            look(Step(7), true, false, &[]),
        ],
        conclusions: &[conclude(
            Step(8),
            Idle,
            Incomplete,
            "idle at the input prompt",
        )],
    },
    Expected {
        // `Usage limit reached for <model>.` / `● 1. Switch to ...` / `2. Stop`: a quota, and
        // never a permission prompt (rules_seen is empty).
        capture: "gemini/m_quota429",
        rules_seen: &[],
        looks: &[
            look(Step(1), true, false, &[]),
            look(Step(5), true, false, &[]),
            look(Step(7), true, false, &[]),
        ],
        conclusions: &[conclude(
            Step(5),
            Idle,
            Quota,
            "Usage limit reached for gemini-3.5-flash-lite.",
        )],
    },
    Expected {
        capture: "gemini/b_print_nocreds",
        rules_seen: &[],
        looks: &[look(End, false, false, &[])],
        conclusions: &[conclude(End, Exited, Auth, "Please set an Auth method")],
    },
    Expected {
        capture: "gemini/p_auth401_streamjson",
        rules_seen: &[],
        looks: &[look(End, false, false, &[])],
        conclusions: &[conclude(End, Exited, Auth, "API key not valid")],
    },
    Expected {
        capture: "gemini/p_text_streamjson",
        rules_seen: &[],
        looks: &[look(End, false, false, &[])],
        conclusions: &[conclude(
            End,
            Exited,
            Incomplete,
            "no completion marker; exit code 0",
        )],
    },
    // --- Aider
    Expected {
        // The gitignore question (answered), `No LLM model was specified and no API keys were
        // provided.`, the OpenRouter login offer and `Open documentation URL for more info?`:
        // none of the last two is a permission prompt; the pending question is idle.
        capture: "aider/a_interactive_nocreds",
        rules_seen: &["gitignore"],
        looks: &[
            look(Step(2), true, false, &["gitignore"]),
            look(Step(4), true, false, &[]),
            look(Step(6), true, false, &[]),
        ],
        conclusions: &[conclude(
            Step(6),
            Idle,
            Auth,
            "No LLM model was specified and no API keys were provided.",
        )],
    },
    Expected {
        // `Run shell command? (Y)es/(N)o/(D)on't ask again [Yes]:` on the cursor's line.
        capture: "aider/m_shell_confirm",
        rules_seen: &["press_1"],
        looks: &[
            look(Auto(1), true, false, &["press_1"]),
            look(End, false, false, &[]),
        ],
        conclusions: &[conclude(
            End,
            Exited,
            Incomplete,
            "no completion marker; exit code 0",
        )],
    },
    Expected {
        // The gitignore question drawn with the cursor left 25 rows below it; the next read
        // moves the cursor back to it and changes no text.
        capture: "aider/m_gitignore_split_draw",
        rules_seen: &["gitignore"],
        looks: &[look(End, true, false, &["gitignore"])],
        conclusions: &[],
    },
    Expected {
        // Exit code 0 after `The API provider is not able to authenticate you.`
        capture: "aider/m_auth401",
        rules_seen: &[],
        looks: &[look(End, false, false, &[])],
        conclusions: &[conclude(End, Exited, Auth, "AuthenticationError")],
    },
];

fn reading_at<'a>(capture: &Capture, readings: &'a [Reading], at: At) -> &'a Reading {
    let before = match at {
        At::Step(n) => *capture
            .steps
            .get(&n)
            .unwrap_or_else(|| panic!("{}: no step {n}", capture.name)),
        At::Auto(n) => *capture
            .autos
            .get(&n)
            .unwrap_or_else(|| panic!("{}: no auto answer {n}", capture.name)),
        At::End => readings.len(),
    };
    assert!(before > 0, "{}: nothing on screen at {at:?}", capture.name);
    &readings[before - 1]
}

fn verdict_for(capture: &Capture, profile: &Profile, reading: &Reading, cause: Cause) -> Verdict {
    let tail = tail_rows(&reading.rows, profile.tail_rows);
    let cause = match cause {
        Cause::Exited => EndCause::Exited,
        Cause::Idle => EndCause::Idle,
        Cause::Timeout => EndCause::Timeout {
            after_sec: capture.end_time as u64,
        },
    };
    let facts = EndFacts {
        cause,
        marker_seen: false,
        exit: capture.exit.clone(),
        tail: &tail,
        completion: Completion::Marker,
        marker_required: true,
        stream: None,
        signal: None,
        agent_log: None,
    };
    classify(&facts, profile)
}

#[test]
fn the_four_profiles_follow_the_spec() {
    let set = profiles();
    /// (profile, command, exit keys, prompt rules in order)
    type Case = (
        &'static str,
        &'static [&'static str],
        Option<&'static str>,
        &'static [&'static str],
    );
    let cases: [Case; 4] = [
        (
            "claude",
            &[
                "claude",
                "--settings",
                "{hook_settings}",
                "--permission-mode",
                "{permission_mode}",
                "--debug-file",
                "{agent_log}",
                "{rendered_prompt}",
            ],
            Some("/exit\r"),
            &["trust_select", "trust", "auto_mode", "press_p", "press_1"],
        ),
        (
            "codex",
            &[
                "codex",
                "{app_server}",
                "--ask-for-approval",
                "{approval_policy}",
                "--sandbox",
                "{sandbox_mode}",
                "{rendered_prompt}",
            ],
            Some("\u{3}\u{3}"),
            &["press_p", "press_1"],
        ),
        (
            "gemini",
            &[
                "gemini",
                "--approval-mode",
                "{permission_mode}",
                "-i",
                "{rendered_prompt}",
            ],
            Some("\u{3}\u{3}"),
            &["trust", "press_p", "press_1"],
        ),
        (
            "aider",
            &["aider", "--message", "{rendered_prompt}"],
            None,
            &["gitignore", "press_1", "add_file", "add_url", "add_output"],
        ),
    ];
    for (name, command, exit_keys, rules) in cases {
        let p = profile(&set, name);
        assert_eq!(p.command, command, "{name}");
        assert_eq!(p.exit_keys.as_deref(), exit_keys, "{name}");
        let names: Vec<&str> = p.prompts.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(names, rules, "{name}");
        assert!(p.ready.is_some() && !p.busy.is_empty(), "{name}");
        assert!(
            !p.auth.is_empty() && !p.quota.is_empty() && !p.transient.is_empty(),
            "{name}"
        );
        for rule in &p.prompts {
            // Folder trust (with Claude's move to its "Yes" option) and aider's gitignore
            // question are answered unless a task says no; permission prompts (and Claude's
            // auto-mode question) only when a task's policy says yes.
            let auto = matches!(rule.name.as_str(), "trust" | "trust_select" | "gitignore");
            assert_eq!(rule.auto_by_default, auto, "{name}.{}", rule.name);
            assert!(
                !rule.label.is_empty() && rule.label != rule.name,
                "{name}.{}",
                rule.name
            );
        }
        // No flag that turns the CLI's own permission checks off.
        for flag in [
            "--yes-always",
            "--yes",
            "--dangerously-skip-permissions",
            "--yolo",
            "--full-auto",
        ] {
            assert!(!p.command.iter().any(|a| a == flag), "{name} passes {flag}");
        }
    }
    let keys = |name: &str| -> Vec<(String, String)> {
        profile(&set, name)
            .prompts
            .iter()
            .map(|r| (r.name.clone(), r.send.clone()))
            .collect()
    };
    assert_eq!(
        keys("claude"),
        [
            ("trust_select".into(), "\u{1b}[B".into()),
            ("trust".into(), "\r".into()),
            ("auto_mode".into(), "\r".into()),
            ("press_p".into(), "2".into()),
            ("press_1".into(), "1".into())
        ]
    );
    assert_eq!(
        keys("codex"),
        [
            ("press_p".into(), "p".into()),
            ("press_1".into(), "y".into())
        ]
    );
    assert_eq!(
        keys("gemini"),
        [
            ("trust".into(), "\r".into()),
            ("press_p".into(), "2".into()),
            ("press_1".into(), "1".into())
        ]
    );
    assert_eq!(keys("aider")[1], ("press_1".into(), "y\r".into()));
}

#[test]
fn each_capture_reads_as_the_readme_says() {
    let dir = fixtures_or_skip!();
    let set = profiles();
    let mut problems = Vec::new();
    for expected in EXPECTED {
        let capture = Capture::load(&dir, expected.capture);
        let p = profile(&set, &capture.agent);
        let readings = replay(&capture, &p);

        let mut seen: Vec<&str> = Vec::new();
        for reading in &readings {
            for name in prompt_names(reading) {
                if !seen.contains(&name) {
                    seen.push(name);
                }
            }
        }
        if seen != expected.rules_seen {
            problems.push(format!(
                "{}: prompt rules seen {seen:?}, expected {:?}",
                capture.name, expected.rules_seen
            ));
        }

        for look in expected.looks {
            let reading = reading_at(&capture, &readings, look.at);
            let got = (reading.ready, reading.busy, prompt_names(reading));
            let want = (look.ready, look.busy, look.prompts.to_vec());
            if got != want {
                problems.push(format!(
                    "{} at {:?}: (ready, busy, prompts) = {got:?}, expected {want:?}\n{}",
                    capture.name, look.at, reading.text
                ));
            }
        }

        for c in expected.conclusions {
            let reading = reading_at(&capture, &readings, c.at);
            let verdict = verdict_for(&capture, &p, reading, c.cause);
            let evidence = verdict.evidence.clone().unwrap_or_default();
            if verdict.failure != Some(c.failure) || !evidence.contains(c.evidence) {
                problems.push(format!(
                    "{} at {:?} ({:?}): got {:?} {evidence:?}, expected {:?} with {:?}",
                    capture.name, c.at, c.cause, verdict.failure, c.failure, c.evidence
                ));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n\n"));
}

/// Every capture is either in `EXPECTED` or has no screen conclusion in the README.
#[test]
fn every_capture_with_a_conclusion_is_checked() {
    let dir = fixtures_or_skip!();
    let checked: Vec<&str> = EXPECTED.iter().map(|e| e.capture).collect();
    let missing: Vec<String> = all_capture_names(&dir)
        .into_iter()
        .filter(|name| !checked.contains(&name.as_str()))
        .collect();
    assert!(
        missing.is_empty(),
        "captures without expectations: {missing:?}"
    );
}

/// The replay in recorded reads reproduces the recorder's own `.stepN.txt` screens, so the
/// moments the expectations name are the screens the README describes.
#[test]
fn the_replay_reproduces_the_recorded_step_screens() {
    let dir = fixtures_or_skip!();
    let set = profiles();
    let normalize = |text: &str| -> String {
        let mut rows: Vec<&str> = text.lines().map(str::trim_end).collect();
        while rows.last().is_some_and(|r| r.is_empty()) {
            rows.pop();
        }
        rows.join("\n")
    };
    let mut compared = 0;
    for name in all_capture_names(&dir) {
        let capture = Capture::load(&dir, &name);
        let p = profile(&set, &capture.agent);
        let readings = replay(&capture, &p);
        for &n in capture.steps.keys() {
            let path = dir.join(format!("{name}.step{n}.txt"));
            let Ok(recorded) = std::fs::read_to_string(&path) else {
                continue;
            };
            let ours = reading_at(&capture, &readings, At::Step(n));
            assert_eq!(
                normalize(&ours.text),
                normalize(&recorded),
                "{} differs from the replay",
                path.display()
            );
            compared += 1;
        }
    }
    assert!(compared > 50, "only {compared} step screens compared");
}

// ---------------------------------------------------------------------------------------------
// Split invariance

/// A small seeded generator (xorshift64*), so failures reproduce.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// `at`, or the next offset that does not fall inside a UTF-8 character.
fn char_boundary(raw: &[u8], mut at: usize) -> usize {
    while raw.get(at).is_some_and(|b| b & 0xC0 == 0x80) {
        at += 1;
    }
    at
}

/// The screen after feeding `raw` in pieces ending at `cuts` (ascending, inside `raw`).
fn feed_cut(raw: &[u8], cuts: &[usize]) -> (Screen, Vec<u8>) {
    let mut screen = Screen::new(ROWS, COLS);
    let mut replies = Vec::new();
    let mut start = 0;
    for &cut in cuts.iter().chain(std::iter::once(&raw.len())) {
        replies.extend(screen.feed(&raw[start..cut], CONTEXT).replies);
        start = cut;
    }
    (screen, replies)
}

fn describe_cuts(cuts: &[usize]) -> String {
    if cuts.len() <= 8 {
        format!("{cuts:?}")
    } else {
        format!("{} cuts, first {:?}", cuts.len(), &cuts[..8])
    }
}

/// Two feeds, split at every byte position (small captures) or at a few hundred positions
/// spread over the capture plus every recorded read boundary (big ones): the same final screen,
/// cursor, prompt sightings and query answers as one feed. Splits inside a UTF-8 character are
/// left to `splits_inside_a_utf8_character_change_nothing` (a known bug below herd).
#[test]
fn splitting_the_output_in_two_changes_nothing() {
    let dir = fixtures_or_skip!();
    let set = profiles();
    /// Bytes fed in all, per capture, at most (the work is splits × length).
    const BUDGET: usize = 2_000_000;
    for name in all_capture_names(&dir) {
        let capture = Capture::load(&dir, &name);
        let p = profile(&set, &capture.agent);
        let (whole, whole_replies) = feed_cut(&capture.raw, &[]);
        let want = read_screen(&whole, &p);
        let len = capture.raw.len();
        let mut positions: Vec<usize> = if len * len <= BUDGET {
            (1..len).collect()
        } else {
            let count = (BUDGET / len).max(16);
            let mut rng = Rng(0x5eed ^ len as u64);
            let mut positions: Vec<usize> = (0..count).map(|_| 1 + rng.below(len - 1)).collect();
            positions.extend(
                capture
                    .reads
                    .iter()
                    .map(|&(_, end)| end)
                    .filter(|&e| e < len),
            );
            positions
        };
        positions.retain(|&at| char_boundary(&capture.raw, at) == at);
        positions.sort_unstable();
        positions.dedup();
        for at in positions {
            let (screen, replies) = feed_cut(&capture.raw, &[at]);
            let got = read_screen(&screen, &p);
            assert_eq!(got, want, "{name}: split at byte {at}");
            assert_eq!(
                replies, whole_replies,
                "{name}: query answers, split at byte {at}"
            );
        }
    }
}

/// Random chunkings: cut inside the recorded reads (at every read end the screen matches the
/// recorded replay's), and cut anywhere (the final screen matches). Cuts fall between UTF-8
/// characters, as in `splitting_the_output_in_two_changes_nothing`.
#[test]
fn random_chunkings_change_nothing() {
    let dir = fixtures_or_skip!();
    let set = profiles();
    let mut rng = Rng(0x00c0_ffee_d00d);
    for name in all_capture_names(&dir) {
        let capture = Capture::load(&dir, &name);
        let p = profile(&set, &capture.agent);
        let recorded = replay(&capture, &p);
        let len = capture.raw.len();
        // Fewer rounds for the big captures keep the test fast; each round is one pass.
        let rounds = (400_000 / len.max(1)).clamp(4, 40);
        for round in 0..rounds {
            let max_piece = [1, 3, 16, 200][round % 4];
            // Refinement of the recorded reads.
            let mut screen = Screen::new(ROWS, COLS);
            for (i, (_, range)) in capture.recorded_chunks().into_iter().enumerate() {
                let mut start = range.start;
                while start < range.end {
                    let end = char_boundary(&capture.raw, start + 1 + rng.below(max_piece))
                        .min(range.end);
                    screen.feed(&capture.raw[start..end], CONTEXT);
                    start = end;
                }
                let got = read_screen(&screen, &p);
                assert_eq!(
                    got, recorded[i],
                    "{name}: round {round}, pieces up to {max_piece} bytes, after read {i}"
                );
            }
            // Any cuts.
            let mut cuts = Vec::new();
            let mut at = 0;
            loop {
                at = char_boundary(&capture.raw, at + 1 + rng.below(max_piece * 4));
                if at >= len {
                    break;
                }
                cuts.push(at);
            }
            let (screen, _) = feed_cut(&capture.raw, &cuts);
            let got = read_screen(&screen, &p);
            assert_eq!(
                &got,
                recorded.last().unwrap_or(&got),
                "{name}: round {round}, {}",
                describe_cuts(&cuts)
            );
        }
    }
}

/// Splits inside a UTF-8 character. vte 0.15.0 (under vt100 0.18.1) completes a character left
/// incomplete by the previous feed from a 4-byte window and, when that window also holds the
/// start of another multi-byte character, skips the ASCII bytes between them: `"x \xc2"` then
/// `"\xb7 \xe2\x86\x90"` shows `x ·←` instead of `x · ←`. Fails until `Screen::feed` holds
/// back an unfinished UTF-8 sequence at the end of a feed (or vte is fixed).
#[test]
fn splits_inside_a_utf8_character_change_nothing() {
    let mut screen = Screen::new(ROWS, COLS);
    screen.feed(b"x \xc2", CONTEXT);
    screen.feed(
        "\u{b7} \u{2190}".as_bytes().get(1..).unwrap_or_default(),
        CONTEXT,
    );
    assert_eq!(screen.text(), "x \u{b7} \u{2190}");
    let dir = fixtures_or_skip!();
    let set = profiles();
    const BUDGET: usize = 4_000_000;
    for name in all_capture_names(&dir) {
        let capture = Capture::load(&dir, &name);
        let p = profile(&set, &capture.agent);
        let (whole, _) = feed_cut(&capture.raw, &[]);
        let want = read_screen(&whole, &p);
        let inside: Vec<usize> = (1..capture.raw.len())
            .filter(|&at| char_boundary(&capture.raw, at) != at)
            .collect();
        let step = (inside.len() * capture.raw.len() / BUDGET).max(1);
        for &at in inside.iter().step_by(step) {
            let (screen, _) = feed_cut(&capture.raw, &[at]);
            assert_eq!(read_screen(&screen, &p), want, "{name}: split at byte {at}");
        }
    }
}

// ---------------------------------------------------------------------------------------------
// A whole attempt

const MARKER: &str = "TASK_COMPLETE:fixture";
const PROMPT: &str = "say hi. When complete, print exactly: TASK_COMPLETE:fixture";

/// What an attempt did, in order: its decisions (timed) and, apart, every query answer.
#[derive(Default)]
struct AttemptLog {
    decisions: Vec<String>,
    replies: Vec<u8>,
}

impl AttemptLog {
    fn record(&mut self, at: Duration, effects: Vec<Effect>) {
        for effect in effects {
            let line = match effect {
                Effect::Write {
                    bytes,
                    reason: InputReason::QueryReply,
                } => {
                    self.replies.extend(bytes);
                    continue;
                }
                // One note per read however many bells it held: depends on the reads.
                Effect::Note(Note::Bell) => continue,
                Effect::Write { bytes, reason } => {
                    format!("write {reason:?} {:?}", String::from_utf8_lossy(&bytes))
                }
                Effect::Signal(signal) => format!("signal {signal:?}"),
                Effect::Note(note) => format!("{note:?}"),
                Effect::HookReply { output } => format!("hook reply {output}"),
                Effect::AppServerSend { text } => format!("app server send {text}"),
            };
            self.decisions
                .push(format!("{:>8.3} {line}", at.as_secs_f64()));
        }
    }

    /// Ticks at every deadline up to `until`, as the shell does between reads.
    fn tick_until(&mut self, attempt: &mut Attempt, until: Duration) {
        for _ in 0..8 {
            match attempt.next_deadline() {
                Some(deadline) if deadline <= until => {
                    let effects = attempt.handle(Event::Tick, deadline);
                    self.record(deadline, effects);
                }
                _ => break,
            }
        }
    }
}

/// Feeds the capture to an attempt in `chunks` (each with the time of its recorded read),
/// ticking at every deadline in between, and ends it with the capture's exit.
fn run_attempt(
    capture: &Capture,
    profile: &Profile,
    chunks: &[(f64, std::ops::Range<usize>)],
) -> (AttemptLog, Option<Verdict>) {
    let auto_rules = profile
        .prompts
        .iter()
        .map(|r| r.auto_by_default || r.name == "press_1")
        .collect();
    let mut attempt = Attempt::new(AttemptSetup {
        profile: profile.clone(),
        marker: MARKER.into(),
        prompt: PROMPT.into(),
        rows: ROWS,
        cols: COLS,
        timeout: Duration::from_secs(600),
        idle: Duration::from_secs_f64(profile.idle_sec),
        permission_wait: Some(Duration::from_secs(60)),
        auto_rules,
        answer_cap: 5,
        completion: Completion::Marker,
        marker_required: true,
        guard: Default::default(),
    });
    let mut log = AttemptLog::default();
    for (t, range) in chunks {
        let now = Duration::from_secs_f64(*t);
        log.tick_until(&mut attempt, now);
        let effects = attempt.handle(Event::Output(&capture.raw[range.clone()]), now);
        log.record(now, effects);
    }
    let end = Duration::from_secs_f64(capture.end_time);
    log.tick_until(&mut attempt, end);
    let effects = attempt.handle(Event::Exited(capture.exit.clone()), end);
    log.record(end, effects);
    let verdict = attempt.verdict().cloned();
    (log, verdict)
}

/// Cuts every recorded read at random places (each piece keeps its read's time).
fn refine(
    capture: &Capture,
    rng: &mut Rng,
    max_piece: usize,
) -> Vec<(f64, std::ops::Range<usize>)> {
    let mut out = Vec::new();
    for (t, range) in capture.recorded_chunks() {
        let mut start = range.start;
        while start < range.end {
            let end = char_boundary(&capture.raw, start + 1 + rng.below(max_piece)).min(range.end);
            out.push((t, start..end));
            start = end;
        }
    }
    out
}

/// The attempt's automatic answers per capture (policy: `auto_press_1` plus the rules answered
/// by default), fed in the recorded reads, and its verdict where the README's conclusion is
/// reachable in the replay (the attempt ends at the capture's own exit: idle ends need 20 s at a
/// ready screen, which most captures do not have).
/// (capture, automatic answers as (rule, keys), verdict)
type AttemptAnswers = (
    &'static str,
    &'static [(&'static str, &'static str)],
    Option<FailureType>,
);

const ATTEMPT_ANSWERS: &[AttemptAnswers] = &[
    ("claude/a_interactive_nocreds", &[], Some(Process)),
    (
        "claude/a_interactive_onboarded_nocreds",
        &[("trust", "\r")],
        Some(Auth),
    ),
    (
        "claude/m_tool_permission",
        &[("press_1", "1")],
        Some(Incomplete),
    ),
    // 2.1.332: Down to "Yes, I trust this folder", then Enter on it.
    (
        "claude/m_trust_v2_1_332",
        &[("trust_select", "\u{1b}[B"), ("trust", "\r")],
        None,
    ),
    // 2.1.332's Bash dialog: its command read from the dashed box, allowed by auto_press_1.
    ("claude/m_tool_dialog_v2_1_332", &[("press_1", "1")], None),
    // Auto mode's question is the operator's: nothing typed.
    ("claude/m_auto_mode_v2_1_332", &[], None),
    // Busy retrying until the recorder's timeout killed it (exit 143): no cause on screen.
    ("claude/m_auth401", &[], Some(Process)),
    // Idle for 29 s after the error: ended as idle, then classified by the idle screen.
    ("claude/m_overloaded529", &[], Some(Process)),
    (
        "codex/m_tool_approval",
        &[("press_1", "y")],
        Some(Incomplete),
    ),
    (
        "codex/m_edit_approval",
        &[("press_1", "y")],
        Some(Incomplete),
    ),
    ("codex/m_auth401", &[], Some(Auth)),
    ("codex/m_quota429", &[], Some(Quota)),
    ("gemini/a_interactive_nocreds", &[("trust", "\r")], None),
    (
        "gemini/m_tool_approval",
        &[("press_1", "1")],
        Some(Incomplete),
    ),
    ("gemini/m_quota429", &[], Some(Quota)),
    ("aider/a_interactive_nocreds", &[("gitignore", "y\r")], None),
    (
        "aider/m_shell_confirm",
        &[("press_1", "y\r")],
        Some(Incomplete),
    ),
    ("aider/m_auth401", &[], Some(Auth)),
    // The question drawn with the cursor left below it, the cursor back in the next read.
    (
        "aider/m_gitignore_split_draw",
        &[("gitignore", "y\r")],
        None,
    ),
];

/// Captures on which the core answers a dialog again when a redraw erases it and draws it back
/// between two reads (see the hand-off notes): Gemini's Ink output erases its whole live region
/// in one write and redraws it in the next, so even the recorded reads show the trust dialog
/// "going away and coming back"; aider's prompt_toolkit moves the cursor off the question row
/// and back within one redraw, and a read that ends inside it does the same.
const REDRAW_FLICKER: &[&str] = &[
    "gemini/a_interactive_nocreds",
    "aider/a_interactive_nocreds",
    "aider/m_shell_confirm",
];

fn auto_answers(log: &AttemptLog) -> Vec<String> {
    log.decisions
        .iter()
        .filter(|d| d.contains("AutoAnswered"))
        .map(|d| d[9..].to_string())
        .collect()
}

/// 2.1.332's Bash dialog draws the description first and the command in a dashed box: the
/// request read is the command alone.
#[test]
fn the_2_1_332_bash_dialog_reads_as_its_command() {
    let dir = fixtures_or_skip!();
    let set = profiles();
    let p = profile(&set, "claude");
    let capture = Capture::load(&dir, "claude/m_tool_dialog_v2_1_332");
    let readings = replay(&capture, &p);
    let reading = reading_at(&capture, &readings, Step(1));
    let (_, _, rows) = reading
        .prompts
        .iter()
        .find(|(name, ..)| name == "press_1")
        .unwrap_or_else(|| panic!("no press_1 on\n{}", reading.text));
    let request = herd::core::approval::read_request(&p, &reading.rows, usize::from(COLS), *rows)
        .unwrap_or_else(|| panic!("no request read on\n{}", reading.text));
    assert_eq!(
        request.to_string(),
        "Bash(touch conformance_tool_ran.txt)",
        "{}",
        reading.text
    );
}

/// Fed in the recorded reads, the attempt answers the prompts the README names with the
/// profile's keys, and reaches the verdict the README gives where the replay can.
#[test]
fn a_whole_attempt_answers_the_prompts_the_readme_names() {
    let dir = fixtures_or_skip!();
    let set = profiles();
    let mut problems = Vec::new();
    for (name, expected, failure) in ATTEMPT_ANSWERS {
        let capture = Capture::load(&dir, name);
        let p = profile(&set, &capture.agent);
        let (log, verdict) = run_attempt(&capture, &p, &capture.recorded_chunks());
        let mut answers = auto_answers(&log);
        let expected: Vec<String> = expected
            .iter()
            .map(|(rule, keys)| {
                format!(
                    "{:?}",
                    Note::AutoAnswered {
                        rule: (*rule).into(),
                        keys: (*keys).into()
                    }
                )
            })
            .collect();
        if REDRAW_FLICKER.contains(name) {
            // Answered again after a redraw (a core issue): the same answer, repeated.
            answers.dedup();
        }
        if answers != expected {
            problems.push(format!(
                "{name}: automatic answers {answers:?}, expected {expected:?}\n{}",
                log.decisions.join("\n")
            ));
        }
        let got = verdict.as_ref().and_then(|v| v.failure);
        if failure.is_some() && got != *failure {
            problems.push(format!(
                "{name}: verdict {verdict:?}, expected {failure:?}\n{}",
                log.decisions.join("\n")
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n\n"));
}

/// The decisions of an attempt fed the recorded reads cut into random smaller pieces (each
/// piece keeps its read's time, cuts between UTF-8 characters) are those of the recorded reads.
fn check_attempt_split_invariance(dir: &Path, names: &[String]) -> Vec<String> {
    let set = profiles();
    let mut rng = Rng(0x0a77_e3b7);
    let mut problems = Vec::new();
    for name in names {
        let capture = Capture::load(dir, name);
        let p = profile(&set, &capture.agent);
        let (want, _) = run_attempt(&capture, &p, &capture.recorded_chunks());
        // Small pieces cost one `handle` each: the smallest only for the small captures.
        let smallest = if capture.raw.len() <= 10_000 { 3 } else { 8 };
        for (round, max_piece) in [smallest, 40, 400].into_iter().enumerate() {
            let chunks = refine(&capture, &mut rng, max_piece);
            let (got, _) = run_attempt(&capture, &p, &chunks);
            let same = if DRAWN_ACROSS_READS.contains(&name.as_str()) {
                same_decisions_no_later(&want.decisions, &got.decisions)
            } else {
                got.decisions == want.decisions
            };
            if !same {
                problems.push(format!(
                    "{name}: round {round}, {} pieces of up to {max_piece} bytes, decides differently\nrecorded reads:\n{}\ncut:\n{}",
                    chunks.len(),
                    want.decisions.join("\n"),
                    got.decisions.join("\n")
                ));
                break;
            }
            if got.replies != want.replies {
                problems.push(format!("{name}: round {round}: different query answers"));
                break;
            }
        }
    }
    problems
}

/// Captures where a read ends in the middle of a dialog's drawing and a finer cut shows the
/// dialog whole a read sooner: aider's prompt_toolkit draws the gitignore question with the
/// cursor on it, moves the cursor below it and ends the read; the next read brings it back.
/// Cut finer, the attempt may see the question while the cursor is still on it, one read
/// earlier: the same decisions, in the same order, none later.
const DRAWN_ACROSS_READS: &[&str] = &["aider/m_gitignore_split_draw"];

/// The same decisions in the same order, each made no later than in `want` (decisions are
/// logged as "<seconds> <decision>", and an approval names its moment as `at: <duration>`).
fn same_decisions_no_later(want: &[String], got: &[String]) -> bool {
    let Ok(moment) = regex::Regex::new(r"at: [0-9.]+[mµn]?s") else {
        panic!("the pattern of a moment does not compile");
    };
    let split = |line: &String| -> (f64, String) {
        let line = line.trim_start();
        let (time, what) = line.split_once(' ').unwrap_or((line, ""));
        let what = moment.replace_all(what, "at: _").into_owned();
        (time.parse().unwrap_or(f64::NAN), what)
    };
    want.len() == got.len()
        && want.iter().zip(got).all(|(w, g)| {
            let ((wt, wd), (gt, gd)) = (split(w), split(g));
            wd == gd && gt <= wt
        })
}

/// However the output is cut into reads, a whole attempt makes the same decisions (prompts
/// shown, answers, waits, endings, verdict) and answers the same terminal queries.
#[test]
fn a_whole_attempt_decides_the_same_however_the_output_is_split() {
    let dir = fixtures_or_skip!();
    let names: Vec<String> = all_capture_names(&dir)
        .into_iter()
        .filter(|n| !REDRAW_FLICKER.contains(&n.as_str()))
        .collect();
    let problems = check_attempt_split_invariance(&dir, &names);
    assert!(problems.is_empty(), "{}", problems.join("\n\n"));
}

/// The same for the captures where a redraw makes the core answer a dialog again. Fails until
/// the attempt stops taking an erase-and-redraw for a new appearance.
#[test]
fn a_whole_attempt_decides_the_same_despite_redraws() {
    let dir = fixtures_or_skip!();
    let names: Vec<String> = REDRAW_FLICKER.iter().map(|n| n.to_string()).collect();
    let problems = check_attempt_split_invariance(&dir, &names);
    assert!(problems.is_empty(), "{}", problems.join("\n\n"));
}

// ---------------------------------------------------------------------------------------------
// Texts that must and must not match

/// Failure texts match both apostrophes, and ordinary agent output (a login page being edited,
/// a test printing "rate limit") is not a failure.
#[test]
fn failure_texts_are_specific() {
    let set = profiles();
    let matches = |p: &Profile, field: &str, text: &str| -> bool {
        let list = match field {
            "auth" => &p.auth,
            "quota" => &p.quota,
            "transient" => &p.transient,
            _ => unreachable!(),
        };
        list.iter().any(|re| re.is_match(text))
    };
    let must: &[(&str, &str, &str)] = &[
        (
            "claude",
            "quota",
            "You've hit your usage limit · resets 3pm",
        ),
        (
            "claude",
            "quota",
            "You’ve hit your usage limit · resets 3pm",
        ),
        (
            "claude",
            "quota",
            "Claude usage limit reached. Your limit will reset at 5pm",
        ),
        ("claude", "quota", "5-hour limit reached ∙ resets 3am"),
        ("claude", "auth", "  ⎿  Invalid API key · Please run /login"),
        (
            "claude",
            "auth",
            "OAuth token has expired · Please run /login",
        ),
        (
            "claude",
            "transient",
            "  ⎿  API Error: 500 {\"type\":\"error\",\"error\":{\"type\":\"api_error\"}}",
        ),
        (
            "codex",
            "quota",
            "■ You've hit your usage limit. Upgrade to Pro or try again in 2 days.",
        ),
        ("codex", "quota", "■ You’ve hit your usage limit."),
        (
            "codex",
            "transient",
            "■ stream disconnected before completion: error sending request",
        ),
        (
            "gemini",
            "quota",
            "│ Usage limit reached for gemini-2.5-pro. │",
        ),
        (
            "aider",
            "quota",
            "The API provider has rate limited you. Try again later or check your quotas.",
        ),
        (
            "aider",
            "transient",
            "The API provider's servers are down or overloaded.",
        ),
    ];
    for (agent, field, text) in must {
        assert!(
            matches(&profile(&set, agent), field, text),
            "{agent} {field} should match {text:?}"
        );
    }
    let healthy = [
        "● Updated login.html: the \"Please log in\" form now posts to /login",
        "● Added a rate limit of 100 requests per minute to the API (429 responses)",
        "  test_rate_limit_exceeded ... ok",
        "  def check_usage(limit): return usage < limit",
        "• Edited auth.py: return 401 when the token is missing",
        "✦ I added a retry with backoff for 503 responses.",
        "  Opus 4.8 (1M context) · API Usage Billing",
        "Tokens: 2.6k sent, 15 received. Cost: $0.0066 message, $0.0066 session.",
        "HTTPSConnectionPool(host='raw.githubusercontent.com', port=443): Max retries exceeded with url: /x",
    ];
    for agent in ["claude", "codex", "gemini", "aider"] {
        let p = profile(&set, agent);
        for text in healthy {
            for field in ["auth", "quota", "transient"] {
                assert!(
                    !matches(&p, field, text),
                    "{agent} {field} matches healthy text {text:?}"
                );
            }
        }
    }
}

/// Prompt rules on screens the captures do not have: other dialogs of the same CLIs that must
/// (or must not) be taken for a permission prompt.
#[test]
fn prompt_rules_on_other_dialogs() {
    let set = profiles();
    let sightings = |agent: &str, screen: &str, cursor_row: usize| -> Vec<String> {
        let p = profile(&set, agent);
        let rows: Vec<String> = screen.lines().map(str::to_string).collect();
        let view = ScreenView {
            rows: &rows,
            cursor_row,
            first_row_number: 0,
        };
        find_prompts(&p, view)
            .into_iter()
            .map(|s| p.prompts[s.rule].name.clone())
            .collect()
    };
    // Claude's API-key dialog focuses `No (recommended)`: not a `1. Yes` to press.
    let api_key = " Detected a custom API key in your environment\n\n Do you want to use this API key?\n\n   1. Yes\n ❯ 2. No (recommended)\n\n Enter to confirm · Esc to cancel";
    assert!(sightings("claude", api_key, 0).is_empty());
    // Claude's edit dialog: both "yes" options.
    let edit = " Do you want to make this edit to main.rs?\n ❯ 1. Yes\n   2. Yes, allow all edits during this session (shift+tab)\n   3. No, and tell Claude what to do differently (esc)";
    assert_eq!(sightings("claude", edit, 0), ["press_p", "press_1"]);
    // Claude's trust dialog is the trust rule's alone.
    let trust = " Quick safety check: Is this a project you created or one you trust?\n\n ❯ 1. Yes, I trust this folder\n   2. No, exit\n\n Enter to confirm · Esc to cancel";
    assert_eq!(sightings("claude", trust, 0), ["trust"]);
    // Codex's network approval, wrapped in a narrow pane.
    let codex = "  Would you like to run the following command?\n\n› 1. Yes, proceed (y)\n  2. Yes, and don't ask again for\n     commands that start with `curl` (p)\n  3. No, and tell Codex what to do differently (esc)\n\n  Press enter to confirm or esc to cancel";
    assert_eq!(sightings("codex", codex, 0), ["press_p", "press_1"]);
    // Gemini's usage-limit menu with "allow"-like wording is still not a permission prompt.
    let quota = "│ Usage limit reached for gemini-2.5-pro.                 │\n│ ● 1. Allow once with gemini-2.5-flash                   │\n│   2. Stop                                               │";
    assert!(sightings("gemini", quota, 0).is_empty());
    // Aider: only the shell question is press_1; the other questions have their own rules or
    // none, and an answered question above the cursor is no prompt.
    let aider = [
        (
            "Run shell commands? (Y)es/(N)o/(D)on't ask again [Yes]:",
            vec!["press_1"],
        ),
        (
            "Run shell command? (Y)es/(N)o/(D)on’t ask again [Yes]:",
            vec!["press_1"],
        ),
        (
            "Add URL to the chat? (Y)es/(N)o/(D)on't ask again [Yes]:",
            vec!["add_url"],
        ),
        (
            "Add file to the chat? (Y)es/(N)o/(A)ll/(S)kip all/(D)on't ask again [Yes]:",
            vec!["add_file"],
        ),
        ("Create new file? (Y)es/(N)o [Yes]:", vec!["add_file"]),
        (
            "Add command output to the chat? (Y)es/(N)o/(D)on't ask again [Yes]:",
            vec!["add_output"],
        ),
        (
            "Open documentation URL for more info? (Y)es/(N)o/(D)on't ask again [Yes]:",
            vec![],
        ),
        (
            "Login to OpenRouter or create a free account? (Y)es/(N)o [Yes]:",
            vec![],
        ),
        (
            "Open URL for more info? (Y)es/(N)o/(D)on't ask again [Yes]:",
            vec![],
        ),
    ];
    for (question, rules) in aider {
        let screen = format!("touch x\n{question}");
        assert_eq!(sightings("aider", &screen, 1), rules, "{question}");
        let answered = format!("touch x\n{question} y\nRunning touch x\n");
        assert!(
            sightings("aider", &answered, 2).is_empty(),
            "answered: {question}"
        );
    }
}

/// `ready` needs the input prompt itself, empty.
#[test]
fn ready_needs_the_empty_input_prompt() {
    let set = profiles();
    let rule = "─".repeat(120);
    let claude = profile(&set, "claude");
    assert!(is_ready(
        &claude,
        &format!("{rule}\n❯\n{rule}\n  ? for shortcuts")
    ));
    assert!(!is_ready(&claude, &format!("{rule}\n❯ say hi\n{rule}")));
    assert!(!is_ready(
        &claude,
        &format!("{rule}\n Do you want to proceed?\n ❯ 1. Yes\n   2. No")
    ));
    let aider = profile(&set, "aider");
    assert!(is_ready(&aider, "Aider v0.86.2\n>"));
    assert!(is_ready(&aider, "Aider v0.86.2\nask>"));
    assert!(!is_ready(&aider, "> fix the bug\nWaiting for gpt-4o"));
    // An answered question higher up is not waiting.
    assert!(!is_ready(
        &aider,
        "Add .aider* to .gitignore (recommended)? (Y)es/(N)o [Yes]:\nAdded .aider* to .gitignore"
    ));
    let gemini = profile(&set, "gemini");
    assert!(!is_ready(&gemini, " > fix the bug"));
    let codex = profile(&set, "codex");
    assert!(!is_ready(&codex, "› fix the bug"));
}
