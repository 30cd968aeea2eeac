//! A task and its profile rendered into a launch plan, each placeholder filled. Pure: every
//! problem is collected.

use crate::core::profile::Profile;
use crate::core::profile::folder_trust::{FolderTrust, TrustedCli};
use crate::core::task::{Completion, TaskSpec};
use crate::core::taskfile::template;

use super::*;

/// Renders what can be rendered, adding every problem to `problems` (a failed template is left
/// empty); the plan is usable only when none was added.
pub(super) fn render_all(
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
    let cwd = ctx
        .cwd
        .map_or_else(|| task_cwd(task, ctx.base_dir), Path::to_path_buf);
    let mut values = Placeholders::new(task, resume, ctx, &cwd, signal_file.as_deref());
    let marker = render_marker(task, &values, problems);
    values.marker = Some(marker.clone());
    let (prompt, added_instruction) = match resume {
        Some(resume) => (resumed_prompt(resume, signal_file.as_deref()), None),
        None => {
            let prompt = FreshPrompt {
                source,
                completion: &completion,
                marker: &marker,
                signal_file: signal_file.as_deref(),
            };
            prompt.compose(task, ctx.attempt, &values, problems)
        }
    };
    values.prompt = Some(prompt.clone());
    let (command, site) = command_template(task, profile, resume);
    if command.is_empty() {
        problems.push(LaunchError::NoCommand {
            profile: profile.name.clone(),
        });
    }
    let agent_log = command
        .iter()
        .chain(profile.env.values())
        .chain(task.env.values())
        .any(|part| part.contains("{agent_log}"))
        .then(|| ctx.agent_log_file());
    let mut argv = render_argv(&command, site, &values, problems);
    let mut env = render_env(task, profile, &values, problems);
    add_herd_env(&mut env, task, ctx, &marker, signal_file.as_deref());
    if profile.protocol == crate::core::profile::Protocol::Acp {
        let log = acp::log_path(ctx.run_dir, ctx.attempt);
        argv = acp::wrap(argv, &mut env, task, profile, &prompt, &log);
        if let Some(resume) = resume {
            env.insert("HERD_ACP_LOAD_SESSION".into(), resume.session_id.clone());
        }
    }
    let trust_folder = trusted_cli(task, profile).map(|cli| FolderTrust {
        cli,
        folder: cwd.clone(),
    });
    LaunchPlan {
        argv,
        cwd,
        env,
        prompt,
        marker,
        completion,
        added_instruction,
        resumed_session: resume.map(|r| r.session_id.clone()),
        signal_file,
        agent_log,
        trust_folder,
    }
}

/// What the placeholders of a task's templates stand for (prompt and marker once rendered).
struct Placeholders<'a> {
    task: &'a TaskSpec,
    resume: Option<&'a Resume>,
    ctx: &'a LaunchContext<'a>,
    cwd: String,
    signal_file: Option<String>,
    agent_log: String,
    marker: Option<String>,
    prompt: Option<String>,
}

impl<'a> Placeholders<'a> {
    fn new(
        task: &'a TaskSpec,
        resume: Option<&'a Resume>,
        ctx: &'a LaunchContext<'a>,
        cwd: &Path,
        signal_file: Option<&Path>,
    ) -> Self {
        Self {
            task,
            resume,
            ctx,
            cwd: cwd.display().to_string(),
            signal_file: signal_file.map(|p| p.display().to_string()),
            agent_log: ctx.agent_log_file().display().to_string(),
            marker: None,
            prompt: None,
        }
    }

    /// The value of `{name}`: prompt and marker, then `inputs`, then herd's own values.
    fn value(&self, name: &str) -> Option<String> {
        match (name, &self.prompt, &self.marker) {
            ("rendered_prompt", Some(prompt), _) => return Some(prompt.clone()),
            ("completion_marker", _, Some(marker)) => return Some(marker.clone()),
            _ => {}
        }
        if let Some(value) = self.task.inputs.get(name) {
            return Some(value.clone());
        }
        self.builtin(name)
    }

