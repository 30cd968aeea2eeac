//! From a task and its profile to what is started: argv, working folder, environment, the rendered
//! prompt and the completion marker. Problems here are the task's own (`failed_config`): an
//! unknown agent, a placeholder without a value, a missing folder, a command that is not
//! installed.
//!
//! `render_launch` is pure; `check_launch` looks at the file system.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::core::profile::{Profile, ProfileSet};
use crate::core::task::{Completion, DEFAULT_MARKER_TEMPLATE, TaskSpec};
use crate::core::template;

pub mod acp;
mod error;
mod prompt;

pub use error::{LaunchError, TemplateSite};
pub use prompt::{CompletionRule, PromptSource, Resume, last_session};

/// Everything needed to start one attempt.
#[derive(Debug, Clone, PartialEq)]
pub struct LaunchPlan {
    pub argv: Vec<String>,
    pub cwd: PathBuf,
    pub env: BTreeMap<String, String>,
    pub prompt: String,
    pub marker: String,
    pub completion: CompletionRule,
    /// The session this attempt continues (the profile's `resume` command was used).
    pub resumed_session: Option<String>,
    /// `HERD_SIGNAL_FILE`, for `"completion": "signal_file"`.
    pub signal_file: Option<PathBuf>,
    /// The file `{agent_log}` names (the attempt's, beside its recordings), when the command
    /// places it: herd reads it live as the profile's `agent_log` says.
    pub agent_log: Option<PathBuf>,
}

/// What the task's fields and the run contribute to placeholders.
#[derive(Debug, Clone)]
pub struct LaunchContext<'a> {
    /// The tasks file's folder: relative `cwd`s are resolved against it.
    pub base_dir: &'a Path,
    pub run_id: Option<&'a str>,
    pub attempt: u32,
    /// Where this attempt's recordings go (`HERD_RUN_DIR`).
    pub run_dir: &'a Path,
}

impl LaunchContext<'_> {
    /// The attempt's signal file, beside its recordings.
    pub fn signal_file(&self) -> PathBuf {
        self.run_dir
            .join(format!("attempt_{}.signal.json", self.attempt))
    }

    /// The file an agent is told to write its own log to (`{agent_log}`), beside the recordings.
    pub fn agent_log_file(&self) -> PathBuf {
        self.run_dir
            .join(format!("attempt_{}.agent.log", self.attempt))
    }
}

/// The working folder of a task: its `cwd` (relative to the tasks file) or the tasks file's folder.
pub fn task_cwd(task: &TaskSpec, base_dir: &Path) -> PathBuf {
    match &task.cwd {
        Some(cwd) => base_dir.join(cwd),
        None => base_dir.to_path_buf(),
    }
}

/// Renders the task for one attempt from its prompt source; `resume` continues a session with
/// the profile's `resume` command instead of starting the agent afresh. The first problem, if
/// any (`render_all` has them all).
pub fn render_launch(
    task: &TaskSpec,
    profile: &Profile,
    source: &PromptSource,
    resume: Option<&Resume>,
    ctx: &LaunchContext<'_>,
) -> Result<LaunchPlan, LaunchError> {
    let mut problems = Vec::new();
    let plan = render_all(task, profile, source, resume, ctx, &mut problems);
    match problems.into_iter().next() {
        Some(first) => Err(first),
        None => Ok(plan),
    }
}

