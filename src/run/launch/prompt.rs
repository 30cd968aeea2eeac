//! What an attempt says to the agent and how its success is decided: the prompt's source, the
//! completion rule, herd's added lines, whether a session continues.

use std::path::Path;

use crate::core::profile::{OutputKind, Profile};
use crate::core::task::{Completion, RetryMode, TaskSpec};
use crate::core::taskfile::command_file;

use super::{LaunchError, task_cwd};

/// Where the prompt comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PromptSource {
    /// `prompt_template`: `{placeholders}` are filled.
    Template(String),
    /// `prompt_file` with its front matter cut and arguments filled (braces are literal).
    CommandFile(String),
}

/// The task's prompt source; a command file is read and filled (errors are config problems).
pub(crate) fn prompt_source(task: &TaskSpec, base_dir: &Path) -> Result<PromptSource, LaunchError> {
    if let Some(template) = &task.prompt_template {
        return Ok(PromptSource::Template(template.clone()));
    }
    let Some(file) = &task.prompt_file else {
        return Err(LaunchError::NoPrompt);
    };
    let path = task_cwd(task, base_dir).join(file);
    let text = std::fs::read_to_string(&path).map_err(|e| LaunchError::PromptFileUnreadable {
        path: path.clone(),
        reason: e.to_string(),
    })?;
    let body = command_file::strip_front_matter(&text);
    command_file::expand(body, &task.args)
        .map(PromptSource::CommandFile)
        .map_err(|error| LaunchError::PromptFileArguments { path, error })
}

/// The completion rule of an attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CompletionRule {
    pub completion: Completion,
    /// The completion marker must be seen too (in the final result's text for a structured one).
    pub marker_required: bool,
}

/// The rule in effect: the task's `completion`, else the marker (SPEC: required for every
/// agent unless the task opts out).
pub(crate) fn completion_rule(
    task: &TaskSpec,
    profile: &Profile,
) -> Result<CompletionRule, LaunchError> {
    let structured = profile.output == OutputKind::StreamJson;
    let completion = task.completion.unwrap_or(Completion::Marker);
    let marker_required = match completion {
        Completion::Marker => true,
        Completion::Result => task.completion_marker.is_some(),
        Completion::SignalFile => false,
    };
    if completion == Completion::Result && !structured {
        return Err(LaunchError::ResultNeedsEvents {
            profile: profile.name.clone(),
        });
    }
    Ok(CompletionRule {
        completion,
        marker_required,
    })
}

/// The session to continue and the message to continue it with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resume {
    pub session_id: String,
    pub message: String,
}

/// The session id the task's last attempt left, if any.
pub fn last_session(task: &TaskSpec) -> Option<String> {
    task.result
        .as_ref()?
        .get("session_id")?
        .as_str()
        .filter(|s| !s.is_empty())
        .map(str::to_string)
}

/// Whether attempt `attempt` continues the last session (an operator's message, or
/// `"retry_mode": "resume"`), given a session id and a profile that can resume.
pub(crate) fn resume_request(task: &TaskSpec, profile: &Profile, attempt: u32) -> Option<Resume> {
    // An ACP agent continues a session through its client (`session/load`), not an argv.
    if !profile.can_resume() {
        return None;
    }
    let session_id = last_session(task)?;
    if let Some(message) = &task.resume_message {
        return Some(Resume {
            session_id,
            message: message.clone(),
        });
    }
    if task.retry_mode == RetryMode::Resume && attempt > 1 {
        return Some(Resume {
            session_id,
            message: continuation_message(task),
        });
    }
    None
}

/// What a resumed retry says: go on, and what ended the previous attempt.
fn continuation_message(task: &TaskSpec) -> String {
    let mut message = "Continue the task where you left off and finish it.".to_string();
    let result = task.result.as_ref();
    let evidence = result
        .and_then(|r| r.get("failure_evidence"))
        .and_then(|v| v.as_str());
    if let Some(evidence) = evidence.filter(|e| !e.is_empty()) {
        message.push_str(&format!(" The previous attempt ended with: {evidence}."));
    }
    message
}

