//! The real-CLI conformance suite: the real Claude Code, Codex CLI and Gemini CLI (pinned in
//! `tests/conformance/package.json`, installed by `scripts/test`) run through herd's built-in
//! profiles, headless, against a local mock model API (`tests/conformance/mock_api`), one task per
//! CLI × profile × scenario, all in one batch. Each task must end with the verdict a careful
//! person would conclude, and leave no process behind.
//!
//! What herd still gets wrong because of work owned elsewhere is listed in `EXPECTED_FAILURES`
//! with the reason; such a case that starts to pass fails the suite, so the list stays honest.
//!
//! `HERD_CONFORMANCE_LATEST=1` runs the same suite against `@latest` of each CLI (installed by
//! `scripts/test`): the drift check before a release. It prints, for every wrong verdict, the
//! profile rules that should have matched and the text they did not match.
//! `HERD_CONFORMANCE_ONLY=codex` (a substring of `profile/scenario`) runs a subset;
//! `HERD_CONFORMANCE_KEEP=1` keeps the batch folder of a failed run, `=always` of any run.
#![allow(clippy::unwrap_used)]

#[path = "conformance/mock_api/mod.rs"]
mod mock_api;
#[path = "conformance/report.rs"]
mod report;
#[path = "conformance/setup.rs"]
mod setup;

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use mock_api::{MockApi, Scenario};
use serde_json::{Value, json};
use setup::Cli;

/// One task of the batch.
#[derive(Debug, Clone)]
struct Case {
    cli: Cli,
    profile: &'static str,
    scenario: Scenario,
    /// The folder is trusted in the CLI's config beforehand.
    trusted: bool,
    /// The task says `"trust_folder": true`: herd trusts the folder in the CLI's config.
    trust_folder: bool,
    /// The CLI runs every tool without asking (Gemini's `--approval-mode yolo`): nothing shows
    /// on screen, only a hook can refuse.
    yolo: bool,
    /// The task's own command leaves out `{app_server}` (interactive Codex): the screen rules
    /// decide, as for an agent on another host.
    screen: bool,
    /// The task leaves its tool to the operator (no `auto_press_1`): headless, nobody answers.
    unanswered: bool,
    /// What a careful person concludes: `completed` or a failure type.
    expect: &'static str,
}

impl Case {
    fn id(&self) -> String {
        let trust = match (self.trusted, self.trust_folder) {
            (_, true) => "-trust_folder",
            (true, false) => "",
            (false, false) => "-untrusted",
        };
        let yolo = if self.yolo { "-yolo" } else { "" };
        let screen = if self.screen { "-screen" } else { "" };
        let unanswered = if self.unanswered { "-unanswered" } else { "" };
        format!(
            "{}-{}{trust}{yolo}{screen}{unanswered}",
            self.profile,
            self.scenario.name()
        )
    }
}

/// A case herd gets wrong today because of work owned by another part of the project: the task
/// id, what goes wrong, and why.
struct ExpectedFailure {
    id: &'static str,
    reason: &'static str,
}

const EXPECTED_FAILURES: &[ExpectedFailure] = &[];

