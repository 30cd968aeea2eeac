//! `herd replay`: the player and `--print` live in `crate::replay`; this keeps the command's
//! entry point where the dispatcher looks for it.

use color_eyre::eyre::Result;

use crate::cli::ReplayArgs;

pub fn replay(args: &ReplayArgs) -> Result<i32> {
    crate::replay::replay(args)
}
