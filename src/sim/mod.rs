//! The built-in agent simulator (being written).

#[derive(Debug, clap::Args, Clone)]
pub struct SimArgs {
    /// Scenario name (built-in) or path to a scenario TOML file
    pub scenario: String,
}

pub fn run(_args: &SimArgs) -> color_eyre::Result<i32> {
    Ok(0)
}
