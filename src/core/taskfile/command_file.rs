//! Markdown command files (a task's `prompt_file`), as Claude Code's custom slash commands: YAML
//! front matter, then a prompt using `$ARGUMENTS` and `$1`, `$2`, ... for the task's `args`.
//! Knows nothing of `{placeholders}`, so the two syntaxes never interfere. Pure.

use thiserror::Error;

/// What is wrong with a command file's use of `args`.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum CommandFileError {
    /// Positional placeholders beyond the arguments given (1-based, sorted, each once).
    #[error("{}", missing_message(positions, *given))]
    MissingArguments { positions: Vec<usize>, given: usize },
}

fn missing_message(positions: &[usize], given: usize) -> String {
    let names: Vec<String> = positions.iter().map(|p| format!("${p}")).collect();
    let uses = match names.split_last() {
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
        None => String::new(),
    };
    let has = match given {
        0 => "has no values".to_string(),
        1 => "has 1 value".to_string(),
        n => format!("has {n} values"),
    };
    format!("prompt_file uses {uses} but \"args\" {has}; add the missing values to \"args\"")
}

/// The command file's text without its YAML front matter (BOM and CRLF accepted). An opening
/// `---` without a closing one is not front matter: the prompt is never lost.
pub fn strip_front_matter(text: &str) -> &str {
    let body = text.strip_prefix('\u{feff}').unwrap_or(text);
    let Some(rest) = body
        .strip_prefix("---\n")
        .or_else(|| body.strip_prefix("---\r\n"))
    else {
        return text;
    };
    let mut offset = 0;
    for line in rest.split_inclusive('\n') {
        offset += line.len();
        if line.trim_end_matches(['\r', '\n']) == "---" {
            return &rest[offset..];
        }
    }
    text
}

/// One piece of the text after the placeholder scan.
enum Piece<'a> {
    Text(&'a str),
    All,
    Position(usize),
}

const ALL: &str = "$ARGUMENTS";

/// Cuts `text` into literal runs and placeholders in one pass. Any other `$` is literal (`$HOME`,
/// `$0`, `$$`, `US$5`), and so is a digit run too long for a number.
fn pieces(text: &str) -> Vec<Piece<'_>> {
    let mut out = Vec::new();
    let bytes = text.as_bytes();
    let mut literal_from = 0;
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != b'$' {
            i += 1;
            continue;
        }
        let (piece, len) = if text[i..].starts_with(ALL) {
            (Some(Piece::All), ALL.len())
        } else if i > literal_from && is_word_byte(bytes[i - 1]) {
            // `US$5`: a price, not a placeholder. (`$2$1` is two: the `2` was a placeholder's.)
            (None, 1)
        } else {
            let digits = bytes[i + 1..]
                .iter()
                .take_while(|b| b.is_ascii_digit())
                .count();
            let run = &text[i + 1..i + 1 + digits];
            match run.parse::<usize>() {
                Ok(n) if !run.starts_with('0') => (Some(Piece::Position(n)), 1 + digits),
                _ => (None, 1),
            }
        };
        match piece {
            Some(piece) => {
                if literal_from < i {
                    out.push(Piece::Text(&text[literal_from..i]));
                }
                out.push(piece);
                i += len;
                literal_from = i;
            }
            None => i += len,
        }
    }
    if literal_from < text.len() {
        out.push(Piece::Text(&text[literal_from..]));
    }
    out
}

fn is_word_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// Fills `$ARGUMENTS` (all arguments, joined with ", ") and `$1`, `$2`, ... Substituted text is
/// never scanned again; a positional without an argument is an error. Arguments the text does
/// not use are appended as `\n\nARGUMENTS: <args>` (as Claude Code does), never dropped.
pub fn expand(text: &str, args: &[String]) -> Result<String, CommandFileError> {
    let pieces = pieces(text);
    let mut missing: Vec<usize> = pieces
        .iter()
        .filter_map(|p| match p {
            Piece::Position(n) if *n > args.len() => Some(*n),
            _ => None,
        })
        .collect();
    if !missing.is_empty() {
        missing.sort_unstable();
        missing.dedup();
        return Err(CommandFileError::MissingArguments {
            positions: missing,
            given: args.len(),
        });
    }
    let all = args.join(", ");
    let mut out = String::with_capacity(text.len());
    let mut used_placeholder = false;
    for piece in &pieces {
        match piece {
            Piece::Text(t) => out.push_str(t),
            Piece::All => {
                used_placeholder = true;
                out.push_str(&all);
            }
            Piece::Position(n) => {
                used_placeholder = true;
                // `n >= 1` and `n <= args.len()` were checked above.
                if let Some(arg) = args.get(n - 1) {
                    out.push_str(arg);
                }
            }
        }
    }
    if !used_placeholder && !args.is_empty() {
        out.push_str("\n\nARGUMENTS: ");
        out.push_str(&all);
    }
    Ok(out)
}

#[cfg(test)]
mod tests;
