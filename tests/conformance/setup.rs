//! One isolated config folder per task, as a new user would have it after the CLI's onboarding
//! (and nothing pre-approved: no tool, command or folder is allowed in advance): HOME for Claude
//! Code and Gemini CLI, CODEX_HOME for Codex CLI, each pointed at the mock model API by its own
//! documented setting. Also where the pinned CLIs are found (`tests/conformance/node_modules`,
//! Aider in the virtual environment `tests/conformance/aider`; under `tests/conformance/latest/`
//! for the drift check).

// Test helper module: its pub items are the test crate's own.
#![allow(unreachable_pub)]

use std::path::{Path, PathBuf};

use serde_json::json;

use super::mock_api::Scenario;

/// The agent CLIs under test.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cli {
    Claude,
    Codex,
    Gemini,
    Aider,
}

impl Cli {
    pub const ALL: [Cli; 4] = [Cli::Claude, Cli::Codex, Cli::Gemini, Cli::Aider];

    pub fn name(self) -> &'static str {
        match self {
            Cli::Claude => "claude",
            Cli::Codex => "codex",
            Cli::Gemini => "gemini",
            Cli::Aider => "aider",
        }
    }

    /// The npm package that provides it.
    pub fn package(self) -> &'static str {
        match self {
            Cli::Claude => "@anthropic-ai/claude-code",
            Cli::Codex => "@openai/codex",
            Cli::Gemini => "@google/gemini-cli",
            Cli::Aider => "aider-chat (PyPI)",
        }
    }
}

/// The key every CLI is given; the mock accepts any.
pub const API_KEY: &str = "sk-mock-conformance-0123456789abcdefghij";

/// The folder whose `node_modules/.bin` holds the CLIs: the pinned ones, or `@latest` for the
/// drift check (`HERD_CONFORMANCE_LATEST=1`). Missing is a failure with the command that fixes
/// it, never a skip.
pub fn cli_bin_dir() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/conformance");
    let (dir, how) = if latest() {
        (
            root.join("latest"),
            "HERD_CONFORMANCE_LATEST=1 scripts/test -- --test conformance",
        )
    } else {
        (root, "scripts/test (or `npm ci` in tests/conformance)")
    };
    let bin = dir.join("node_modules/.bin");
    for cli in [Cli::Claude, Cli::Codex, Cli::Gemini] {
        assert!(
            bin.join(cli.name()).exists(),
            "{} is not installed in {}; run {how}",
            cli.package(),
            bin.display()
        );
    }
    bin
}

/// Fails, with the command that fixes it, when Aider is not installed (for suites that run it).
pub fn require_aider() {
    let how = if latest() {
        "HERD_CONFORMANCE_LATEST=1 scripts/test -- --test conformance"
    } else {
        "scripts/test"
    };
    assert!(
        aider_bin_dir().join("aider").exists(),
        "{} is not installed in {}; run {how}",
        Cli::Aider.package(),
        aider_bin_dir().display()
    );
}

/// The `bin` folder of Aider's virtual environment (its own Python: it goes on Aider's tasks'
/// PATH only).
pub fn aider_bin_dir() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/conformance");
    let root = if latest() { root.join("latest") } else { root };
    root.join("aider/bin")
}

pub fn latest() -> bool {
    std::env::var_os("HERD_CONFORMANCE_LATEST").is_some_and(|v| !v.is_empty() && v != "0")
}

/// The installed version of a CLI, from its package.json (Aider: its dist-info folder).
pub fn version(bin: &Path, cli: Cli) -> String {
    if cli == Cli::Aider {
        return aider_version().unwrap_or_else(|| "?".into());
    }
    let manifest = bin.join(format!("../{}/package.json", cli.package()));
    std::fs::read_to_string(manifest)
        .ok()
        .and_then(|text| serde_json::from_str::<serde_json::Value>(&text).ok())
        .and_then(|v| v["version"].as_str().map(str::to_string))
        .unwrap_or_else(|| "?".into())
}

fn aider_version() -> Option<String> {
    let lib = aider_bin_dir().join("../lib");
    let site = std::fs::read_dir(lib).ok()?.flatten().next()?.path();
    std::fs::read_dir(site.join("site-packages"))
        .ok()?
        .flatten()
        .filter_map(|e| e.file_name().into_string().ok())
        .find_map(|name| {
            name.strip_prefix("aider_chat-")?
                .strip_suffix(".dist-info")
                .map(str::to_string)
        })
}

