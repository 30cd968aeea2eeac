//! Files shipped inside the binary: the built-in agent profiles.

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

/// The built-in profile texts, for `ProfileSet::build`.
pub fn built_in_profile_texts() -> Vec<&'static str> {
    BUILT_IN_PROFILES.iter().map(|(_, text)| *text).collect()
}