/// For an attempt that starts afresh despite an operator's message: the message (and questions).
pub(crate) fn fresh_prompt_addition(task: &TaskSpec) -> Option<String> {
    let message = task.resume_message.as_ref()?;
    let questions: Vec<&str> = task
        .result
        .as_ref()
        .and_then(|r| r.get("questions"))
        .and_then(|q| q.as_array())
        .map(|q| q.iter().filter_map(|v| v.as_str()).collect())
        .unwrap_or_default();
    let mut text = String::new();
    if questions.is_empty() {
        text.push_str("A message from the operator:\n");
    } else {
        text.push_str("You asked:\n");
        for question in questions {
            text.push_str(&format!("- {question}\n"));
        }
        text.push_str("The operator answers:\n");
    }
    text.push_str(message);
    Some(text)
}

/// The completion instruction herd adds to a prompt without one (SPEC: prompts written as people
/// write them must be able to succeed).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AddedInstruction {
    /// "When complete, print exactly: <marker>".
    Marker,
    /// How to write the signal file at this path.
    SignalFile(std::path::PathBuf),
}

impl AddedInstruction {
    /// The paragraph added to the prompt; `marker` is the task's rendered marker.
    pub fn text(&self, marker: &str) -> String {
        match self {
            AddedInstruction::Marker => marker_instruction(marker),
            AddedInstruction::SignalFile(path) => signal_instruction(path),
        }
    }
}

/// The line that tells the agent how to finish, for prompts that do not say it themselves.
pub(crate) fn marker_instruction(marker: &str) -> String {
    format!("When complete, print exactly: {marker}")
}

