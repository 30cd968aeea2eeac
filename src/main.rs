//! The `herd` binary: parses the command line and hands over to the library.

use clap::Parser;

fn main() -> color_eyre::Result<()> {
    let cli = herd::cli::Cli::parse();
    let code = herd::cli::dispatch(cli)?;
    std::process::exit(code);
}