/// Renders what can be rendered and adds every problem to `problems` (a template that cannot
/// be rendered is left empty, so the rest is still checked); the plan is usable only when
/// nothing was added.
fn render_all(
    task: &TaskSpec,
    profile: &Profile,
    source: &PromptSource,
    resume: Option<&Resume>,
    ctx: &LaunchContext<'_>,
    problems: &mut Vec<LaunchError>,
) -> LaunchPlan {
    let completion = prompt::completion_rule(task, profile).unwrap_or_else(|e| {
        problems.push(e);
        CompletionRule {
            completion: Completion::Marker,
            marker_required: true,
        }
    });
    let signal_file = (completion.completion == Completion::SignalFile).then(|| ctx.signal_file());
    let cwd = task_cwd(task, ctx.base_dir);
    let cwd_text = cwd.display().to_string();
    let signal_text = signal_file.as_ref().map(|p| p.display().to_string());
    let agent_log_text = ctx.agent_log_file().display().to_string();
    let own = |name: &str| -> Option<String> {
        if let Some(value) = task.inputs.get(name) {
            return Some(value.clone());
        }
        match name {
            "task_id" => Some(task.task_id.clone()),
            "agent" => Some(task.agent.clone()),
            "attempt" => Some(ctx.attempt.to_string()),
            "cwd" => Some(cwd_text.clone()),
            "run_id" => ctx.run_id.map(str::to_string),
            "timeout_sec" => Some(task.timeout_sec.to_string()),
            "max_retries" => Some(task.max_retries.to_string()),
            "previous_failure" => Some(previous_failure(task, ctx.attempt).unwrap_or_default()),
            "signal_file" => signal_text.clone(),
            "agent_log" => Some(agent_log_text.clone()),
            "session_id" => resume.map(|r| r.session_id.clone()),
            _ => None,
        }
    };
    let marker_template = task
        .completion_marker
        .as_deref()
        .unwrap_or(DEFAULT_MARKER_TEMPLATE);
    let marker = render_template(
        problems,
        TemplateSite::CompletionMarker,
        marker_template,
        &own,
    );
    let with_marker = |name: &str| -> Option<String> {
        if name == "completion_marker" {
            return Some(marker.clone());
        }
        own(name)
    };
    let prompt = match resume {
        // The session knows the task; a signal file's path is new with every attempt.
        Some(resume) => match &signal_file {
            Some(path) => format!("{}\n\n{}", resume.message, prompt::signal_instruction(path)),
            None => resume.message.clone(),
        },
        None => {
            let (mut prompt, placed) = match source {
                PromptSource::Template(text) => (
                    render_template(problems, TemplateSite::PromptTemplate, text, &with_marker),
                    text.as_str(),
                ),
                PromptSource::CommandFile(text) => (text.clone(), ""),
            };
            // A retry tells the agent what went wrong last time, unless the template places it.
            if let Some(summary) = previous_failure(task, ctx.attempt)
                && !placed.contains("{previous_failure}")
            {
                prompt.push_str("\n\n");
                prompt.push_str(&summary);
            }
            if let Some(addition) = prompt::fresh_prompt_addition(task) {
                prompt.push_str("\n\n");
                prompt.push_str(&addition);
            }
            // A command file cannot place the marker or the signal file itself.
            let command_file = matches!(source, PromptSource::CommandFile(_));
            if command_file && completion.marker_required && !prompt.contains(&marker) {
                prompt.push_str("\n\n");
                prompt.push_str(&prompt::marker_instruction(&marker));
            }
            if let Some(path) = &signal_file
                && !placed.contains("{signal_file}")
            {
                prompt.push_str("\n\n");
                prompt.push_str(&prompt::signal_instruction(path));
            }
            prompt
        }
    };
    // An ACP agent resumes through its client (`session/load`), with its usual command.
    let acp = profile.protocol == crate::core::profile::Protocol::Acp;
    let (command, site): (Vec<String>, fn(usize) -> TemplateSite) = match (resume, &task.command) {
        (Some(_), _) if !acp => (profile.resume.clone(), |index| {
            TemplateSite::ResumeCommand { index }
        }),
        (_, Some(command)) => (command.clone(), |index| TemplateSite::Command { index }),
        (_, None) => (profile.command.clone(), |index| {
            TemplateSite::ProfileCommand { index }
        }),
    };
    if command.is_empty() {
        problems.push(LaunchError::NoCommand {
            profile: profile.name.clone(),
        });
    }
    let full = |name: &str| -> Option<String> {
        if name == "rendered_prompt" {
            return Some(prompt.clone());
        }
        with_marker(name)
    };
    let agent_log = command
        .iter()
        .chain(profile.env.values())
        .chain(task.env.values())
        .any(|part| part.contains("{agent_log}"))
        .then(|| ctx.agent_log_file());
    let mut argv = Vec::with_capacity(command.len());
    for (i, part) in command.iter().enumerate() {
        argv.push(render_template(problems, site(i), part, &full));
    }
    let mut env = BTreeMap::new();
    env.insert("TERM".to_string(), "xterm-256color".to_string());
    env.insert("COLORTERM".to_string(), "truecolor".to_string());
    for (key, value) in profile.env.iter().chain(task.env.iter()) {
        let rendered = render_template(
            problems,
            TemplateSite::Env { key: key.clone() },
            value,
            &full,
        );
        env.insert(key.clone(), rendered);
    }
    env.insert("HERD_TASK_ID".to_string(), task.task_id.clone());
    env.insert("HERD_ATTEMPT".to_string(), ctx.attempt.to_string());
    env.insert("HERD_COMPLETION_MARKER".to_string(), marker.clone());
    env.insert(
        "HERD_RUN_DIR".to_string(),
        ctx.run_dir.display().to_string(),
    );
    if let Some(path) = &signal_file {
        env.insert("HERD_SIGNAL_FILE".to_string(), path.display().to_string());
    }
    if profile.protocol == crate::core::profile::Protocol::Acp {
        let log = acp::log_path(ctx.run_dir, ctx.attempt);
        argv = acp::wrap(argv, &mut env, task, profile, &prompt, &log);
        if let Some(resume) = resume {
            env.insert("HERD_ACP_LOAD_SESSION".into(), resume.session_id.clone());
        }
    }
    LaunchPlan {
        argv,
        cwd,
        env,
        prompt,
        marker,
        completion,
        resumed_session: resume.map(|r| r.session_id.clone()),
        signal_file,
        agent_log,
    }
}

