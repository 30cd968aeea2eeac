//! Fills the holes (`{{name}}`) of the shell programs in `scripts/` with values that cannot
//! break out of them: a [`Fill`] is only made by quoting a text for the shell, from a number,
//! from a message text stripped of what a quoted string would read, or from a fixed piece of
//! herd's own shell code. The programs themselves are plain files, so `shellcheck` can read
//! them (`run::remote::shellcheck_tests`).

use crate::core::guard::shell_words::quote;

/// A value for one hole of a script.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Fill(String);

impl Fill {
    /// One shell word holding `text` as it is.
    pub(super) fn quoted(text: &str) -> Fill {
        Fill(quote(text))
    }

    pub(super) fn number(n: u64) -> Fill {
        Fill(n.to_string())
    }

    /// herd's own shell code (a default such as `"${HOME:-/tmp}/.codex"`, grep's options).
    pub(super) fn code(text: &'static str) -> Fill {
        Fill(text.to_string())
    }

    /// A text shown inside a quoted message: quotes, `\`, `$`, backticks and control characters
    /// become `?`.
    pub(super) fn message(text: &str) -> Fill {
        Fill(
            text.chars()
                .map(|c| {
                    if matches!(c, '"' | '\'' | '\\' | '$' | '`') || c.is_control() {
                        '?'
                    } else {
                        c
                    }
                })
                .collect(),
        )
    }
}

/// `script` with each `{{name}}` replaced by its fill. A hole without a fill stays as written
/// (the tests render every script and check that none is left).
pub(super) fn render(script: &str, fills: &[(&str, Fill)]) -> String {
    let mut out = String::with_capacity(script.len() + 64);
    let mut rest = script;
    while let Some(start) = rest.find("{{") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let filled = after.find("}}").and_then(|end| {
            let name = &after[..end];
            let fill = fills.iter().find(|(n, _)| *n == name)?;
            Some((end, fill))
        });
        match filled {
            Some((end, (_, Fill(value)))) => {
                out.push_str(value);
                rest = &after[end + 2..];
            }
            None => {
                out.push_str("{{");
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn holes_are_filled_with_safe_values() {
        let script = "cd {{dir}} && echo '{{note}}' {{n}} {{flags}} {{missing}}\n";
        let got = render(
            script,
            &[
                ("dir", Fill::quoted("/it's here")),
                ("note", Fill::message("a'b$c`d")),
                ("n", Fill::number(42)),
                ("flags", Fill::code("-x -F")),
            ],
        );
        assert_eq!(
            got,
            "cd '/it'\\''s here' && echo 'a?b?c?d' 42 -x -F {{missing}}\n"
        );
    }
}
