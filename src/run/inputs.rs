//! A run's inputs loaded for every command and face: profiles, hosts and the tasks file, each
//! problem as a `FILE:LINE:COL: message` line, and where recordings go by default.

use std::path::{Path, PathBuf};

use crate::core::profile::{ProfileError, ProfileSet};
use crate::core::remote::hosts::HostSet;
use crate::run::store::{self, StoreError};

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

/// The hosts of a run: `--hosts FILE`, else the profiles file's `[hosts]`, else none.
pub fn load_hosts(
    hosts: Option<&Path>,
    profiles: Option<&Path>,
) -> std::result::Result<HostSet, Vec<String>> {
    let Some(path) = hosts.or(profiles) else {
        return Ok(HostSet::default());
    };
    let text = std::fs::read_to_string(path).map_err(|e| {
        vec![format!(
            "{}: cannot read the hosts file: {e}",
            path.display()
        )]
    })?;
    HostSet::parse(&text).map_err(|errors| {
        errors
            .iter()
            .map(|e| match e.location {
                Some(_) => format!("{}:{e}", path.display()),
                None => format!("{}: {e}", path.display()),
            })
            .collect()
    })
}
