//! Trusting a task's folder in the CLI's own config before it starts (`"trust_folder": true` in
//! the task or its profile): the operator's decision, written down, instead of an answer to a
//! dialog whose wording and default change between versions. For Claude Code: the project entry
//! `projects["<folder>"].hasTrustDialogAccepted = true` in `<config dir>/.claude.json`, every
//! other key of the file kept. Pure: text in, text out; the shell reads and writes the file.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

/// Why the config could not be updated.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TrustError {
    #[error("it is not a JSON object ({0})")]
    NotAnObject(String),
}

/// Claude Code's config file for an agent with environment `env` (its own `CLAUDE_CONFIG_DIR`,
/// else its `HOME`), falling back to `home` (herd's own).
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