fn cases() -> Vec<Case> {
    let mut cases = Vec::new();
    for cli in Cli::ALL {
        let profiles: &[&'static str] = match cli {
            Cli::Claude => &["claude", "claude-json"],
            Cli::Codex => &["codex", "codex-json"],
            Cli::Gemini => &["gemini", "gemini-json"],
            // Aider has no structured mode; it works in a git repository (no trust question).
            Cli::Aider => &["aider"],
        };
        for &profile in profiles {
            let structured = profile.ends_with("-json");
            // Interactive Claude and Codex ask to trust a new folder (herd's trust rules answer);
            // Gemini's folder and the headless ones' are trusted beforehand, as a user would
            // set them up. Separate cases cover Gemini's trust dialog and the untrusted
            // headless runs.
            let trusted =
                matches!(cli, Cli::Gemini | Cli::Aider) || (structured && cli == Cli::Codex);
            let mut add = |scenario: Scenario, expect: &'static str| {
                cases.push(Case {
                    cli,
                    profile,
                    scenario,
                    trusted,
                    trust_folder: false,
                    yolo: false,
                    screen: false,
                    unanswered: false,
                    expect,
                });
            };
            add(Scenario::Text, "completed");
            // Interactive: the task allows the tool (auto_press_1), it runs, then the marker.
            // Interactive Codex too in a folder it does not trust: the profile names its
            // approval policy (`on-request`), so it asks and herd answers, where its own default
            // there (a granular policy) refused the escalated command itself, with no dialog.
            // Structured: nothing is pre-approved, so the tool is refused; the model's marker
            // after the refusal is not a success.
            add(
                Scenario::Tool,
                if structured {
                    "failed_permission_blocked"
                } else {
                    "completed"
                },
            );
            add(Scenario::Auth, "failed_auth");
            add(Scenario::Quota, "failed_quota");
            add(Scenario::Overloaded, "failed_process");
            add(Scenario::Hang, "failed_timeout");
            add(Scenario::NoMarker, "failed_incomplete");
            if cli == Cli::Claude {
                add(Scenario::Credit, "failed_quota");
                add(Scenario::AuthRetryLoop, "failed_auth");
                add(Scenario::QuotaRetryLoop, "failed_quota");
                // `curl … | sh; touch …` with the task's auto_press_1 on: herd's guard refuses
                // it through the hook (the floor), the file never appears.
                add(Scenario::Dangerous, "failed_permission_blocked");
            }
        }
    }
    // Gemini's trust dialog (interactive), and headless Gemini and Codex in an untrusted folder
    // (Gemini exits 55, `codex exec` refuses to start: set-up problems, not retryable).
    for (cli, profile, expect) in [
        (Cli::Gemini, "gemini", "completed"),
        (Cli::Gemini, "gemini-json", "failed_config"),
        (Cli::Codex, "codex-json", "failed_config"),
    ] {
        cases.push(Case {
            cli,
            profile,
            scenario: Scenario::Text,
            trusted: false,
            trust_folder: false,
            yolo: false,
            screen: false,
            unanswered: false,
            expect,
        });
    }
    // Interactive Claude in a folder the task trusts (`"trust_folder": true`): herd writes the
    // trust into the CLI's config before it starts, so no trust dialog comes (the other
    // interactive Claude cases answer 2.1.332's new one on screen).
    cases.push(Case {
        cli: Cli::Claude,
        profile: "claude",
        scenario: Scenario::Tool,
        trusted: false,
        trust_folder: true,
        yolo: false,
        screen: false,
        unanswered: false,
        expect: "completed",
    });
    // Codex and Gemini in a folder only the task trusts (`"trust_folder": true`, no git
    // repository): herd writes the trust into Codex's config.toml / Gemini's trusted-folders file
    // before the start. Interactive Codex asks before the escalated command (herd answers, it
    // runs); headless Gemini starts instead of refusing the folder (failed_config in the
    // untrusted case above); interactive Gemini shows no trust dialog. (`codex exec` 0.171.0
    // refuses a folder outside a git repository whatever its trust level, so no such case.)
    for (cli, profile, scenario) in [
        (Cli::Codex, "codex", Scenario::Tool),
        (Cli::Gemini, "gemini", Scenario::Text),
        (Cli::Gemini, "gemini-json", Scenario::Text),
    ] {
        cases.push(Case {
            cli,
            profile,
            scenario,
            trusted: false,
            trust_folder: true,
            yolo: false,
            screen: false,
            unanswered: false,
            expect: "completed",
        });
    }
    // Interactive Codex in a trusted repository asks before an escalated command; herd, a
    // client of the attempt's own app server, accepts it there (auto_press_1), the command
    // runs, then the marker. Codex's edit (`-s read-only`, so that every edit asks) is judged
    // by the file its `fileChange` item names and accepted the same way. The same two with a
    // task command that leaves out `{app_server}` (`-screen`): the screen rules answer the
    // dialogs, and `herd explain` must show that timeline (see
    // `explain_shows_the_codex_approval` and `explain_shows_the_codex_edit`).
    for scenario in [Scenario::Tool, Scenario::Edit] {
        for screen in [false, true] {
            cases.push(Case {
                cli: Cli::Codex,
                profile: "codex",
                scenario,
                trusted: true,
                trust_folder: false,
                yolo: false,
                screen,
                unanswered: false,
                expect: "completed",
            });
        }
    }
    // The same command with nothing that allows it: herd gives the server no answer, the TUI's
    // dialog waits for the operator with the server's exact request, and headless nobody
    // answers: failed_permission_blocked after the wait, the command never runs.
    cases.push(Case {
        cli: Cli::Codex,
        profile: "codex",
        scenario: Scenario::Tool,
        trusted: true,
        trust_folder: false,
        yolo: false,
        screen: false,
        unanswered: true,
        expect: "failed_permission_blocked",
    });
    // A download piped into a shell (`curl … | sh; touch …`), on screen and in the structured
    // modes: refused (herd's floor on a dialog, the CLI itself where nothing is pre-approved),
    // and the file it would touch never appears.
    for (cli, profile) in [
        (Cli::Codex, "codex"),
        (Cli::Codex, "codex-json"),
        (Cli::Gemini, "gemini"),
        (Cli::Gemini, "gemini-json"),
    ] {
        cases.push(Case {
            cli,
            profile,
            scenario: Scenario::Dangerous,
            trusted: true,
            trust_folder: false,
            yolo: false,
            screen: false,
            unanswered: false,
            expect: "failed_permission_blocked",
        });
    }
    // The same request to Gemini in `--approval-mode yolo`, which runs every tool without a
    // dialog (headless too, where its shell tool is then on): herd's BeforeTool hook alone
    // refuses it (the hook runs before Gemini's own policy check).
    for profile in ["gemini", "gemini-json"] {
        cases.push(Case {
            cli: Cli::Gemini,
            profile,
            scenario: Scenario::Dangerous,
            trusted: true,
            trust_folder: false,
            yolo: true,
            screen: false,
            unanswered: false,
            expect: "failed_permission_blocked",
        });
    }
    let only = std::env::var("HERD_CONFORMANCE_ONLY").unwrap_or_default();
    cases.retain(|c| only.is_empty() || only.split(',').any(|o| c.id().contains(o)));
    cases
}

