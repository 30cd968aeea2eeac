//! `herd profiles`: the profiles in effect, a line each, or one profile with every rule in full.

use color_eyre::eyre::Result;

use super::args::ProfilesArgs;
use super::inputs::{EXIT_INVALID, loaded};
use super::profiles_view;
use crate::run::inputs::load_profiles;

pub(super) fn profiles(args: &ProfilesArgs) -> Result<i32> {
    let Some(set) = loaded(load_profiles(args.profiles.as_deref())) else {
        return Ok(EXIT_INVALID);
    };
    if let Some(name) = &args.name {
        let Some(profile) = set.get(name) else {
            let known: Vec<&str> = set.names().collect();
            eprintln!(
                "herd: no profile named {name:?}; known: {}",
                known.join(", ")
            );
            return Ok(EXIT_INVALID);
        };
        print!("{}", profiles_view::describe_full(profile));
    } else {
        print!("{}", profiles_view::describe_all(&set));
    }
    Ok(0)
}
