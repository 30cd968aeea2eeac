//! A task and its profile rendered into a launch plan: argv, environment, prompt, marker, the
//! resume command, each placeholder filled. Pure: every problem is collected, nothing is looked
//! up on the file system (`check`).

use crate::core::folder_trust::{FolderTrust, TrustedCli};
use crate::core::profile::Profile;
use crate::core::task::{Completion, TaskSpec};
use crate::core::template;

use super::*;

/// Renders what can be rendered and adds every problem to `problems` (a template that cannot
/// be rendered is left empty, so the rest is still checked); the plan is usable only when
/// nothing was added.
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
            // A CLI's permission mode: the task's `inputs.permission_mode` (found above), else
            // the mode in which the CLI asks before it acts (Claude Code's and Gemini CLI's
            // `default`; Codex CLI's approval policy `on-request` in the sandbox that lets it
            // write in the task's folder).
            "permission_mode" => Some("default".to_string()),
            "approval_policy" => Some("on-request".to_string()),
            "sandbox_mode" => Some("workspace-write".to_string()),
            "hook_settings" => Some(
                ctx.hook_settings
                    .unwrap_or(crate::core::hook::NO_SETTINGS)
                    .to_string(),
            ),
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
        // Codex's app server: placed by the launch (`run::app_server::argv_for`).
        if part == crate::core::app_server::PLACEHOLDER {
            argv.push(part.clone());
            continue;
        }
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
        resumed_session: resume.map(|r| r.session_id.clone()),
        signal_file,
        agent_log,
        trust_folder,
    }
}

/// The CLI whose config gets the trust, when the task (or, unless it says otherwise, its
/// profile) trusts its folder and herd knows where that CLI keeps it.
fn trusted_cli(task: &TaskSpec, profile: &Profile) -> Option<TrustedCli> {
    if !task.trust_folder.unwrap_or(profile.trust_folder) {
        return None;
    }
    crate::core::folder_trust::trusted_cli(profile.hooks, profile.agent_log)
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