/// The task's entry in the tasks file.
fn task_json(case: &Case, dir: &Path, api: &MockApi) -> Value {
    let id = case.id();
    let home = dir.join("homes").join(&id);
    let cwd = dir.join("work").join(&id);
    let base_url = api.base_url(&id, case.scenario);
    let env = setup::prepare(
        case.cli,
        &home,
        &cwd,
        &base_url,
        case.scenario,
        case.trusted,
    )
    .unwrap();
    if case.trusted {
        // A project in a git repository, as most are (`codex exec` refuses other folders
        // unless trusted).
        let git = Command::new("git")
            .args(["init", "-q"])
            .current_dir(&cwd)
            .status();
        assert!(
            git.is_ok_and(|s| s.success()),
            "git init in {}",
            cwd.display()
        );
    }
    let env: serde_json::Map<String, Value> = env
        .into_iter()
        .map(|(k, v)| (k, Value::String(v)))
        .collect();
    // Interactive Claude retries a 401 ten times (about 3.5 min) and its screen never names
    // the cause until it gives up: its retry-loop case gets the time to see that.
    let timeout = match case.scenario {
        Scenario::Hang => 40,
        Scenario::AuthRetryLoop | Scenario::QuotaRetryLoop => 330,
        _ => 150,
    };
    let mut task = json!({
        "task_id": id,
        "agent": case.profile,
        "cwd": cwd.display().to_string(),
        "env": env,
        "timeout_sec": timeout,
        "max_retries": 0,
        "permission_wait_sec": 20,
        // As a person writes a prompt: no word of a marker (herd adds the instruction).
        "prompt_template": "Create the file conformance_tool_ran.txt with a shell command.",
    });
    let asks = matches!(
        case.scenario,
        Scenario::Tool | Scenario::Dangerous | Scenario::Edit
    );
    if asks && !case.profile.ends_with("-json") && !case.unanswered {
        task["permission_policy"] = json!({"auto_press_1": true});
    }
    if case.trust_folder {
        task["trust_folder"] = json!(true);
    }
    // The app server's placeholder, or (a screen case) a session of the TUI's own.
    let session = if case.screen {
        "--no-daemon"
    } else {
        "{app_server}"
    };
    if case.screen && case.scenario != Scenario::Edit {
        task["command"] = json!([
            "codex",
            session,
            "--ask-for-approval",
            "on-request",
            "--sandbox",
            "workspace-write",
            "{rendered_prompt}"
        ]);
    }
    if case.scenario == Scenario::Edit && case.cli == Cli::Codex {
        // In a read-only sandbox every edit asks (in the default workspace-write one an edit
        // of the task's folder needs no approval).
        task["command"] = json!(["codex", session, "-s", "read-only", "{rendered_prompt}"]);
        task["prompt_template"] = json!("Create the file conformance_edit.txt with an edit.");
    }
    if case.yolo {
        task["command"] = if case.profile == "gemini" {
            json!([
                "gemini",
                "--approval-mode",
                "yolo",
                "-i",
                "{rendered_prompt}"
            ])
        } else {
            json!([
                "gemini",
                "--approval-mode",
                "yolo",
                "-p",
                "{rendered_prompt}",
                "--output-format",
                "stream-json"
            ])
        };
    }
    task
}