    /// The placeholders herd fills itself, whatever the task's `inputs` say.
    fn builtin(&self, name: &str) -> Option<String> {
        let (task, ctx) = (self.task, self.ctx);
        match name {
            "task_id" => Some(task.task_id.clone()),
            "agent" => Some(task.agent.clone()),
            "attempt" => Some(ctx.attempt.to_string()),
            "cwd" => Some(self.cwd.clone()),
            "run_id" => ctx.run_id.map(str::to_string),
            "timeout_sec" => Some(task.timeout_sec.to_string()),
            "max_retries" => Some(task.max_retries.to_string()),
            "previous_failure" => Some(previous_failure(task, ctx.attempt).unwrap_or_default()),
            "signal_file" => self.signal_file.clone(),
            "agent_log" => Some(self.agent_log.clone()),
            // A CLI's permission mode: `inputs.permission_mode`, else the mode in which the
            // CLI asks before it acts.
            "permission_mode" => Some("default".to_string()),
            "approval_policy" => Some("on-request".to_string()),
            "sandbox_mode" => Some("workspace-write".to_string()),
            "hook_settings" => Some(
                ctx.hook_settings
                    .unwrap_or(crate::core::wire::hook::NO_SETTINGS)
                    .to_string(),
            ),
            "session_id" => self.resume.map(|r| r.session_id.clone()),
            _ => None,
        }
    }

    /// `text` rendered with these values (see `render_template`).
    fn render(&self, problems: &mut Vec<LaunchError>, site: TemplateSite, text: &str) -> String {
        render_template(problems, site, text, &|name| self.value(name))
    }
}

/// The task's completion marker, its template (or herd's default) rendered.
fn render_marker(
    task: &TaskSpec,
    values: &Placeholders<'_>,
    problems: &mut Vec<LaunchError>,
) -> String {
    let template = task
        .completion_marker
        .as_deref()
        .unwrap_or(DEFAULT_MARKER_TEMPLATE);
    values.render(problems, TemplateSite::CompletionMarker, template)
}

/// A resumed session's prompt (the session knows the task).
fn resumed_prompt(resume: &Resume, signal_file: Option<&Path>) -> String {
    match signal_file {
        Some(path) => format!("{}\n\n{}", resume.message, prompt::signal_instruction(path)),
        None => resume.message.clone(),
    }
}

/// A fresh session's prompt and what it is composed from.
struct FreshPrompt<'a> {
    source: &'a PromptSource,
    completion: &'a CompletionRule,
    marker: &'a str,
    signal_file: Option<&'a Path>,
}

impl FreshPrompt<'_> {
    /// The template rendered, then what it does not place itself: the previous failure, the
    /// profile's addition, the completion instruction.
    fn compose(
        &self,
        task: &TaskSpec,
        attempt: u32,
        values: &Placeholders<'_>,
        problems: &mut Vec<LaunchError>,
    ) -> (String, Option<AddedInstruction>) {
        let (mut prompt, placed) = match self.source {
            PromptSource::Template(text) => (
                values.render(problems, TemplateSite::PromptTemplate, text),
                text.as_str(),
            ),
            PromptSource::CommandFile(text) => (text.clone(), ""),
        };
        // What the task wrote itself, before herd adds anything that could quote the marker.
        let places_marker = placed.contains("{completion_marker}") || prompt.contains(self.marker);
        // A retry tells the agent what went wrong last time, unless the template places it.
        if let Some(summary) = previous_failure(task, attempt)
            && !placed.contains("{previous_failure}")
        {
            append_paragraph(&mut prompt, &summary);
        }
        if let Some(addition) = prompt::fresh_prompt_addition(task) {
            append_paragraph(&mut prompt, &addition);
        }
        let added = self.added_instruction(task, placed, places_marker);
        if let Some(instruction) = &added {
            append_paragraph(&mut prompt, &instruction.text(self.marker));
        }
        (prompt, added)
    }

    /// The completion instruction herd adds, unless the prompt places it or the task opts out.
    fn added_instruction(
        &self,
        task: &TaskSpec,
        placed: &str,
        places_marker: bool,
    ) -> Option<AddedInstruction> {
        if !task.marker_instruction {
            return None;
        }
        if let Some(path) = self.signal_file {
            return (!placed.contains("{signal_file}"))
                .then(|| AddedInstruction::SignalFile(path.to_path_buf()));
        }
        (self.completion.marker_required && !places_marker).then_some(AddedInstruction::Marker)
    }
}

