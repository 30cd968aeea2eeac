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