/// What herd concluded for one task.
struct Outcome {
    verdict: String,
    evidence: String,
    seconds: f64,
    /// From the mock API's first error answer to the end of the attempt (NaN without one).
    after_error: f64,
    leftovers: Vec<String>,
    /// Shared background servers the CLI started (Codex's `app-server --managed-daemon`), which
    /// herd had to end with the attempt: the task's session ran outside its own process.
    daemons: Vec<String>,
    tool_ran: bool,
    /// The channel of each answer to a tool request in `result.approvals` (`hook`, `screen`,
    /// `acp`…; answers that approve nothing, such as folder trust, are left out).
    channels: Vec<String>,
    /// `result.trusted_folder`: herd trusted the folder in the CLI's config.
    trusted_folder: bool,
    /// Answers that approve nothing (a trust dialog's).
    dialog_answers: usize,
    edit_made: bool,
    /// herd's hook was written into the user's own Gemini settings (it must only ever be in
    /// the attempt's own copy).
    hook_in_users_settings: bool,
}

impl Outcome {
    fn conforms(&self, case: &Case) -> bool {
        // An allowed tool or edit took effect; a dangerous request never did.
        let tool_ok = match case.scenario {
            // Left to the operator: never ran, and the evidence names the exact request.
            Scenario::Tool if case.unanswered => {
                !self.tool_ran && self.evidence.contains(mock_api::TOOL_COMMAND)
            }
            Scenario::Tool => case.expect != "completed" || self.tool_ran,
            Scenario::Edit => case.expect != "completed" || self.edit_made,
            // Never ran, and the evidence names the command: on screen herd's floor refused
            // it; `codex exec` refuses it by itself (nothing is pre-approved) and its rollout
            // names it. Headless Gemini offers no shell tool, and its refusal (`Tool
            // "run_shell_command" not found`) does not say what the call was.
            Scenario::Dangerous => {
                !self.tool_ran && (case.profile == "gemini-json" || self.evidence.contains("curl"))
            }
            _ => true,
        };
        // Auth and quota never heal by retrying, and an API that keeps failing is not waited
        // on for minutes: the verdict comes within 60 s of the first error, even when the CLI
        // keeps retrying. Measured from the mock API's first error answer to the attempt's end
        // (an upper bound: the recording's start is known to the second).
        let hopeless = matches!(
            case.scenario,
            Scenario::Auth
                | Scenario::AuthRetryLoop
                | Scenario::QuotaRetryLoop
                | Scenario::Quota
                | Scenario::Credit
                | Scenario::Overloaded
        );
        let in_time = !hopeless || self.after_error <= 60.0;
        // A dangerous request never runs, through any channel.
        let refused = case.scenario != Scenario::Dangerous || !self.tool_ran;
        self.verdict == case.expect
            && self.leftovers.is_empty()
            && self.daemons.is_empty()
            && tool_ok
            && in_time
            && refused
            && self.channels_ok(case)
            && !self.hook_in_users_settings
            && self.trusted_folder == case.trust_folder
            // A trusted folder draws no trust dialog.
            && !(case.trust_folder && self.dialog_answers > 0)
    }