/// `text` appended to `prompt` as a paragraph of its own.
fn append_paragraph(prompt: &mut String, text: &str) {
    prompt.push_str("\n\n");
    prompt.push_str(text);
}

/// The command to render and where its parts come from: a resumed session's command, else the
/// task's, else the profile's (ACP resumes through its client).
fn command_template(
    task: &TaskSpec,
    profile: &Profile,
    resume: Option<&Resume>,
) -> (Vec<String>, fn(usize) -> TemplateSite) {
    let acp = profile.protocol == crate::core::profile::Protocol::Acp;
    match (resume, &task.command) {
        (Some(_), _) if !acp => (profile.resume.clone(), |index| {
            TemplateSite::ResumeCommand { index }
        }),
        (_, Some(command)) => (command.clone(), |index| TemplateSite::Command { index }),
        (_, None) => (profile.command.clone(), |index| {
            TemplateSite::ProfileCommand { index }
        }),
    }
}

/// Each part of `command` rendered, but Codex's app-server placeholder.
fn render_argv(
    command: &[String],
    site: fn(usize) -> TemplateSite,
    values: &Placeholders<'_>,
    problems: &mut Vec<LaunchError>,
) -> Vec<String> {
    let mut argv = Vec::with_capacity(command.len());
    for (i, part) in command.iter().enumerate() {
        if part == crate::core::wire::app_server::PLACEHOLDER {
            argv.push(part.clone());
            continue;
        }
        argv.push(values.render(problems, site(i), part));
    }
    argv
}

/// The terminal's variables, then the profile's and the task's environment.
fn render_env(
    task: &TaskSpec,
    profile: &Profile,
    values: &Placeholders<'_>,
    problems: &mut Vec<LaunchError>,
) -> BTreeMap<String, String> {
    let mut env = BTreeMap::new();
    env.insert("TERM".to_string(), "xterm-256color".to_string());
    env.insert("COLORTERM".to_string(), "truecolor".to_string());
    for (key, value) in profile.env.iter().chain(task.env.iter()) {
        let site = TemplateSite::Env { key: key.clone() };
        let rendered = values.render(problems, site, value);
        env.insert(key.clone(), rendered);
    }
    env
}

/// The `HERD_*` variables that tell the agent (and its hooks) which attempt it is.
fn add_herd_env(
    env: &mut BTreeMap<String, String>,
    task: &TaskSpec,
    ctx: &LaunchContext<'_>,
    marker: &str,
    signal_file: Option<&Path>,
) {
    env.insert("HERD_TASK_ID".to_string(), task.task_id.clone());
    env.insert("HERD_ATTEMPT".to_string(), ctx.attempt.to_string());
    env.insert("HERD_COMPLETION_MARKER".to_string(), marker.to_string());
    env.insert(
        "HERD_RUN_DIR".to_string(),
        ctx.run_dir.display().to_string(),
    );
    if let Some(path) = signal_file {
        env.insert("HERD_SIGNAL_FILE".to_string(), path.display().to_string());
    }
}

/// The CLI whose config gets the trust, when the task or its profile trusts its folder.
fn trusted_cli(task: &TaskSpec, profile: &Profile) -> Option<TrustedCli> {
    if !task.trust_folder.unwrap_or(profile.trust_folder) {
        return None;
    }
    crate::core::profile::folder_trust::trusted_cli(profile.hooks, profile.agent_log)
}

/// `text` with its placeholders filled; empty, with a problem added, when it cannot be.
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