/// Writes the CLI's config under `home` for a task working in `cwd` and returns the task's
/// extra environment. `trusted`: the folder is trusted in advance (Gemini; Claude and Codex ask,
/// and herd's built-in trust rules answer).
pub fn prepare(
    cli: Cli,
    home: &Path,
    cwd: &Path,
    base_url: &str,
    scenario: Scenario,
    trusted: bool,
) -> std::io::Result<Vec<(String, String)>> {
    std::fs::create_dir_all(home)?;
    std::fs::create_dir_all(cwd)?;
    let home_text = home.display().to_string();
    let mut env = vec![
        ("HOME".to_string(), home_text.clone()),
        (
            "XDG_CONFIG_HOME".to_string(),
            format!("{home_text}/.config"),
        ),
        ("XDG_CACHE_HOME".to_string(), format!("{home_text}/.cache")),
        (
            "XDG_DATA_HOME".to_string(),
            format!("{home_text}/.local/share"),
        ),
        ("TERM".to_string(), "xterm-256color".to_string()),
        // Gemini writes error reports to the temporary folder: keep them with the task.
        ("TMPDIR".to_string(), format!("{home_text}/tmp")),
    ];
    std::fs::create_dir_all(home.join("tmp"))?;
    // The CLIs' retry loops are shortened where they let us; one scenario keeps them.
    let quick = !matches!(
        scenario,
        Scenario::AuthRetryLoop | Scenario::QuotaRetryLoop | Scenario::OverloadedRetryLoop
    );
    match cli {
        Cli::Claude => {
            let key_suffix = &API_KEY[API_KEY.len() - 20..];
            let mut config = json!({
                "hasCompletedOnboarding": true,
                "lastOnboardingVersion": "2.1.197",
                "customApiKeyResponses": {"approved": [key_suffix], "rejected": []},
                "autoUpdates": false,
            });
            if trusted {
                config["projects"] = json!({ cwd.display().to_string(): {
                    "hasTrustDialogAccepted": true, "allowedTools": [] } });
            }
            std::fs::write(home.join(".claude.json"), config.to_string())?;
            env.push(("ANTHROPIC_BASE_URL".into(), base_url.into()));
            env.push(("ANTHROPIC_API_KEY".into(), API_KEY.into()));
            env.push(("DISABLE_AUTOUPDATER".into(), "1".into()));
            env.push((
                "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC".into(),
                "1".into(),
            ));
            if quick {
                env.push(("CLAUDE_CODE_MAX_RETRIES".into(), "1".into()));
            }
        }
        Cli::Codex => {
            let codex_home = home.join(".codex");
            std::fs::create_dir_all(&codex_home)?;
            let retries = if quick { 0 } else { 4 };
            let mut config = format!(
                "model = \"gpt-5\"\n\
                 model_provider = \"mock\"\n\
                 check_for_update_on_startup = false\n\
                 [model_providers.mock]\n\
                 name = \"mock\"\n\
                 base_url = \"{base_url}/v1\"\n\
                 env_key = \"OPENAI_API_KEY\"\n\
                 wire_api = \"responses\"\n\
                 request_max_retries = {retries}\n\
                 stream_max_retries = {retries}\n\
                 stream_idle_timeout_ms = 300000\n\
                 supports_websockets = false\n"
            );
            if trusted {
                config.push_str(&format!(
                    "[projects.\"{}\"]\ntrust_level = \"trusted\"\n",
                    cwd.display()
                ));
            }
            std::fs::write(codex_home.join("config.toml"), config)?;
            env.push(("CODEX_HOME".into(), codex_home.display().to_string()));
            env.push(("OPENAI_API_KEY".into(), API_KEY.into()));
        }
        Cli::Gemini => {
            let gemini_home = home.join(".gemini");
            std::fs::create_dir_all(&gemini_home)?;
            let settings = json!({
                "security": {"auth": {"selectedType": "gemini-api-key"},
                             "folderTrust": {"enabled": true}},
                "general": {"disableAutoUpdate": true, "disableUpdateNag": true,
                            "maxAttempts": if quick { 2 } else { 10 }},
                "privacy": {"usageStatisticsEnabled": false},
                "telemetry": {"enabled": false},
            });
            std::fs::write(gemini_home.join("settings.json"), settings.to_string())?;
            if trusted {
                let folders = json!({ cwd.display().to_string(): "TRUST_FOLDER" });
                std::fs::write(gemini_home.join("trustedFolders.json"), folders.to_string())?;
            }
            env.push(("GOOGLE_GEMINI_BASE_URL".into(), base_url.into()));
            env.push(("GEMINI_API_KEY".into(), API_KEY.into()));
        }
        Cli::Aider => {
            // Aider's settings as environment variables (`AIDER_<OPTION>`): an OpenAI-compatible
            // API at the mock, no analytics question, no update check or release notes.
            let path = format!(
                "{}:{}",
                aider_bin_dir().display(),
                std::env::var("PATH").unwrap_or_default()
            );
            for (key, value) in [
                ("PATH", path.as_str()),
                ("OPENAI_API_KEY", API_KEY),
                ("OPENAI_API_BASE", &format!("{base_url}/v1")),
                ("AIDER_MODEL", "openai/gpt-4o"),
                ("AIDER_ANALYTICS_DISABLE", "true"),
                ("AIDER_CHECK_UPDATE", "false"),
                ("AIDER_SHOW_RELEASE_NOTES", "false"),
                ("AIDER_SHOW_MODEL_WARNINGS", "false"),
            ] {
                env.push((key.to_string(), value.to_string()));
            }
        }
    }
    Ok(env)
}