    /// Interactive Claude decides its tool calls through herd's hooks: every answer of its
    /// tool cases came from the `hook` channel, and there is one. Interactive Gemini's
    /// `BeforeTool` hook only refuses (its approvals stay on screen): its dangerous request is
    /// refused there.
    fn channels_ok(&self, case: &Case) -> bool {
        // Interactive Codex decides its approvals through herd's client of its app server;
        // a task command without `{app_server}` leaves them to the screen.
        if case.unanswered {
            return self.channels.is_empty();
        }
        if case.profile == "codex"
            && matches!(
                case.scenario,
                Scenario::Tool | Scenario::Dangerous | Scenario::Edit
            )
        {
            let channel = if case.screen { "screen" } else { "app_server" };
            return !self.channels.is_empty() && self.channels.iter().all(|c| c == channel);
        }
        let hooked = match case.profile {
            "claude" => matches!(case.scenario, Scenario::Tool | Scenario::Dangerous),
            "gemini" => case.scenario == Scenario::Dangerous,
            // Headless Gemini has a shell tool to call only in yolo mode.
            "gemini-json" => case.scenario == Scenario::Dangerous && case.yolo,
            _ => false,
        };
        !hooked || (!self.channels.is_empty() && self.channels.iter().all(|c| c == "hook"))
    }
}

#[test]
fn real_clis_end_as_a_careful_person_concludes() {
    let bin = setup::cli_bin_dir();
    let cases = cases();
    assert!(!cases.is_empty(), "HERD_CONFORMANCE_ONLY matched no case");
    if cases.iter().any(|c| c.cli == Cli::Aider) {
        setup::require_aider();
    }
    let api = MockApi::start().unwrap();
    let dir = tempfile::Builder::new()
        .prefix("herd-conformance-")
        .tempdir()
        .unwrap();
    let tasks: Vec<Value> = cases
        .iter()
        .map(|c| task_json(c, dir.path(), &api))
        .collect();
    let tasks_file = dir.path().join("tasks.json");
    let doc = json!({"run_id": "conformance", "tasks": tasks});
    std::fs::write(&tasks_file, serde_json::to_string_pretty(&doc).unwrap()).unwrap();

    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let concurrency = std::env::var("HERD_CONFORMANCE_CONCURRENCY").unwrap_or("8".into());
    let started = Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_herd"))
        .args([
            "run",
            "--headless",
            "--concurrency",
            &concurrency,
            "--tasks",
        ])
        .arg(&tasks_file)
        .env("PATH", &path)
        .output()
        .unwrap();
    let batch_seconds = started.elapsed().as_secs_f64();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);

    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&tasks_file).unwrap()).unwrap();
    let outcomes: Vec<Outcome> = cases
        .iter()
        .map(|case| outcome_of(case, &doc, dir.path(), &api))
        .collect();
    let versions: Vec<String> = Cli::ALL
        .iter()
        .map(|cli| format!("{} {}", cli.name(), setup::version(&bin, *cli)))
        .collect();
    println!(
        "\nconformance: {} tasks, concurrency {concurrency}, {batch_seconds:.0} s; {}",
        cases.len(),
        versions.join(", ")
    );
    println!("{}", report::table(&rows(&cases, &outcomes)));
    for (case, outcome) in cases.iter().zip(&outcomes) {
        if !outcome.channels.is_empty() {
            println!("answers of {}: {}", case.id(), outcome.channels.join(", "));
        }
    }

    let mut problems = Vec::new();
    for (case, outcome) in cases.iter().zip(&outcomes) {
        let id = case.id();
        let expected = EXPECTED_FAILURES.iter().find(|f| f.id == id);
        match (outcome.conforms(case), expected) {
            (true, None) | (false, Some(_)) => {}
            (true, Some(f)) => problems.push(format!(
                "{id}: listed as an expected failure ({}) but now conforms: remove it from \
                 EXPECTED_FAILURES",
                f.reason
            )),
            (false, None) => problems.push(
                format!(
                    "{id}: expected {}, got {} ({}){}{}\n{}  requests: {}",
                    case.expect,
                    outcome.verdict,
                    outcome.evidence,
                    if outcome.leftovers.is_empty() && outcome.daemons.is_empty() {
                        String::new()
                    } else {
                        format!(
                            "; processes left: {:#?}; background servers started: {:#?}",
                            outcome.leftovers, outcome.daemons
                        )
                    },
                    match case.scenario {
                        Scenario::Tool if case.expect == "completed" && !outcome.tool_ran => {
                            "; the tool never ran".to_string()
                        }
                        Scenario::Edit if case.expect == "completed" && !outcome.edit_made => {
                            "; the edit was never made".to_string()
                        }
                        Scenario::Dangerous if outcome.tool_ran => {
                            "; THE DANGEROUS COMMAND RAN".to_string()
                        }
                        _ if outcome.hook_in_users_settings => {
                            "; herd's hook was written into the user's own Gemini settings"
                                .to_string()
                        }
                        _ if !outcome.channels_ok(case) => {
                            format!(
                                "; answers not all through the structured channel: {:?}",
                                outcome.channels
                            )
                        }
                        _ => String::new(),
                    },
                    report::drift(case.profile, case.expect, &last_screen(dir.path(), &id)),
                    requests_of(&api, &id),
                ) + &timeline_of(dir.path(), &id),
            ),
        }
    }
    if let Some(case) = cases.iter().find(|c| c.id() == EXPLAINED_APPROVAL) {
        problems.extend(explain_shows_the_codex_approval(case, dir.path()));
    }
    if let Some(case) = cases.iter().find(|c| c.id() == EXPLAINED_EDIT) {
        problems.extend(explain_shows_the_codex_edit(case, dir.path()));
    }
    let unknown: Vec<String> = api
        .requests()
        .iter()
        .filter(|r| r.status == 404)
        .map(|r| format!("{} {} {}", r.task_id, r.method, r.path))
        .collect();
    if !unknown.is_empty() {
        println!(
            "paths the mock API does not serve:\n  {}",
            unknown.join("\n  ")
        );
    }
    let keep = std::env::var("HERD_CONFORMANCE_KEEP").unwrap_or_default();
    if keep == "always" {
        // For a look at the recordings (`herd explain`) of a run that conformed.
        println!("kept: {}", dir.keep().display());
        assert!(
            problems.is_empty(),
            "{}",
            problems.join(
                "

"
            )
        );
        return;
    }
    if !problems.is_empty() {
        if !keep.is_empty() {
            println!("kept: {}", dir.keep().display());
        }
        // herd's own output first: a CI log cut in the middle keeps its end, the problems.
        println!("herd stdout:\n{stdout}\nherd stderr:\n{stderr}");
        panic!(
            "{} case(s) do not conform:\n\n{}",
            problems.len(),
            problems.join("\n\n")
        );
    }
}

