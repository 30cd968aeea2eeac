//! What can keep a task from being launched, typed, each problem with its task field; the
//! messages say how to fix it and become the evidence of a `failed_config` attempt.

use std::path::PathBuf;

use thiserror::Error;

use crate::core::taskfile::command_file::CommandFileError;
use crate::core::taskfile::template::TemplateError;

/// Where a template that cannot be rendered sits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TemplateSite {
    CompletionMarker,
    PromptTemplate,
    /// Item `index` (from 0) of the task's `command`.
    Command {
        index: usize,
    },
    /// Item `index` of the profile's command (the task has no `command`).
    ProfileCommand {
        index: usize,
    },
    /// Item `index` of the profile's `resume` command.
    ResumeCommand {
        index: usize,
    },
    /// The value of environment variable `key` (the task's `env` or the profile's).
    Env {
        key: String,
    },
}

impl std::fmt::Display for TemplateSite {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TemplateSite::CompletionMarker => f.write_str("completion_marker"),
            TemplateSite::PromptTemplate => f.write_str("prompt_template"),
            TemplateSite::Command { index } => write!(f, "command [{index}]"),
            TemplateSite::ProfileCommand { index } => {
                write!(f, "the profile's command [{index}]")
            }
            TemplateSite::ResumeCommand { index } => {
                write!(f, "the profile's resume command [{index}]")
            }
            TemplateSite::Env { key } => write!(f, "env {key}"),
        }
    }
}

/// One reason a task cannot be launched.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum LaunchError {
    #[error(
        "agent \"{agent}\" is not a known profile; use one of {} or add it with --profiles",
        known.join(", ")
    )]
    UnknownAgent { agent: String, known: Vec<String> },
    #[error(
        "no prompt_template and no prompt_file; give the task one of them (the prompt, or the \
         path of a file holding it)"
    )]
    NoPrompt,
    #[error(
        "prompt_file {}: cannot read it ({reason}); the path is relative to the task's cwd",
        path.display()
    )]
    PromptFileUnreadable { path: PathBuf, reason: String },
    #[error("{error} ({})", path.display())]
    PromptFileArguments {
        path: PathBuf,
        error: CommandFileError,
    },
    #[error(
        "\"completion\": \"result\" needs an agent that prints JSON events, but profile \
         \"{profile}\" reads the screen; use \"marker\" or \"signal_file\", or a profile with \
         output = \"stream-json\" (e.g. claude-json)"
    )]
    ResultNeedsEvents { profile: String },
    #[error("{}", template_message(site, error))]
    Template {
        site: TemplateSite,
        error: TemplateError,
    },
    #[error(
        "agent \"{profile}\" has no command of its own: give the task a \"command\" array, e.g. \
         [\"./run.sh\", \"{{task_id}}\"]"
    )]
    NoCommand { profile: String },
    #[error(
        "cwd {} does not exist or is not a folder; create it or fix \"cwd\"",
        path.display()
    )]
    NoFolder { path: PathBuf },
    #[error("cannot find herd's own executable for \"herd\": {reason}")]
    OwnExecutable { reason: String },
    #[error(
        "command \"{program}\" is not installed (not found on PATH); install it or set the \
         task's \"command\""
    )]
    NotInstalled { program: String },
}

impl LaunchError {
    /// The task field the problem belongs to, to point at it (`None`: the task as a whole).
    pub fn field(&self) -> Option<&'static str> {
        match self {
            LaunchError::UnknownAgent { .. } | LaunchError::NoCommand { .. } => Some("agent"),
            LaunchError::NoPrompt => Some("prompt_template"),
            LaunchError::PromptFileUnreadable { .. } | LaunchError::PromptFileArguments { .. } => {
                Some("prompt_file")
            }
            LaunchError::ResultNeedsEvents { .. } => Some("completion"),
            LaunchError::Template { site, .. } => Some(match site {
                TemplateSite::CompletionMarker => "completion_marker",
                TemplateSite::PromptTemplate => "prompt_template",
                TemplateSite::Env { .. } => "env",
                TemplateSite::Command { .. }
                | TemplateSite::ProfileCommand { .. }
                | TemplateSite::ResumeCommand { .. } => "command",
            }),
            LaunchError::NoFolder { .. } => Some("cwd"),
            LaunchError::OwnExecutable { .. } | LaunchError::NotInstalled { .. } => Some("command"),
        }
    }
}

fn template_message(site: &TemplateSite, error: &TemplateError) -> String {
    match error {
        TemplateError::Missing { names } => {
            let list = names
                .iter()
                .map(|n| format!("{{{n}}}"))
                .collect::<Vec<_>>()
                .join(", ");
            format!(
                "{site}: no value for {list}; add {} to \"inputs\" (or write {{{{ }}}} for literal braces)",
                if names.len() == 1 { "it" } else { "them" }
            )
        }
        other => format!("{site}: {other}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_problem_names_its_field() {
        let missing = LaunchError::Template {
            site: TemplateSite::Env { key: "HOME".into() },
            error: TemplateError::Missing {
                names: vec!["home".into()],
            },
        };
        assert_eq!(missing.field(), Some("env"));
        assert_eq!(
            missing.to_string(),
            "env HOME: no value for {home}; add it to \"inputs\" (or write {{ }} for literal braces)"
        );
        let folder = LaunchError::NoFolder {
            path: PathBuf::from("/no/such"),
        };
        assert_eq!(folder.field(), Some("cwd"));
        let agent = LaunchError::UnknownAgent {
            agent: "x".into(),
            known: vec!["a".into(), "b".into()],
        };
        assert_eq!(
            agent.to_string(),
            "agent \"x\" is not a known profile; use one of a, b or add it with --profiles"
        );
    }
}
