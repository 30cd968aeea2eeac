//! What every command shares: its exit codes, and problems printed a line each (loading the
//! inputs is `run::inputs`).

/// Exit code for invalid input: nothing was started, nothing was written.
pub const EXIT_INVALID: i32 = 2;
/// herd itself cannot go on: it cannot write the tasks file or its recordings.
pub const EXIT_CANNOT_GO_ON: i32 = 3;

/// Each problem on stderr (a closed stderr never ends the command: see `run::console`).
pub fn print_problems(problems: &[String]) {
    for p in problems {
        crate::run::console::note(p);
    }
}

/// What was loaded, or `None` once its problems are on stderr.
pub fn loaded<T>(result: Result<T, Vec<String>>) -> Option<T> {
    result.map_err(|problems| print_problems(&problems)).ok()
}