/// The case whose `herd explain` timeline is checked: a real interactive Codex approval.
const EXPLAINED_APPROVAL: &str = "codex-tool-screen";

/// `herd explain` on the real interactive Codex approval: the dialog's sighting with its rows and
/// rule, herd's answer with the guard's reason, whether Codex took it, the verdict and why.
/// Returns what is missing, with the whole explanation.
fn explain_shows_the_codex_approval(case: &Case, dir: &Path) -> Vec<String> {
    let out = Command::new(env!("CARGO_BIN_EXE_herd"))
        .arg("explain")
        .arg(dir.join("runs").join(case.id()))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let line = |kind: &str, needles: &[&str]| {
        text.lines().any(|l| {
            l.split_whitespace().nth(1) == Some(kind) && needles.iter().all(|n| l.contains(n))
        })
    };
    let expected: [(&str, bool); 6] = [
        (
            "a `prompt` line naming rule press_1 with the dialog's first row",
            line("prompt", &["press_1", "Yes, proceed"]),
        ),
        (
            "the dialog's other rows below it",
            text.contains("Yes, and don't ask again for commands that start with `touch"),
        ),
        (
            "a `decision` line: the guard allowed the command by the task's auto_press_1",
            line(
                "decision",
                &["press_1", "touch conformance_tool_ran.txt", "allow"],
            ),
        ),
        (
            "an `answered` line for press_1",
            line("answered", &["press_1"]),
        ),
        (
            "a `taken` line: the dialog left the screen after herd's answer",
            line("taken", &["press_1", "the dialog left the screen"]),
        ),
        (
            "the verdict and why",
            // How Codex then left (at once, or by TERM after the grace when its exit waits
            // on a network that does not answer) is not what this is about.
            text.contains("verdict: completed (marker seen, "),
        ),
    ];
    let missing: Vec<&str> = expected
        .iter()
        .filter(|(_, seen)| !seen)
        .map(|(what, _)| *what)
        .collect();
    if !out.status.success() || !missing.is_empty() {
        return vec![format!(
            "herd explain {} ({}) lacks: {}\n{text}{}",
            case.id(),
            out.status,
            missing.join("; "),
            String::from_utf8_lossy(&out.stderr)
        )];
    }
    println!("herd explain {}:\n{text}", case.id());
    Vec::new()
}