/// `text` with its placeholders filled from `values`; empty, and the problem added to
/// `problems`, when it cannot be.
fn render_template(
    problems: &mut Vec<LaunchError>,
    site: TemplateSite,
    text: &str,
    values: &dyn Fn(&str) -> Option<String>,
) -> String {
    template::render(text, values).unwrap_or_else(|error| {
        problems.push(LaunchError::Template { site, error });
        String::new()
    })
}

/// What the previous attempt's failure context says (`result.failure_summary`), for a retry.
fn previous_failure(task: &TaskSpec, attempt: u32) -> Option<String> {
    if attempt <= 1 {
        return None;
    }
    task.result
        .as_ref()?
        .get("failure_summary")?
        .as_str()
        .filter(|s| !s.is_empty())
        .map(str::to_string)
}

/// Everything about a task that can be known before launching it. The attempt number and run
/// folder only fill placeholders here. The first problem, if any (`problems` lists them all).
pub fn prepare(
    task: &TaskSpec,
    profiles: &ProfileSet,
    ctx: &LaunchContext<'_>,
) -> Result<LaunchPlan, LaunchError> {
    let mut plan = render(task, profiles, ctx)?;
    check_launch(&mut plan)?;
    Ok(plan)
}

/// The plan without looking at this machine's folders and programs (an attempt on another
/// host finds them there).
pub fn render(
    task: &TaskSpec,
    profiles: &ProfileSet,
    ctx: &LaunchContext<'_>,
) -> Result<LaunchPlan, LaunchError> {
    let profile = profiles
        .get(&task.agent)
        .ok_or_else(|| unknown_agent(task, profiles))?;
    let source = prompt::prompt_source(task, ctx.base_dir)?;
    let resume = prompt::resume_request(task, profile, ctx.attempt);
    render_launch(task, profile, &source, resume.as_ref(), ctx)
}

/// Every problem that keeps the task from being launched, each independent of the others: one
/// bad field does not hide another (a folder that is missing and a placeholder without a value
/// are both listed). Empty when `prepare` would succeed.
pub fn problems(
    task: &TaskSpec,
    profiles: &ProfileSet,
    ctx: &LaunchContext<'_>,
) -> Vec<LaunchError> {
    let mut problems = Vec::new();
    // A task on another host finds its folder and program there.
    let local = task.host.is_none();
    let folder = if local {
        check_folder(&task_cwd(task, ctx.base_dir))
    } else {
        Ok(())
    };
    let source = match prompt::prompt_source(task, ctx.base_dir) {
        Ok(source) => Some(source),
        // A missing folder explains an unreadable prompt file.
        Err(LaunchError::PromptFileUnreadable { .. }) if folder.is_err() => None,
        Err(e) => {
            problems.push(e);
            None
        }
    };
    let plan = match profiles.get(&task.agent) {
        Some(profile) => {
            let resume = prompt::resume_request(task, profile, ctx.attempt);
            // An unreadable prompt stands in as empty, so the command and env are still checked.
            let source = source.unwrap_or_else(|| PromptSource::CommandFile(String::new()));
            Some(render_all(
                task,
                profile,
                &source,
                resume.as_ref(),
                ctx,
                &mut problems,
            ))
        }
        None => {
            problems.push(unknown_agent(task, profiles));
            None
        }
    };
    if let Err(e) = folder {
        problems.push(e);
    } else if let Some(mut plan) =
        plan.filter(|p| local && p.argv.first().is_some_and(|a| !a.is_empty()))
    {
        // The program is looked for when its own name rendered (its other items need not).
        if let Err(e) = resolve_program(&mut plan) {
            problems.push(e);
        }
    }
    problems
}

