//! POSIX shell words as herd writes them: a text quoted as one word, and `export`'s names.

/// `text` as one shell word: single-quoted, a `'` written as `'\''`.
pub fn quote(text: &str) -> String {
    if !text.is_empty()
        && text.chars().all(|c| {
            c.is_ascii_alphanumeric()
                || matches!(c, '/' | '.' | '_' | '-' | '=' | ':' | '@' | '+' | ',')
        })
    {
        return text.to_string();
    }
    format!("'{}'", text.replace('\'', r"'\''"))
}

/// A name a POSIX shell accepts in `export NAME=...`.
pub fn is_env_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}
