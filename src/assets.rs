//! Files shipped inside the binary: the built-in agent profiles and the ACP registry's index.

/// (file name, TOML text) of every built-in profile, from `assets/profiles/`.
pub const BUILT_IN_PROFILES: &[(&str, &str)] = &[
    ("acp.toml", include_str!("../assets/profiles/acp.toml")),
    ("aider.toml", include_str!("../assets/profiles/aider.toml")),
    (
        "claude.toml",
        include_str!("../assets/profiles/claude.toml"),
    ),
    ("codex.toml", include_str!("../assets/profiles/codex.toml")),
    (
        "gemini.toml",
        include_str!("../assets/profiles/gemini.toml"),
    ),
    (
        "generic.toml",
        include_str!("../assets/profiles/generic.toml"),
    ),
    ("sim.toml", include_str!("../assets/profiles/sim.toml")),
];

/// The ACP registry's index as herd ships it (`scripts/acp-registry refresh` renews it).
pub const ACP_REGISTRY: &str = include_str!("../assets/acp/registry.json");

/// The ACP registry's index in effect: the file `HERD_ACP_REGISTRY` names (a registry of
/// one's own, or a mirror), else the shipped snapshot.
pub fn acp_registry_text() -> std::borrow::Cow<'static, str> {
    std::env::var_os("HERD_ACP_REGISTRY")
        .filter(|path| !path.is_empty())
        .and_then(|path| std::fs::read_to_string(path).ok())
        .map_or(
            std::borrow::Cow::Borrowed(ACP_REGISTRY),
            std::borrow::Cow::Owned,
        )
}

/// The built-in profile texts, for `ProfileSet::build`: the files of `assets/profiles/`, then
/// every agent of the ACP registry as `acp:<id>`.
pub fn built_in_profile_texts() -> Vec<&'static str> {
    let mut texts: Vec<&'static str> = BUILT_IN_PROFILES.iter().map(|(_, text)| *text).collect();
    texts.push(registry_profiles());
    texts
}

/// The registry's agents as profile TOML for this machine's platform, made once.
fn registry_profiles() -> &'static str {
    static TEXT: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    TEXT.get_or_init(|| {
        use crate::core::acp::registry::{Registry, platform};
        let here = platform(std::env::consts::OS, std::env::consts::ARCH);
        // The snapshot is checked by the tests; a broken one gives no registry profiles rather
        // than no herd. A binary agent runs the copy `herd acp install` left, if any.
        Registry::parse(&acp_registry_text())
            .map(|registry| {
                let installed = crate::run::acp::install::data_folder()
                    .map(|data| {
                        crate::run::acp::install::installed_commands(&registry, &here, &data)
                    })
                    .unwrap_or_default();
                registry.profiles_toml_with(&here, &installed)
            })
            .unwrap_or_default()
    })
}

#[cfg(test)]
mod tests {
    use super::BUILT_IN_PROFILES;

    /// The built-in patterns run on every screen change: a Unicode `\b` would keep the regex
    /// engine off its DFA on any screen with a non-ASCII character, so they use `(?-u:\b)`.
    #[test]
    fn built_in_patterns_use_ascii_word_boundaries() {
        for (file, text) in BUILT_IN_PROFILES {
            for (line_no, line) in text.lines().enumerate() {
                let unicode_boundaries = line.matches(r"\b").count() + line.matches(r"\B").count();
                let ascii_boundaries = line.matches(r"(?-u:\b)").count();
                assert_eq!(
                    unicode_boundaries,
                    ascii_boundaries,
                    "{file}:{}: a Unicode word boundary: {line}",
                    line_no + 1
                );
            }
        }
    }
}