fn unknown_agent(task: &TaskSpec, profiles: &ProfileSet) -> LaunchError {
    LaunchError::UnknownAgent {
        agent: task.agent.clone(),
        known: profiles.names().map(str::to_string).collect(),
    }
}

/// Checks the folder exists and the program can be found; resolves `herd` to this executable
/// (the simulator profile runs `herd sim`).
pub fn check_launch(plan: &mut LaunchPlan) -> Result<(), LaunchError> {
    check_folder(&plan.cwd)?;
    resolve_program(plan)
}

fn check_folder(cwd: &Path) -> Result<(), LaunchError> {
    if cwd.is_dir() {
        Ok(())
    } else {
        Err(LaunchError::NoFolder {
            path: cwd.to_path_buf(),
        })
    }
}

/// Finds the program on the agent's own PATH and puts its full path in `argv[0]`.
fn resolve_program(plan: &mut LaunchPlan) -> Result<(), LaunchError> {
    let Some(program) = plan.argv.first().cloned() else {
        return Ok(());
    };
    if program == "herd" {
        let exe = std::env::current_exe().map_err(|e| LaunchError::OwnExecutable {
            reason: e.to_string(),
        })?;
        plan.argv[0] = exe.display().to_string();
        return Ok(());
    }
    let path_var = plan
        .env
        .get("PATH")
        .map(std::ffi::OsString::from)
        .or_else(|| std::env::var_os("PATH"));
    match find_program(&program, &plan.cwd, path_var.as_deref()) {
        Some(path) => {
            plan.argv[0] = path.display().to_string();
            Ok(())
        }
        None => Err(LaunchError::NotInstalled { program }),
    }
}

