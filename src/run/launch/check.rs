//! The launch plan against the disk: the folder exists, the program is found.

use std::path::{Path, PathBuf};

use super::{LaunchError, LaunchPlan};

/// Checks the folder and the program; resolves `herd` to this executable.
pub fn check_launch(plan: &mut LaunchPlan) -> Result<(), LaunchError> {
    check_folder(&plan.cwd)?;
    resolve_program(plan)
}

pub(super) fn check_folder(cwd: &Path) -> Result<(), LaunchError> {
    if cwd.is_dir() {
        Ok(())
    } else {
        Err(LaunchError::NoFolder {
            path: cwd.to_path_buf(),
        })
    }
}

/// Finds the program on the agent's own PATH and puts its full path in `argv[0]`.
pub(super) fn resolve_program(plan: &mut LaunchPlan) -> Result<(), LaunchError> {
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

/// `program` as found on the agent's own `PATH` (the task's or profile's, else herd's).
pub fn find_program(
    program: &str,
    cwd: &Path,
    path_var: Option<&std::ffi::OsStr>,
) -> Option<PathBuf> {
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
