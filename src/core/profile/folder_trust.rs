//! Trusting a task's folder in the CLI's own config before it starts (`"trust_folder": true`),
//! instead of answering a dialog whose wording changes between versions; every other entry is
//! kept. Claude Code: `projects["<folder>"].hasTrustDialogAccepted` in `.claude.json`; Codex:
//! `[projects."<folder>"] trust_level = "trusted"` in `config.toml` (appended, so the user's
//! text stays byte for byte); Gemini: `"<folder>": "TRUST_FOLDER"` in `trustedFolders.json`.
//! Pure: text in, text out.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::core::profile::{AgentLogKind, HookKind};

/// Why the config could not be updated.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TrustError {
    #[error("it is not a JSON object ({0})")]
    NotAnObject(String),
    #[error("it is not a TOML document ({0})")]
    NotToml(String),
}

/// A CLI whose folder trust herd knows how to write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TrustedCli {
    Claude,
    Codex,
    Gemini,
}

/// The folder herd trusts in a CLI's config before the agent starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FolderTrust {
    pub cli: TrustedCli,
    pub folder: PathBuf,
}

/// The CLI a profile runs, as far as its folder trust goes; `None` for any other.
pub fn trusted_cli(hooks: Option<HookKind>, agent_log: Option<AgentLogKind>) -> Option<TrustedCli> {
    match (hooks, agent_log) {
        (Some(HookKind::Claude), _) => Some(TrustedCli::Claude),
        (Some(HookKind::Gemini), _) => Some(TrustedCli::Gemini),
        (None, Some(AgentLogKind::CodexRollout)) => Some(TrustedCli::Codex),
        _ => None,
    }
}

/// The first non-empty value.
fn first_set<'a>(values: &[Option<&'a str>]) -> Option<&'a str> {
    values.iter().flatten().copied().find(|v| !v.is_empty())
}

/// Codex CLI's config file: `$CODEX_HOME/config.toml`, else `<HOME>/.codex/config.toml`.
pub fn codex_config_file(codex_home: Option<&str>, env_home: Option<&str>, home: &Path) -> PathBuf {
    match (first_set(&[codex_home]), first_set(&[env_home])) {
        (Some(dir), _) => Path::new(dir).join("config.toml"),
        (None, Some(home)) => Path::new(home).join(".codex").join("config.toml"),
        (None, None) => home.join(".codex").join("config.toml"),
    }
}

/// Gemini CLI's trusted-folders file: `GEMINI_CLI_TRUSTED_FOLDERS_PATH`, else
/// `<GEMINI_CLI_HOME or HOME>/.gemini/trustedFolders.json`.
pub fn gemini_trusted_folders_file(
    trusted_folders_path: Option<&str>,
    gemini_home: Option<&str>,
    env_home: Option<&str>,
    home: &Path,
) -> PathBuf {
    if let Some(path) = first_set(&[trusted_folders_path]) {
        return PathBuf::from(path);
    }
    first_set(&[gemini_home, env_home])
        .map_or_else(|| home.to_path_buf(), PathBuf::from)
        .join(".gemini")
        .join("trustedFolders.json")
}

/// `existing` Codex config (`None` when there is none yet) with `folder` trusted.
pub fn codex_config_with_trust(existing: Option<&str>, folder: &str) -> Result<String, TrustError> {
    let text = existing.unwrap_or("");
    let mut doc: toml::Table =
        toml::from_str(text).map_err(|e| TrustError::NotToml(e.to_string()))?;
    let trusted = |doc: &toml::Table| {
        doc.get("projects")
            .and_then(|p| p.get(folder))
            .and_then(|p| p.get("trust_level"))
            .and_then(toml::Value::as_str)
            == Some("trusted")
    };
    if trusted(&doc) {
        return Ok(text.to_string());
    }
    // A table of its own after the user's text, which stays as it is.
    let key = toml::Value::String(folder.to_string()).to_string();
    let separator = if text.is_empty() || text.ends_with('\n') {
        ""
    } else {
        "\n"
    };
    let appended = format!("{text}{separator}\n[projects.{key}]\ntrust_level = \"trusted\"\n");
    if toml::from_str::<toml::Table>(&appended).is_ok_and(|doc| trusted(&doc)) {
        return Ok(appended);
    }
    // The folder has an entry already: the document is written anew (comments are lost).
    let projects = doc
        .entry("projects")
        .or_insert_with(|| toml::Value::Table(toml::Table::new()));
    if !projects.is_table() {
        *projects = toml::Value::Table(toml::Table::new());
    }
    if let Some(projects) = projects.as_table_mut() {
        let project = projects
            .entry(folder)
            .or_insert_with(|| toml::Value::Table(toml::Table::new()));
        if !project.is_table() {
            *project = toml::Value::Table(toml::Table::new());
        }
        if let Some(project) = project.as_table_mut() {
            project.insert("trust_level".into(), toml::Value::String("trusted".into()));
        }
    }
    toml::to_string(&doc).map_err(|e| TrustError::NotToml(e.to_string()))
}

