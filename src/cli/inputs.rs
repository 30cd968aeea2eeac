//! What every command shares: loading the profiles and the tasks file's problems as
//! `FILE:LINE:COL: message` lines, where the recordings go by default, and the exit codes.
//! Prints problems; decides nothing about tasks.

use std::path::{Path, PathBuf};

use crate::core::profile::{ProfileError, ProfileSet};
use crate::run::store::{self, StoreError};

/// Exit code for invalid input: nothing was started, nothing was written.
pub const EXIT_INVALID: i32 = 2;
/// herd itself cannot go on: it cannot write the tasks file or its recordings.
pub const EXIT_CANNOT_GO_ON: i32 = 3;

/// Built-in profiles plus the user's file; problems print as `FILE:LINE:COL: message`.
pub fn load_profiles(user: Option<&Path>) -> std::result::Result<ProfileSet, Vec<String>> {
    let user_text = match user {
        Some(path) => match std::fs::read_to_string(path) {
            Ok(text) => Some(text),
            Err(e) => {
                return Err(vec![format!(
                    "{}: cannot read the profiles file: {e}",
                    path.display()
                )]);
            }
        },
        None => None,
    };
    let built_in = crate::assets::built_in_profile_texts();
    ProfileSet::build(&built_in, user_text.as_deref()).map_err(|errors| {
        errors
            .iter()
            .map(|e: &ProfileError| {
                let file =
                    user.map_or("built-in profiles".to_string(), |p| p.display().to_string());
                match e.location {
                    Some(_) => format!("{file}:{e}"),
                    None => format!("{file}: {e}"),
                }
            })
            .collect()
    })
}

/// Each problem on stderr (a closed stderr never ends the command: see `run::console`).
pub fn print_problems(problems: &[String]) {
    for p in problems {
        crate::run::console::note(p);
    }
}

pub fn store_problems(error: &StoreError) -> Vec<String> {
    match error {
        StoreError::Invalid { path, problems } => problems
            .iter()
            .map(|p| store::format_problem(path, p))
            .collect(),
        other => vec![other.to_string()],
    }
}

/// `runs/` beside the tasks file.
pub fn default_runs_dir(tasks: &Path) -> PathBuf {
    tasks
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
        .join("runs")
}
