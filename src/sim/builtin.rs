//! The scenarios shipped inside the binary (`assets/scenarios/*.toml`).

/// (name, TOML text) of every built-in scenario, in `--list` order.
pub(super) const BUILT_IN: &[(&str, &str)] = &[
    (
        "success",
        include_str!("../../assets/scenarios/success.toml"),
    ),
    (
        "plain_success",
        include_str!("../../assets/scenarios/plain_success.toml"),
    ),
    (
        "permission",
        include_str!("../../assets/scenarios/permission.toml"),
    ),
    (
        "permission_dont_ask",
        include_str!("../../assets/scenarios/permission_dont_ask.toml"),
    ),
    (
        "codex_approval",
        include_str!("../../assets/scenarios/codex_approval.toml"),
    ),
    (
        "press_keys",
        include_str!("../../assets/scenarios/press_keys.toml"),
    ),
    (
        "prompt_loop",
        include_str!("../../assets/scenarios/prompt_loop.toml"),
    ),
    ("auth", include_str!("../../assets/scenarios/auth.toml")),
    (
        "auth_exit",
        include_str!("../../assets/scenarios/auth_exit.toml"),
    ),
    ("quota", include_str!("../../assets/scenarios/quota.toml")),
    (
        "incomplete",
        include_str!("../../assets/scenarios/incomplete.toml"),
    ),
    ("crash", include_str!("../../assets/scenarios/crash.toml")),
    ("flaky", include_str!("../../assets/scenarios/flaky.toml")),
    ("hang", include_str!("../../assets/scenarios/hang.toml")),
    (
        "hang_ignore_term",
        include_str!("../../assets/scenarios/hang_ignore_term.toml"),
    ),
    (
        "term_ignoring_child",
        include_str!("../../assets/scenarios/term_ignoring_child.toml"),
    ),
    ("flood", include_str!("../../assets/scenarios/flood.toml")),
    (
        "echo_only",
        include_str!("../../assets/scenarios/echo_only.toml"),
    ),
    (
        "queries",
        include_str!("../../assets/scenarios/queries.toml"),
    ),
    (
        "retrying",
        include_str!("../../assets/scenarios/retrying.toml"),
    ),
    (
        "transient",
        include_str!("../../assets/scenarios/transient.toml"),
    ),
    (
        "demo_slow",
        include_str!("../../assets/scenarios/demo_slow.toml"),
    ),
    (
        "json_success",
        include_str!("../../assets/scenarios/json_success.toml"),
    ),
    (
        "json_auth",
        include_str!("../../assets/scenarios/json_auth.toml"),
    ),
    (
        "json_quota",
        include_str!("../../assets/scenarios/json_quota.toml"),
    ),
    (
        "json_denied",
        include_str!("../../assets/scenarios/json_denied.toml"),
    ),
    (
        "json_cut_short",
        include_str!("../../assets/scenarios/json_cut_short.toml"),
    ),
    (
        "json_resume",
        include_str!("../../assets/scenarios/json_resume.toml"),
    ),
    (
        "signal_done",
        include_str!("../../assets/scenarios/signal_done.toml"),
    ),
    (
        "signal_error",
        include_str!("../../assets/scenarios/signal_error.toml"),
    ),
    (
        "signal_questions",
        include_str!("../../assets/scenarios/signal_questions.toml"),
    ),
    (
        "signal_json",
        include_str!("../../assets/scenarios/signal_json.toml"),
    ),
];

/// The TOML text of a built-in scenario.
pub(super) fn built_in(name: &str) -> Option<&'static str> {
    BUILT_IN
        .iter()
        .find(|(known, _)| *known == name)
        .map(|(_, text)| *text)
}

/// The names, comma-separated, for messages.
pub(super) fn names() -> String {
    BUILT_IN
        .iter()
        .map(|(name, _)| *name)
        .collect::<Vec<_>>()
        .join(", ")
}