/// `program` as the agent's own environment would find it: the task's or profile's `PATH` when
/// it sets one, herd's otherwise.
fn find_program(program: &str, cwd: &Path, path_var: Option<&std::ffi::OsStr>) -> Option<PathBuf> {
    if program.contains('/') {
        let path = cwd.join(program);
        return is_executable(&path).then_some(path);
    }
    std::env::split_paths(path_var?)
        .map(|dir| dir.join(program))
        .find(|candidate| is_executable(candidate))
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    path.metadata()
        .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::taskfile::TaskFile;

    fn profiles() -> ProfileSet {
        let text = r#"
[profiles.a]
command = ["agent", "--prompt", "{rendered_prompt}", "--id={task_id}"]
env = { A_HOME = "/tmp/{task_id}" }
[profiles.bare]
command = []
"#;
        ProfileSet::build(&[text], None).unwrap()
    }

    fn task(json: &str) -> TaskSpec {
        let text = format!("{{\"tasks\": [{json}]}}");
        TaskFile::parse(&text).unwrap().tasks()[0].clone()
    }

    fn tpl(t: &TaskSpec) -> PromptSource {
        PromptSource::Template(t.prompt_template.clone().unwrap())
    }

    fn text(template: &str) -> PromptSource {
        PromptSource::Template(template.to_string())
    }

    fn ctx() -> LaunchContext<'static> {
        LaunchContext {
            base_dir: Path::new("/base"),
            run_id: Some("r1"),
            attempt: 2,
            run_dir: Path::new("/base/runs/t"),
        }
    }

    #[test]
    fn renders_prompt_marker_command_and_env() {
        let p = profiles();
        let t = task(
            r#"{"task_id": "t", "agent": "a", "inputs": {"doc": "D", "n": 3}, "prompt_template": "Do {doc} x{n} #{attempt} then print {completion_marker}"}"#,
        );
        let plan = render_launch(&t, p.get("a").unwrap(), &tpl(&t), None, &ctx()).unwrap();
        assert_eq!(plan.prompt, "Do D x3 #2 then print TASK_COMPLETE:t");
        assert_eq!(
            plan.argv,
            [
                "agent",
                "--prompt",
                "Do D x3 #2 then print TASK_COMPLETE:t",
                "--id=t"
            ]
        );
        assert_eq!(plan.marker, "TASK_COMPLETE:t");
        assert_eq!(plan.env["A_HOME"], "/tmp/t");
        assert_eq!(plan.env["HERD_ATTEMPT"], "2");
        assert_eq!(plan.cwd, Path::new("/base"));
    }

    #[test]
    fn a_retry_carries_the_previous_failure() {
        let p = profiles();
        let json = r#"{"task_id": "t", "agent": "a", "prompt_template": "Fix it.", "attempts": 1,
            "result": {"failure_summary": "The previous attempt failed. error[E0308] at src/main.rs:4"}}"#;
        let t = task(json);
        let first = LaunchContext {
            attempt: 1,
            ..ctx()
        };
        let plan = render_launch(&t, p.get("a").unwrap(), &text("Fix it."), None, &first).unwrap();
        assert_eq!(plan.prompt, "Fix it.");
        let plan = render_launch(&t, p.get("a").unwrap(), &text("Fix it."), None, &ctx()).unwrap();
        assert_eq!(
            plan.prompt,
            "Fix it.\n\nThe previous attempt failed. error[E0308] at src/main.rs:4"
        );
        let placed = "Fix it. Last time: {previous_failure}";
        let plan = render_launch(&t, p.get("a").unwrap(), &text(placed), None, &ctx()).unwrap();
        assert_eq!(
            plan.prompt,
            "Fix it. Last time: The previous attempt failed. error[E0308] at src/main.rs:4"
        );
        let plan = render_launch(&t, p.get("a").unwrap(), &text(placed), None, &first).unwrap();
        assert_eq!(plan.prompt, "Fix it. Last time: ");
    }

    #[test]
    fn missing_placeholders_are_named() {
        let p = profiles();
        let t =
            task(r#"{"task_id": "t", "agent": "a", "prompt_template": "Do {doc} and {other}"}"#);
        let err = render_launch(&t, p.get("a").unwrap(), &tpl(&t), None, &ctx())
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            "prompt_template: no value for {doc}, {other}; add them to \"inputs\" (or write {{ }} for literal braces)"
        );
    }

    #[test]
    fn a_task_command_replaces_the_profile_and_bare_profiles_need_one() {
        let p = profiles();
        let t = task(
            r#"{"task_id": "t", "agent": "bare", "prompt_template": "x", "command": ["./go", "{rendered_prompt}"]}"#,
        );
        let plan = render_launch(&t, p.get("bare").unwrap(), &text("x"), None, &ctx()).unwrap();
        assert_eq!(plan.argv, ["./go", "x"]);
        let t = task(r#"{"task_id": "t", "agent": "bare", "prompt_template": "x"}"#);
        assert!(
            render_launch(&t, p.get("bare").unwrap(), &text("x"), None, &ctx())
                .unwrap_err()
                .to_string()
                .contains("has no command")
        );
    }

    #[test]
    fn unknown_agents_missing_folders_and_programs_are_config_errors() {
        let p = profiles();
        let t = task(r#"{"task_id": "t", "agent": "nope", "prompt_template": "x"}"#);
        assert!(
            prepare(&t, &p, &ctx())
                .unwrap_err()
                .to_string()
                .contains("not a known profile; use one of a, bare")
        );
        let t = task(
            r#"{"task_id": "t", "agent": "a", "prompt_template": "x", "cwd": "/definitely/not/here"}"#,
        );
        assert!(
            prepare(&t, &p, &ctx())
                .unwrap_err()
                .to_string()
                .contains("does not exist")
        );
        let dir = tempfile::tempdir().unwrap();
        let c = LaunchContext {
            base_dir: dir.path(),
            ..ctx()
        };
        let t = task(r#"{"task_id": "t", "agent": "a", "prompt_template": "x"}"#);
        assert!(
            prepare(&t, &p, &c)
                .unwrap_err()
                .to_string()
                .contains("command \"agent\" is not installed")
        );
    }

    #[test]
    fn the_program_is_looked_up_on_the_tasks_own_path() {
        use std::os::unix::fs::PermissionsExt;
        let p = profiles();
        let bin = tempfile::tempdir().unwrap();
        let program = bin.path().join("agent");
        std::fs::write(&program, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o755)).unwrap();
        let json = format!(
            r#"{{"task_id": "t", "agent": "a", "prompt_template": "x", "env": {{"PATH": "{}"}}}}"#,
            bin.path().display()
        );
        let c = LaunchContext {
            base_dir: bin.path(),
            ..ctx()
        };
        let plan = prepare(&task(&json), &p, &c).unwrap();
        assert_eq!(plan.argv[0], program.display().to_string());
    }

    #[test]
    fn a_signal_file_task_gets_the_path_and_how_to_write_it() {
        let p = profiles();
        let t = task(
            r#"{"task_id": "t", "agent": "a", "prompt_template": "Fix it.", "completion": "signal_file"}"#,
        );
        let plan = render_launch(&t, p.get("a").unwrap(), &tpl(&t), None, &ctx()).unwrap();
        let path = "/base/runs/t/attempt_2.signal.json";
        assert_eq!(plan.env["HERD_SIGNAL_FILE"], path);
        assert_eq!(plan.signal_file.as_deref(), Some(Path::new(path)));
        assert!(plan.prompt.starts_with(
            "Fix it.\n\nWhen you finish, write a JSON file at /base/runs/t/attempt_2.signal.json"
        ));
        assert!(!plan.completion.marker_required);
        let placed = "Fix it, then report to {signal_file}.";
        let plan = render_launch(&t, p.get("a").unwrap(), &text(placed), None, &ctx()).unwrap();
        assert_eq!(plan.prompt, format!("Fix it, then report to {path}."));
    }

    #[test]
    fn a_command_file_prompt_is_not_templated_and_learns_the_marker() {
        let p = profiles();
        let t = task(r#"{"task_id": "t", "agent": "a", "prompt_file": "x.md"}"#);
        let source = PromptSource::CommandFile("Keep {this} and $HOME.".into());
        let plan = render_launch(&t, p.get("a").unwrap(), &source, None, &ctx()).unwrap();
        assert_eq!(
            plan.prompt,
            "Keep {this} and $HOME.\n\nWhen the task is complete, print exactly: TASK_COMPLETE:t"
        );
        assert_eq!(plan.argv[2], plan.prompt);
    }

    #[test]
    fn a_resumed_attempt_runs_the_resume_command_with_the_message() {
        let text_profiles = r#"
[profiles.r]
command = ["agent", "{rendered_prompt}"]
resume = ["agent", "--resume", "{session_id}", "-p", "{rendered_prompt}"]
"#;
        let p = ProfileSet::build(&[text_profiles], None).unwrap();
        let t = task(r#"{"task_id": "t", "agent": "r", "prompt_template": "Original {task_id}"}"#);
        let resume = Resume {
            session_id: "s-1".into(),
            message: "Use Postgres; \"quoted\" $1".into(),
        };
        let plan = render_launch(&t, p.get("r").unwrap(), &tpl(&t), Some(&resume), &ctx()).unwrap();
        assert_eq!(
            plan.argv,
            [
                "agent",
                "--resume",
                "s-1",
                "-p",
                "Use Postgres; \"quoted\" $1"
            ]
        );
        assert_eq!(plan.resumed_session.as_deref(), Some("s-1"));
    }

    #[test]
    fn an_acp_agent_runs_under_herds_client_and_resumes_by_loading_its_session() {
        let text = r#"
[profiles.x]
command = ["agent-acp", "--stdio"]
protocol = "acp"
"#;
        let p = ProfileSet::build(&[text], None).unwrap();
        let profile = p.get("x").unwrap();
        assert_eq!(profile.output, crate::core::profile::OutputKind::StreamJson);
        let t = task(
            r#"{"task_id": "t", "agent": "x", "prompt_template": "Do {task_id}",
                "permission_policy": {"auto_press_1": true, "deny": ["Bash(git push:*)"]}}"#,
        );
        let plan = render_launch(&t, profile, &tpl(&t), None, &ctx()).unwrap();
        assert_eq!(
            plan.argv,
            ["herd", "acp-client", "--", "agent-acp", "--stdio"]
        );
        assert_eq!(plan.env["HERD_ACP_PROMPT"], plan.prompt);
        assert!(plan.env["HERD_ACP_LOG"].ends_with("attempt_2.acp.jsonl"));
        let policy: serde_json::Value = serde_json::from_str(&plan.env["HERD_ACP_POLICY"]).unwrap();
        assert_eq!(policy["auto_press_1"], true);
        assert_eq!(policy["deny"][0], "Bash(git push:*)");
        assert!(!plan.env.contains_key("HERD_ACP_LOAD_SESSION"));
        let resume = Resume {
            session_id: "s-1".into(),
            message: "Go on".into(),
        };
        let plan = render_launch(&t, profile, &tpl(&t), Some(&resume), &ctx()).unwrap();
        assert_eq!(
            plan.argv,
            ["herd", "acp-client", "--", "agent-acp", "--stdio"]
        );
        assert_eq!(plan.env["HERD_ACP_LOAD_SESSION"], "s-1");
        assert_eq!(plan.env["HERD_ACP_PROMPT"], "Go on");
    }
}