/// How to write the signal file, for prompts that do not place `{signal_file}` themselves.
pub(crate) fn signal_instruction(path: &Path) -> String {
    format!(
        "When you finish, write a JSON file at {} (its path is also in $HERD_SIGNAL_FILE): \
         {{\"status\": \"done\", \"result\": \"<what you did>\"}} when the task is done, \
         {{\"status\": \"questions\", \"questions\": [\"<question>\", ...]}} when you need \
         answers before you can go on, or {{\"status\": \"error\", \"error\": \"<what went \
         wrong>\"}} when you cannot do it.",
        path.display()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::profile::ProfileSet;
    use crate::core::taskfile::TaskFile;

    fn profiles() -> ProfileSet {
        let text = r#"
[profiles.screen]
command = ["agent", "{rendered_prompt}"]
resume = ["agent", "--resume", "{session_id}", "{rendered_prompt}"]
[profiles.json]
command = ["agent", "-p", "{rendered_prompt}"]
output = "stream-json"
[profiles.noresume]
command = ["agent"]
"#;
        ProfileSet::build(&[text], None).unwrap()
    }

    fn task(json: &str) -> TaskSpec {
        let text = format!("{{\"tasks\": [{json}]}}");
        TaskFile::parse(&text).unwrap().tasks()[0].clone()
    }

    #[test]
    fn the_marker_is_required_unless_the_task_opts_out() {
        let p = profiles();
        let (screen, json) = (p.get("screen").unwrap(), p.get("json").unwrap());
        let plain = task(r#"{"task_id": "t", "agent": "x", "prompt_template": "x"}"#);
        let rule = |t: &TaskSpec, pr: &Profile| completion_rule(t, pr).unwrap();
        assert_eq!(
            rule(&plain, screen),
            CompletionRule {
                completion: Completion::Marker,
                marker_required: true
            }
        );
        // Structured agents too need the marker unless the task opts out.
        assert_eq!(
            rule(&plain, json),
            CompletionRule {
                completion: Completion::Marker,
                marker_required: true
            }
        );
        let opted_out = task(
            r#"{"task_id": "t", "agent": "x", "prompt_template": "x", "completion": "result"}"#,
        );
        assert!(!rule(&opted_out, json).marker_required);
        let with_marker = task(
            r#"{"task_id": "t", "agent": "x", "prompt_template": "x", "completion_marker": "DONE"}"#,
        );
        assert!(rule(&with_marker, json).marker_required);
        let signal = task(
            r#"{"task_id": "t", "agent": "x", "prompt_template": "x", "completion": "signal_file"}"#,
        );
        assert_eq!(rule(&signal, screen).completion, Completion::SignalFile);
        assert!(!rule(&signal, screen).marker_required);
        let result = task(
            r#"{"task_id": "t", "agent": "x", "prompt_template": "x", "completion": "result"}"#,
        );
        let err = completion_rule(&result, screen).unwrap_err().to_string();
        assert!(err.contains("reads the screen"), "{err}");
    }

    #[test]
    fn a_session_is_resumed_for_a_message_or_a_resume_retry() {
        let p = profiles();
        let screen = p.get("screen").unwrap();
        let with_session = r#""result": {"session_id": "abc", "failure_evidence": "exit code 1"}"#;
        let retry = task(&format!(
            r#"{{"task_id": "t", "agent": "x", "prompt_template": "x", "retry_mode": "resume", {with_session}}}"#
        ));
        let resume = resume_request(&retry, screen, 2).unwrap();
        assert_eq!(resume.session_id, "abc");
        assert_eq!(
            resume.message,
            "Continue the task where you left off and finish it. The previous attempt ended with: exit code 1."
        );
        assert_eq!(resume_request(&retry, screen, 1), None);
        assert_eq!(resume_request(&retry, p.get("noresume").unwrap(), 2), None);
        let restart = task(&format!(
            r#"{{"task_id": "t", "agent": "x", "prompt_template": "x", {with_session}}}"#
        ));
        assert_eq!(resume_request(&restart, screen, 2), None);
        let message = task(&format!(
            r#"{{"task_id": "t", "agent": "x", "prompt_template": "x", "resume_message": "use sqlite", {with_session}}}"#
        ));
        assert_eq!(
            resume_request(&message, screen, 5).unwrap().message,
            "use sqlite"
        );
        let no_session = task(
            r#"{"task_id": "t", "agent": "x", "prompt_template": "x", "resume_message": "go", "retry_mode": "resume"}"#,
        );
        assert_eq!(resume_request(&no_session, screen, 2), None);
    }

    #[test]
    fn a_message_without_a_session_goes_into_a_fresh_prompt() {
        let t = task(
            r#"{"task_id": "t", "agent": "x", "prompt_template": "x", "resume_message": "Postgres; yes",
                "result": {"questions": ["Which database?", "Drop the table?"]}}"#,
        );
        assert_eq!(
            fresh_prompt_addition(&t).unwrap(),
            "You asked:\n- Which database?\n- Drop the table?\nThe operator answers:\nPostgres; yes"
        );
        let t = task(
            r#"{"task_id": "t", "agent": "x", "prompt_template": "x", "resume_message": "also add docs"}"#,
        );
        assert_eq!(
            fresh_prompt_addition(&t).unwrap(),
            "A message from the operator:\nalso add docs"
        );
    }

    #[test]
    fn command_files_are_read_beside_the_task_and_filled() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("fix.md"),
            "---\ndescription: fix\n---\nFix $1 in {braces} because $ARGUMENTS costs US$5\n",
        )
        .unwrap();
        let t = task(
            r#"{"task_id": "t", "agent": "x", "prompt_file": "fix.md", "args": ["src/a.rs", "it\npanics"]}"#,
        );
        assert_eq!(
            prompt_source(&t, dir.path()).unwrap(),
            PromptSource::CommandFile(
                "Fix src/a.rs in {braces} because src/a.rs, it\npanics costs US$5\n".into()
            )
        );
        let t =
            task(r#"{"task_id": "t", "agent": "x", "prompt_file": "fix.md", "args": ["only"]}"#);
        assert_eq!(
            prompt_source(&t, dir.path()).unwrap(),
            PromptSource::CommandFile("Fix only in {braces} because only costs US$5\n".into())
        );
        std::fs::write(dir.path().join("three.md"), "a $3").unwrap();
        let t = task(
            r#"{"task_id": "t", "agent": "x", "prompt_file": "three.md", "args": ["1", "2"]}"#,
        );
        let err = prompt_source(&t, dir.path()).unwrap_err().to_string();
        assert!(
            err.starts_with("prompt_file uses $3 but \"args\" has 2 values"),
            "{err}"
        );
        let t = task(r#"{"task_id": "t", "agent": "x", "prompt_file": "missing.md"}"#);
        let err = prompt_source(&t, dir.path()).unwrap_err().to_string();
        assert!(err.contains("missing.md: cannot read it"), "{err}");
    }
}
