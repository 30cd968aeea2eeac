//! `herd explain PATH`: prints the timeline of an attempt's recording and facts file
//! (`serve::explain`).

use color_eyre::eyre::Result;

use super::args::ExplainArgs;
use super::inputs::{EXIT_INVALID, print_problems};
use crate::serve::explain::{ExplainError, explain_attempt};

pub(super) fn explain(args: &ExplainArgs) -> Result<i32> {
    match explain_attempt(&args.path, args.profiles.as_deref(), args.agent.as_deref()) {
        Ok(explained) => {
            println!("{}", explained.cast.display());
            for line in explained.lines {
                println!("{line}");
            }
            Ok(0)
        }
        Err(ExplainError::Profiles { problems }) => {
            print_problems(&problems);
            Ok(EXIT_INVALID)
        }
        Err(error) => {
            eprintln!("herd: {error}");
            Ok(EXIT_INVALID)
        }
    }
}
