//! `herd acp login <agent>` and `herd acp install <id>`: arguments to the shell's
//! `run::acp::{login, install}`, and their outcome on the terminal.

use color_eyre::eyre::Result;

use super::args::{AcpArgs, AcpCommand, AcpInstallArgs, AcpLoginArgs};
use super::inputs::{EXIT_INVALID, loaded};
use crate::core::profile::Protocol;
use crate::core::wire::acp::install::InstallPlan;
use crate::core::wire::acp::registry::{Registry, platform, profile_name};
use crate::run::acp::install::{data_folder, install};
use crate::run::acp::login::{LoginAgent, login};
use crate::run::inputs::load_profiles;

pub(super) fn acp(args: &AcpArgs) -> Result<i32> {
    match &args.command {
        AcpCommand::Login(args) => acp_login(args),
        AcpCommand::Install(args) => acp_install(args),
    }
}

fn acp_login(args: &AcpLoginArgs) -> Result<i32> {
    let Some(set) = loaded(load_profiles(args.profiles.as_deref())) else {
        return Ok(EXIT_INVALID);
    };
    let profile = set
        .get(&args.agent)
        .or_else(|| set.get(&profile_name(&args.agent)));
    let Some(profile) = profile.filter(|p| p.protocol == Protocol::Acp) else {
        eprintln!(
            "herd: no ACP agent {:?}: name a registry id (`qwen-code`) or a profile with \
             protocol = \"acp\" (`herd profiles` lists them)",
            args.agent
        );
        return Ok(EXIT_INVALID);
    };
    let agent = LoginAgent {
        name: profile.name.clone(),
        command: profile.command.clone(),
        env: profile.env.clone(),
    };
    match login(&agent) {
        Ok(code) => Ok(code),
        Err(error) => {
            eprintln!("herd: {error:#}");
            Ok(1)
        }
    }
}

fn acp_install(args: &AcpInstallArgs) -> Result<i32> {
    let registry = Registry::parse(&crate::assets::acp_registry_text())?;
    let here = platform(std::env::consts::OS, std::env::consts::ARCH);
    let Some(agent) = registry.agents.iter().find(|a| a.id == args.id) else {
        eprintln!("herd: no agent {:?} in the ACP registry", args.id);
        return Ok(EXIT_INVALID);
    };
    let plan = match InstallPlan::new(agent, &here, args.sha256.as_deref()) {
        Ok(plan) => plan,
        Err(error) => {
            eprintln!("herd: {error}");
            return Ok(EXIT_INVALID);
        }
    };
    let Some(data) = data_folder() else {
        eprintln!("herd: no data folder: set HOME or XDG_DATA_HOME");
        return Ok(EXIT_INVALID);
    };
    println!(
        "herd: downloading {} {} from {}",
        plan.id, plan.version, plan.archive
    );
    match install(&plan, &data) {
        Ok(command) => {
            println!(
                "herd: installed {} {} at {}; `acp:{}` runs it",
                plan.id,
                plan.version,
                command.display(),
                plan.id
            );
            Ok(0)
        }
        Err(error) => {
            eprintln!("herd: {error:#}");
            Ok(1)
        }
    }
}