/// The case whose `herd explain` timeline shows Codex's edit dialog read as an edit.
const EXPLAINED_EDIT: &str = "codex-edit-screen";

/// `herd explain` on the real Codex edit dialog: read as an edit of its destination (the task's
/// file), allowed by the task's auto_press_1, answered with `y`, taken. Returns what is missing.
fn explain_shows_the_codex_edit(case: &Case, dir: &Path) -> Vec<String> {
    let out = Command::new(env!("CARGO_BIN_EXE_herd"))
        .arg("explain")
        .arg(dir.join("runs").join(case.id()))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let line = |kind: &str, needles: &[&str]| {
        text.lines().any(|l| {
            l.split_whitespace().nth(1) == Some(kind) && needles.iter().all(|n| l.contains(n))
        })
    };
    let destination = format!("{}/{}", case.id(), mock_api::EDIT_FILE);
    let expected: [(&str, bool); 4] = [
        (
            "a `prompt` line naming rule press_1 on the edit dialog",
            line("prompt", &["press_1", "Yes, proceed"]),
        ),
        (
            "a `decision` line: the edit of the destination allowed by the task's auto_press_1",
            line("decision", &["press_1", "Edit(", &destination, "allow"]),
        ),
        (
            "a `taken` line: the dialog left the screen after herd's answer",
            line("taken", &["press_1"]),
        ),
        (
            "the verdict and why",
            // How Codex then left (at once, or by TERM after the grace when its exit waits
            // on a network that does not answer) is not what this is about.
            text.contains("verdict: completed (marker seen, "),
        ),
    ];
    let missing: Vec<&str> = expected
        .iter()
        .filter(|(_, seen)| !seen)
        .map(|(what, _)| *what)
        .collect();
    if !out.status.success() || !missing.is_empty() {
        return vec![format!(
            "herd explain {} ({}) lacks: {}\n{text}{}",
            case.id(),
            out.status,
            missing.join("; "),
            String::from_utf8_lossy(&out.stderr)
        )];
    }
    println!("herd explain {}:\n{text}", case.id());
    Vec::new()
}

/// What the task's CLI asked the mock API, in order.
fn requests_of(api: &MockApi, id: &str) -> String {
    let seen: Vec<String> = api
        .requests()
        .into_iter()
        .filter(|r| r.task_id == id)
        .map(|r| format!("{} {} → {}", r.method, r.path, r.status))
        .collect();
    seen.join(", ")
}

fn outcome_of(case: &Case, doc: &Value, dir: &Path, api: &MockApi) -> Outcome {
    let id = case.id();
    let task = doc["tasks"]
        .as_array()
        .and_then(|tasks| tasks.iter().find(|t| t["task_id"] == id.as_str()))
        .cloned()
        .unwrap_or(Value::Null);
    let verdict = match task["status"].as_str() {
        Some("completed") => "completed".to_string(),
        _ => task["result"]["failure_type"]
            .as_str()
            .map(str::to_string)
            .unwrap_or_else(|| format!("status {}", task["status"])),
    };
    let home = dir.join("homes").join(&id);
    let cast = dir.join(format!("runs/{id}/attempt_1.cast"));
    let first_error = api
        .requests()
        .into_iter()
        .find(|r| r.task_id == id && r.status >= 400)
        .map(|r| r.at);
    Outcome {
        verdict,
        evidence: task["result"]["failure_evidence"]
            .as_str()
            .unwrap_or("")
            .to_string(),
        seconds: cast_seconds(&cast),
        after_error: first_error.map_or(f64::NAN, |at| seconds_after(&cast, at)),
        leftovers: leftovers(&home),
        channels: task["result"]["approvals"]
            .as_array()
            .map(|list| {
                list.iter()
                    .filter(|a| a["request"].is_string())
                    .map(|a| a["channel"].as_str().unwrap_or("?").to_string())
                    .collect()
            })
            .unwrap_or_default(),
        trusted_folder: task["result"]["trusted_folder"].is_string(),
        dialog_answers: task["result"]["approvals"].as_array().map_or(0, |list| {
            list.iter().filter(|a| a["request"].is_null()).count()
        }),
        daemons: daemons_ended(&dir.join(format!("runs/{id}/attempt_1.json"))),
        tool_ran: dir
            .join("work")
            .join(&id)
            .join(mock_api::TOOL_FILE)
            .exists(),
        edit_made: dir
            .join("work")
            .join(&id)
            .join(mock_api::EDIT_FILE)
            .exists(),
        hook_in_users_settings: std::fs::read_to_string(home.join(".gemini/settings.json"))
            .is_ok_and(|text| text.contains("BeforeTool")),
    }
}

