//! Fills the holes (`{{name}}`) of the shell programs in `scripts/` with values that cannot break
//! out: a [`Fill`] is only made by quoting, from a number, from a cleaned message, or from a fixed
//! piece of herd's own code.

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

    /// A text inside a quoted message: quotes, `\`, `$`, backticks and controls become `?`.
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

/// `script` with each `{{name}}` filled; a hole without a fill stays (the tests check none does).
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
