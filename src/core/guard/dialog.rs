//! The keys a dialog on screen takes, read from what it draws: numbered options, key hints
//! (`Yes, proceed (y)`), and the highlighted option Enter picks (none highlighted: no Enter).

/// Glyphs a TUI draws before the option that has the focus.
const CURSOR_GLYPHS: [char; 6] = ['❯', '›', '●', '>', '▶', '→'];

/// Rows above a matched dialog that may still hold its first options.
pub const ROWS_ABOVE: usize = 6;
/// Rows below a matched dialog that may still hold its last options.
pub const ROWS_BELOW: usize = 4;

/// One option a dialog offers, and the key that picks it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DialogOption {
    pub key: char,
    pub label: String,
}

/// What a dialog takes from the keyboard.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DialogKeys {
    /// Numbered options by their digit, then options' own key hints (`(y)`), in drawn order.
    pub options: Vec<DialogOption>,
    /// The highlighted option's label, when the dialog highlights one: Enter picks it.
    pub highlighted: Option<String>,
    /// A typed question (Aider's `(Y)es/(N)o … [Yes]:`): a letter and Enter, No is `n` + Enter.
    pub typed_yes_no: bool,
}

/// Reads the dialog drawn on `rows` (the dialog's rows, and a few above it).
pub fn read(rows: &[String]) -> DialogKeys {
    let mut keys = DialogKeys::default();
    let typed_yes_no = rows.iter().any(|row| row.contains("(Y)es/(N)o"));
    for row in rows {
        let text = row.trim().trim_matches('│').trim();
        let (glyph, rest) = match text.strip_prefix(CURSOR_GLYPHS) {
            Some(rest) => (true, rest.trim_start()),
            None => (false, text),
        };
        let Some((digit, label)) = numbered(rest) else {
            continue;
        };
        if digit == '1' {
            // A list starting again is a new dialog: the options above it were another one's.
            keys = DialogKeys::default();
        }
        let (label, hint) = split_hint(label);
        if glyph {
            keys.highlighted = Some(label.to_string());
        }
        keys.options.push(DialogOption {
            key: digit,
            label: label.to_string(),
        });
        if let Some(hint) = hint
            && !keys.options.iter().any(|o| o.key == hint)
        {
            keys.options.push(DialogOption {
                key: hint,
                label: label.to_string(),
            });
        }
    }
    keys.typed_yes_no = typed_yes_no;
    keys
}

/// `1. Yes` → ('1', "Yes"): one digit, a dot and a space.
fn numbered(text: &str) -> Option<(char, &str)> {
    let mut chars = text.chars();
    let digit = chars.next().filter(|c| c.is_ascii_digit() && *c != '0')?;
    let label = chars.as_str().strip_prefix(". ")?.trim();
    (!label.is_empty()).then_some((digit, label))
}

/// `Yes, proceed (y)` → ("Yes, proceed", Some('y')); `(esc)` is dropped (`n` says No).
fn split_hint(label: &str) -> (&str, Option<char>) {
    let Some(open) = label.strip_suffix(')').and_then(|l| l.rfind('(')) else {
        return (label, None);
    };
    let inner = &label[open + 1..label.len() - 1];
    let mut chars = inner.chars();
    match (chars.next(), chars.next()) {
        (Some(c), None) if c.is_ascii_lowercase() || c.is_ascii_digit() => {
            (label[..open].trim_end(), Some(c))
        }
        _ if inner.eq_ignore_ascii_case("esc") => (label[..open].trim_end(), None),
        _ => (label, None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows(text: &str) -> Vec<String> {
        text.lines().map(str::to_string).collect()
    }

    fn keys(dialog: &DialogKeys) -> String {
        dialog.options.iter().map(|o| o.key).collect()
    }

    #[test]
    fn dialogs_say_their_keys_and_what_enter_picks() {
        // (screen, keys, highlighted)
        let table: [(&str, &str, Option<&str>); 7] = [
            (
                " Do you want to proceed?\n ❯ 1. Yes\n   2. Yes, and don't ask again for npm (p)\n   3. No\n\n Esc to cancel",
                "12p3",
                Some("Yes"),
            ),
            (
                "│ › 1. Yes, proceed (y)                       │\n│   2. Yes, and don't ask again (p) │\n│   3. No, and tell Codex what to do differently (esc) │",
                "1y2p3",
                Some("Yes, proceed"),
            ),
            (
                "│ ● 1. Allow once\n│   2. Allow for this session\n│   3. No, suggest changes (esc)",
                "123",
                Some("Allow once"),
            ),
            ("press p to allow always", "", None),
            ("Press 1 to continue", "", None),
            // Options without a cursor: nothing is highlighted, Enter picks nothing.
            ("  1. Yes\n  2. No", "12", None),
            // An earlier list above the dialog is another dialog's.
            (
                "1. Fix the bug\n2. Run tests\nDo it?\n❯ 1. Yes\n  2. No",
                "12",
                Some("Yes"),
            ),
        ];
        for (screen, want, highlighted) in table {
            let dialog = read(&rows(screen));
            assert_eq!(keys(&dialog), want, "{screen}");
            assert_eq!(dialog.highlighted.as_deref(), highlighted, "{screen}");
            assert!(!dialog.typed_yes_no, "{screen}");
        }
        let aider = read(&rows(
            "Run shell command? (Y)es/(N)o/(D)on't ask again [Yes]: ",
        ));
        assert_eq!((keys(&aider).as_str(), aider.typed_yes_no), ("", true));
    }

    #[test]
    fn a_hint_is_one_lower_case_key_at_the_end() {
        assert_eq!(split_hint("Yes (y)"), ("Yes", Some('y')));
        assert_eq!(split_hint("No (esc)"), ("No", None));
        assert_eq!(split_hint("Yes (Y)"), ("Yes (Y)", None));
        assert_eq!(split_hint("Yes"), ("Yes", None));
        assert_eq!(numbered("10. Ten"), None);
        assert_eq!(numbered("0. Zero"), None);
        assert_eq!(numbered("2."), None);
    }
}