/// The CLI's shared background servers among the processes herd ended with the attempt (its
/// facts file's `ended_processes`).
fn daemons_ended(facts: &Path) -> Vec<String> {
    let facts: Value = std::fs::read_to_string(facts)
        .ok()
        .and_then(|text| serde_json::from_str(&text).ok())
        .unwrap_or(Value::Null);
    facts["ended_processes"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|p| p["argv"].to_string())
        .filter(|argv| argv.contains("--managed-daemon"))
        .collect()
}

/// The time of the last event of a recording: how long the attempt took.
fn cast_seconds(cast: &Path) -> f64 {
    std::fs::read_to_string(cast)
        .ok()
        .and_then(|text| {
            text.lines()
                .rev()
                .find_map(|line| serde_json::from_str::<Value>(line).ok()?[0].as_f64())
        })
        .unwrap_or(f64::NAN)
}

/// From `at` to the recording's last event, at most: the header's start is the agent's start
/// rounded down to whole seconds, so a second is added (the figure is an upper bound).
fn seconds_after(cast: &Path, at: std::time::SystemTime) -> f64 {
    let start = std::fs::read_to_string(cast)
        .ok()
        .and_then(|text| {
            let header: Value = serde_json::from_str(text.lines().next()?).ok()?;
            header["timestamp"].as_f64()
        })
        .unwrap_or(f64::NAN);
    let at = at
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(f64::NAN, |d| d.as_secs_f64());
    start + 1.0 + cast_seconds(cast) - at
}

/// The final screen of the task's attempt, as `herd replay --print` draws it.
/// The timeline of `herd explain` for a case (what herd saw and decided, moment by moment),
/// indented, for the report of a case that did not conform.
fn timeline_of(dir: &Path, id: &str) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_herd"))
        .arg("explain")
        .arg(dir.join("runs").join(id))
        .output();
    let text = out
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_default();
    let timeline: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.starts_with("timeline"))
        .take_while(|l| !l.is_empty())
        .collect();
    if timeline.is_empty() {
        return String::new();
    }
    format!("\n  {}", timeline.join("\n  "))
}

fn last_screen(dir: &Path, id: &str) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_herd"))
        .args(["replay", "--print"])
        .arg(dir.join("runs").join(id))
        .output();
    out.map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_default()
}

/// Processes that carry the task's config folder in their environment, still there after a
/// short wait for the kernel to reap them. They are then killed, so one case's leftovers do not
/// burden the next run.
fn leftovers(home: &Path) -> Vec<String> {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let found = processes_with(&home.display().to_string());
        if found.is_empty() || Instant::now() >= deadline {
            for (pid, _) in &found {
                let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
            }
            return found
                .into_iter()
                .map(|(pid, cmd)| format!("{pid}: {cmd}"))
                .collect();
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

fn processes_with(needle: &str) -> Vec<(u32, String)> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(environ) = std::fs::read(entry.path().join("environ")) else {
            continue;
        };
        if String::from_utf8_lossy(&environ)
            .split('\0')
            .any(|kv| kv.contains(needle))
        {
            let cmd = std::fs::read_to_string(entry.path().join("cmdline")).unwrap_or_default();
            found.push((pid, cmd.replace('\0', " ").trim().to_string()));
        }
    }
    found
}

fn rows(cases: &[Case], outcomes: &[Outcome]) -> Vec<report::Row> {
    cases
        .iter()
        .zip(outcomes)
        .map(|(c, o)| report::Row {
            cli: c.cli.name(),
            profile: c.profile,
            scenario: c
                .id()
                .trim_start_matches(c.profile)
                .trim_start_matches('-')
                .to_string(),
            expect: c.expect,
            verdict: o.verdict.clone(),
            seconds: o.seconds,
            after_error: o.after_error,
            leftovers: o.leftovers.len(),
            conforms: o.conforms(c),
            expected_failure: EXPECTED_FAILURES.iter().any(|f| f.id == c.id()),
        })
        .collect()
}
