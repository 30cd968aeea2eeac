//! `"on_complete": ["cmd", ...]`: the operator's command, run in the task's folder once its task
//! completed, with the task's facts as JSON on its standard input (to open a draft pull request
//! with `gh`, say). What it answered is recorded; it never changes the task's verdict.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::Value;

use super::ChangesError;

/// How much of the command's error output is kept for the record.
const KEPT_STDERR_CHARS: usize = 2000;

/// How the command ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandEnd {
    /// `None` when a signal ended it.
    pub exit_code: Option<i32>,
    /// The end of its error output, trimmed.
    pub stderr: String,
}

impl CommandEnd {
    pub fn succeeded(&self) -> bool {
        self.exit_code == Some(0)
    }
}

/// Runs `argv` in `folder` with `facts` on its standard input and waits for it.
pub fn run_on_complete(
    argv: &[String],
    folder: &Path,
    facts: &Value,
) -> Result<CommandEnd, ChangesError> {
    let (program, args) = argv.split_first().ok_or_else(|| ChangesError::CannotRun {
        program: String::new(),
        cause: "the command is empty".into(),
    })?;
    let cannot = |cause: String| ChangesError::CannotRun {
        program: program.clone(),
        cause,
    };
    let mut child = Command::new(program)
        .args(args)
        .current_dir(folder)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| cannot(e.to_string()))?;
    if let Some(mut stdin) = child.stdin.take() {
        // A command that does not read its input closes the pipe early: not an error of ours.
        let _ = stdin.write_all(format!("{facts}\n").as_bytes());
    }
    let output = child
        .wait_with_output()
        .map_err(|e| cannot(e.to_string()))?;
    let stderr = String::from_utf8_lossy(&output.stderr);
    let stderr = stderr.trim();
    let skip = stderr.chars().count().saturating_sub(KEPT_STDERR_CHARS);
    Ok(CommandEnd {
        exit_code: output.status.code(),
        stderr: stderr.chars().skip(skip).collect(),
    })
}