/// `existing` Gemini trusted-folders file (`None` when there is none yet) with `folder` trusted.
pub fn gemini_trusted_folders_with_trust(
    existing: Option<&str>,
    folder: &str,
) -> Result<String, TrustError> {
    let mut doc = match existing.map(str::trim).filter(|t| !t.is_empty()) {
        None => Map::new(),
        Some(text) => {
            serde_json::from_str(text).map_err(|e| TrustError::NotAnObject(e.to_string()))?
        }
    };
    doc.insert(folder.into(), Value::String("TRUST_FOLDER".into()));
    serde_json::to_string_pretty(&doc).map_err(|e| TrustError::NotAnObject(e.to_string()))
}

/// Claude Code's config file for an agent with environment `env`, falling back to `home`.
pub fn claude_config_file(
    config_dir: Option<&str>,
    env_home: Option<&str>,
    home: &Path,
) -> PathBuf {
    match (config_dir, env_home) {
        (Some(dir), _) if !dir.is_empty() => Path::new(dir).join(".claude.json"),
        (_, Some(home)) if !home.is_empty() => Path::new(home).join(".claude.json"),
        _ => home.join(".claude.json"),
    }
}

/// `existing` (the file's text; `None` when there is none yet) with `folder` trusted.
pub fn claude_config_with_trust(
    existing: Option<&str>,
    folder: &str,
) -> Result<String, TrustError> {
    let mut doc = match existing.map(str::trim).filter(|t| !t.is_empty()) {
        None => Value::Object(Map::new()),
        Some(text) => {
            serde_json::from_str(text).map_err(|e| TrustError::NotAnObject(e.to_string()))?
        }
    };
    let Some(root) = doc.as_object_mut() else {
        return Err(TrustError::NotAnObject(
            "its top level is not an object".into(),
        ));
    };
    let projects = root
        .entry("projects")
        .or_insert_with(|| Value::Object(Map::new()));
    if !projects.is_object() {
        *projects = Value::Object(Map::new());
    }
    let project = projects
        .as_object_mut()
        .map(|p| p.entry(folder).or_insert_with(|| Value::Object(Map::new())));
    if let Some(project) = project {
        if !project.is_object() {
            *project = Value::Object(Map::new());
        }
        if let Some(fields) = project.as_object_mut() {
            fields.insert("hasTrustDialogAccepted".into(), Value::Bool(true));
        }
    }
    serde_json::to_string_pretty(&doc).map_err(|e| TrustError::NotAnObject(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trust_is_added_and_everything_else_kept() {
        let existing = r#"{"hasCompletedOnboarding": true,
            "projects": {"/other": {"allowedTools": ["Bash(ls)"]},
                         "/w/p": {"allowedTools": [], "hasTrustDialogAccepted": false}}}"#;
        let text = claude_config_with_trust(Some(existing), "/w/p").unwrap();
        let doc: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(doc["hasCompletedOnboarding"], true);
        assert_eq!(doc["projects"]["/other"]["allowedTools"][0], "Bash(ls)");
        assert_eq!(doc["projects"]["/w/p"]["hasTrustDialogAccepted"], true);
        assert_eq!(
            doc["projects"]["/w/p"]["allowedTools"],
            serde_json::json!([])
        );
    }

    #[test]
    fn a_missing_or_empty_file_becomes_one_with_the_trust() {
        for existing in [None, Some(""), Some("  \n")] {
            let text = claude_config_with_trust(existing, "/w/p").unwrap();
            let doc: Value = serde_json::from_str(&text).unwrap();
            assert_eq!(doc["projects"]["/w/p"]["hasTrustDialogAccepted"], true);
        }
    }

    #[test]
    fn a_file_that_is_not_an_object_is_left_alone() {
        assert!(claude_config_with_trust(Some("[1, 2]"), "/w/p").is_err());
        assert!(claude_config_with_trust(Some("{not json"), "/w/p").is_err());
    }

    #[test]
    fn the_cli_is_known_from_the_profiles_hooks_or_log() {
        let table = [
            (Some(HookKind::Claude), None, Some(TrustedCli::Claude)),
            (
                Some(HookKind::Gemini),
                Some(AgentLogKind::GeminiDebug),
                Some(TrustedCli::Gemini),
            ),
            (
                None,
                Some(AgentLogKind::CodexRollout),
                Some(TrustedCli::Codex),
            ),
            (None, Some(AgentLogKind::GeminiDebug), None),
            (None, None, None),
        ];
        for (hooks, log, expected) in table {
            assert_eq!(trusted_cli(hooks, log), expected, "{hooks:?} {log:?}");
        }
    }

    #[test]
    fn codex_trust_is_appended_and_the_users_text_kept_byte_for_byte() {
        let existing = "# mine\nmodel = \"o3\" # pinned\n\n[projects.\"/other\"]\ntrust_level = \"untrusted\"\n";
        let text = codex_config_with_trust(Some(existing), "/w/p").unwrap();
        assert!(text.starts_with(existing), "{text}");
        let doc: toml::Table = toml::from_str(&text).unwrap();
        assert_eq!(
            doc["projects"]["/w/p"]["trust_level"].as_str(),
            Some("trusted")
        );
        assert_eq!(
            doc["projects"]["/other"]["trust_level"].as_str(),
            Some("untrusted")
        );
        assert_eq!(doc["model"].as_str(), Some("o3"));
    }

    #[test]
    fn codex_trust_table() {
        // (existing file, what must hold of the result)
        let cases: [(Option<&str>, &str); 6] = [
            (None, "a missing file"),
            (Some(""), "an empty file"),
            (Some("model = \"o3\""), "no newline at the end"),
            (
                Some("[projects.\"/w/p\"]\ntrust_level = \"untrusted\"\nx = 1\n"),
                "an entry",
            ),
            (
                Some("projects = { \"/a\" = { trust_level = \"trusted\" } }\n"),
                "inline",
            ),
            (
                Some("[projects.\"/w/p\"]\ntrust_level = \"trusted\"\n"),
                "already",
            ),
        ];
        for (existing, what) in cases {
            let text = codex_config_with_trust(existing, "/w/p").unwrap();
            let doc: toml::Table = toml::from_str(&text).unwrap();
            assert_eq!(
                doc["projects"]["/w/p"]["trust_level"].as_str(),
                Some("trusted"),
                "{what}"
            );
            if what == "an entry" {
                assert_eq!(doc["projects"]["/w/p"]["x"].as_integer(), Some(1), "{what}");
            }
            if what == "inline" {
                assert!(doc["projects"]["/a"].get("trust_level").is_some(), "{what}");
            }
            if what == "already" {
                assert_eq!(Some(text.as_str()), existing, "{what}: unchanged");
            }
        }
        assert!(codex_config_with_trust(Some("not = = toml"), "/w/p").is_err());
    }

    #[test]
    fn a_folder_with_quotes_is_a_quoted_key() {
        let text = codex_config_with_trust(None, "/w/a \"b\"").unwrap();
        let doc: toml::Table = toml::from_str(&text).unwrap();
        assert_eq!(
            doc["projects"]["/w/a \"b\""]["trust_level"].as_str(),
            Some("trusted")
        );
    }

    #[test]
    fn gemini_trust_is_added_and_the_other_folders_kept() {
        let existing = r#"{"/other": "DO_NOT_TRUST", "/w/p": "DO_NOT_TRUST"}"#;
        let text = gemini_trusted_folders_with_trust(Some(existing), "/w/p").unwrap();
        let doc: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(doc["/other"], "DO_NOT_TRUST");
        assert_eq!(doc["/w/p"], "TRUST_FOLDER");
        for existing in [None, Some(""), Some(" \n")] {
            let text = gemini_trusted_folders_with_trust(existing, "/w/p").unwrap();
            let doc: Value = serde_json::from_str(&text).unwrap();
            assert_eq!(doc, serde_json::json!({"/w/p": "TRUST_FOLDER"}));
        }
        assert!(gemini_trusted_folders_with_trust(Some("[1]"), "/w/p").is_err());
        assert!(gemini_trusted_folders_with_trust(Some("{not json"), "/w/p").is_err());
    }

    #[test]
    fn codex_and_gemini_files_follow_the_agents_environment() {
        let home = Path::new("/home/me");
        let codex = [
            (Some("/ch"), Some("/h"), "/ch/config.toml"),
            (Some(""), Some("/h"), "/h/.codex/config.toml"),
            (None, None, "/home/me/.codex/config.toml"),
        ];
        for (codex_home, env_home, expected) in codex {
            assert_eq!(
                codex_config_file(codex_home, env_home, home),
                Path::new(expected)
            );
        }
        let gemini = [
            (Some("/t.json"), Some("/g"), Some("/h"), "/t.json"),
            (
                None,
                Some("/g"),
                Some("/h"),
                "/g/.gemini/trustedFolders.json",
            ),
            (None, None, Some("/h"), "/h/.gemini/trustedFolders.json"),
            (None, None, None, "/home/me/.gemini/trustedFolders.json"),
        ];
        for (path, gemini_home, env_home, expected) in gemini {
            assert_eq!(
                gemini_trusted_folders_file(path, gemini_home, env_home, home),
                Path::new(expected)
            );
        }
    }

    #[test]
    fn the_config_file_follows_the_agents_environment() {
        let home = Path::new("/home/me");
        assert_eq!(
            claude_config_file(Some("/cfg"), Some("/h"), home),
            Path::new("/cfg/.claude.json")
        );
        assert_eq!(
            claude_config_file(None, Some("/h"), home),
            Path::new("/h/.claude.json")
        );
        assert_eq!(
            claude_config_file(None, None, home),
            Path::new("/home/me/.claude.json")
        );
    }
}
