//! Credential stores and keys (`~/.ssh`, `~/.aws`, `*.pem`, keychains, …): refused whether read,
//! written or sent.

use super::finding::Finding;
use super::paths::GuardContext;

/// A refusal when `text` names a credential store.
pub fn credential_findings(text: &str, ctx: &GuardContext) -> Vec<Finding> {
    // `--key=PATH`, `name=PATH` and curl's `@PATH` name the file too.
    let text = text
        .split_once('=')
        .map_or(text, |(k, v)| {
            let is_key =
                k.starts_with('-') || k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
            if is_key { v } else { text }
        })
        .trim_start_matches('@');
    if text.is_empty() {
        return Vec::new();
    }
    let abs = ctx.absolute(text);
    let home = ctx.home.trim_end_matches('/');
    const HOME_STORES: &[&str] = &[
        ".ssh",
        ".aws",
        ".config/gcloud",
        ".gnupg",
        ".netrc",
        ".git-credentials",
        ".docker/config.json",
        ".kube/config",
        ".azure",
        ".pypirc",
        ".npmrc",
        ".config/gh/hosts.yml",
        "Library/Keychains",
        ".password-store",
        ".local/share/keyrings",
        ".terraform.d/credentials.tfrc.json",
    ];
    let file = abs.rsplit('/').next().unwrap_or_default();
    let named = HOME_STORES.iter().find(|store| {
        let p = format!("{home}/{store}");
        abs == p || abs.starts_with(&format!("{p}/"))
    });
    let by_name = file.starts_with("id_rsa")
        || file.starts_with("id_ed25519")
        || file.starts_with("id_ecdsa")
        || file.starts_with("id_dsa")
        || file.ends_with(".pem")
        || file.ends_with(".keychain")
        || file.ends_with(".keychain-db")
        || file == ".netrc"
        || abs == "/etc/shadow";
    if let Some(store) = named {
        vec![Finding::Refuse(format!(
            "it touches the credential store ~/{store} (keys and tokens)"
        ))]
    } else if by_name {
        vec![Finding::Refuse(format!(
            "it touches {file}, a private key or credential file"
        ))]
    } else {
        Vec::new()
    }
}
