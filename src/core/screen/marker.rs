//! The completion marker, seen only as a line of the agent's own output. Agents echo the prompt,
//! which holds the marker; however the echo is wrapped or boxed, the rows around an echoed
//! marker spell the prompt's text, and the agent's own line does not.

/// Characters of the prompt around the marker compared with the screen around a candidate.
const CONTEXT_CHARS: usize = 48;
/// Rows above and below a candidate read as its context.
pub const CONTEXT_ROWS: usize = 8;

/// Glyphs agents put before their own output lines (Claude `●`/`⏺`, Gemini `✦`, lists `•`).
/// Input-echo prefixes (`❯`, `›`, `>`) are deliberately not here.
const OUTPUT_BULLETS: &[char] = &['●', '⏺', '•', '✦', '⎿', '✓', '✔', '◆', '▸', '*', '-'];
/// Box borders that wrap an agent's text in a frame.
const BORDERS: &[char] = &['│', '┃', '║', '|'];

/// Watches rows of screen text for the agent's own completion marker line.
#[derive(Debug, Clone)]
pub struct MarkerWatch {
    marker: String,
    /// For each place of the marker in the prompt: the squeezed text just before and after it.
    echoes: Vec<(String, String)>,
}

impl MarkerWatch {
    pub fn new(marker: &str, prompt: &str) -> MarkerWatch {
        let squeezed_marker = squeeze(marker);
        let squeezed_prompt = squeeze(prompt);
        let mut echoes = Vec::new();
        if !squeezed_marker.is_empty() {
            for (at, _) in squeezed_prompt.match_indices(&squeezed_marker) {
                let before = last_chars(&squeezed_prompt[..at], CONTEXT_CHARS);
                let after = first_chars(
                    &squeezed_prompt[at + squeezed_marker.len()..],
                    CONTEXT_CHARS,
                );
                echoes.push((before.to_string(), after.to_string()));
            }
        }
        MarkerWatch {
            marker: marker.trim().to_string(),
            echoes,
        }
    }

    pub fn marker(&self) -> &str {
        &self.marker
    }

    /// Whether any of `rows` holds the marker's text (only then can `find` see it).
    pub fn may_be_on(&self, rows: &[String]) -> bool {
        !self.marker.is_empty() && rows.iter().any(|row| row.contains(self.marker.as_str()))
    }

    /// The index of the first row at or after `from` that is the agent's own marker line.
    pub fn find(&self, rows: &[String], from: usize) -> Option<usize> {
        if self.marker.is_empty() {
            return None;
        }
        (from..rows.len()).find(|&i| self.is_own_marker_line(rows, i))
    }

    fn is_own_marker_line(&self, rows: &[String], i: usize) -> bool {
        if strip_decorations(&rows[i]) != self.marker {
            return false;
        }
        let above_start = i.saturating_sub(CONTEXT_ROWS);
        let above = squeeze(&rows[above_start..i].concat());
        let below_end = (i + 1 + CONTEXT_ROWS).min(rows.len());
        let below = squeeze(&rows[i + 1..below_end].concat());
        let is_echo = self.echoes.iter().any(|(before, after)| {
            (!before.is_empty() && above.ends_with(before.as_str()))
                || (!after.is_empty() && below.starts_with(after.as_str()))
        });
        !is_echo
    }
}

/// A row without the frame, bullet and spacing an agent draws around its own text.
fn strip_decorations(row: &str) -> &str {
    let row = row.trim().trim_matches(BORDERS).trim();
    let row = match row.strip_prefix(OUTPUT_BULLETS) {
        Some(rest) if rest.starts_with(char::is_whitespace) => rest,
        _ => row,
    };
    row.trim()
}

/// Text without spaces, line breaks and frame characters, so wrapped text equals its source.
fn squeeze(text: &str) -> String {
    text.chars()
        .filter(|c| !c.is_whitespace() && !BORDERS.contains(c) && !is_box_drawing(*c))
        .collect()
}

fn is_box_drawing(c: char) -> bool {
    ('\u{2500}'..='\u{257F}').contains(&c)
}

fn last_chars(text: &str, n: usize) -> &str {
    let start = text
        .char_indices()
        .rev()
        .nth(n.saturating_sub(1))
        .map_or(0, |(i, _)| i);
    &text[start..]
}

fn first_chars(text: &str, n: usize) -> &str {
    let end = text.char_indices().nth(n).map_or(text.len(), |(i, _)| i);
    &text[..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    const MARKER: &str = "TASK_COMPLETE:pandas-merge-001";
    const PROMPT: &str = "Follow the procedure for https://example.com/doc. Use pytest file tests/test_merge.py. When complete, print exactly: TASK_COMPLETE:pandas-merge-001";

    fn rows(text: &str) -> Vec<String> {
        text.lines().map(str::to_string).collect()
    }

    #[test]
    fn own_output_lines_count() {
        let watch = MarkerWatch::new(MARKER, PROMPT);
        for screen in [
            "TASK_COMPLETE:pandas-merge-001",
            "● TASK_COMPLETE:pandas-merge-001",
            "⏺ TASK_COMPLETE:pandas-merge-001",
            "  TASK_COMPLETE:pandas-merge-001  ",
            "│ ✦ TASK_COMPLETE:pandas-merge-001 │",
            "work done\n\nTASK_COMPLETE:pandas-merge-001",
        ] {
            assert!(watch.find(&rows(screen), 0).is_some(), "{screen:?}");
        }
    }

    #[test]
    fn echoes_of_the_prompt_never_count() {
        let watch = MarkerWatch::new(MARKER, PROMPT);
        let wrapped_claude = "❯ Follow the procedure for https://example.com/doc. Use pytest file tests/test_merge.py. When complete, print\n  exactly:\n  TASK_COMPLETE:pandas-merge-001";
        let wrapped_mid_word = "❯ Follow the procedure for https://example.com/doc. Use pytest file tests/test_merge.py. When complete, print exac\n  tly:\n  TASK_COMPLETE:pandas-merge-001\n";
        let boxed = "╭────╮\n│ > Follow the procedure for https://example.com/doc. Use pytest │\n│ file tests/test_merge.py. When complete, print exactly:       │\n│ TASK_COMPLETE:pandas-merge-001                                 │\n╰────╯";
        let same_line = "› Follow the procedure for https://example.com/doc. When complete, print exactly: TASK_COMPLETE:pandas-merge-001";
        for screen in [wrapped_claude, wrapped_mid_word, boxed, same_line] {
            assert_eq!(watch.find(&rows(screen), 0), None, "{screen}");
        }
    }

    #[test]
    fn a_marker_at_the_start_of_the_prompt_is_told_apart_by_what_follows() {
        let prompt = "TASK_COMPLETE:t1 is what you print when all tests pass.";
        let watch = MarkerWatch::new("TASK_COMPLETE:t1", prompt);
        let echo = "❯\n  TASK_COMPLETE:t1\n  is what you print when all tests pass.";
        assert_eq!(watch.find(&rows(echo), 0), None);
        let own = "● Tests pass.\n● TASK_COMPLETE:t1\n\n❯";
        assert_eq!(watch.find(&rows(own), 0), Some(1));
    }

    #[test]
    fn the_echo_and_then_the_real_line() {
        let watch = MarkerWatch::new(MARKER, PROMPT);
        let screen = "❯ Follow the procedure for https://example.com/doc. Use pytest file tests/test_merge.py. When complete, print exactly:\n  TASK_COMPLETE:pandas-merge-001\n\n● Bash(pytest)\n  ⎿  3 passed\n\n● TASK_COMPLETE:pandas-merge-001";
        assert_eq!(watch.find(&rows(screen), 0), Some(6));
    }

    #[test]
    fn only_rows_with_the_markers_text_may_hold_it() {
        let watch = MarkerWatch::new(MARKER, PROMPT);
        for screen in [
            "work done\n\nTASK_COMPLETE:pandas-merge-001",
            "I will print TASK_COMPLETE:pandas-merge-001",
        ] {
            assert!(watch.may_be_on(&rows(screen)), "{screen:?}");
        }
        for screen in ["work done", "TASK_COMPLETE:pandas-merge-", ""] {
            let rows = rows(screen);
            assert!(!watch.may_be_on(&rows), "{screen:?}");
            assert_eq!(watch.find(&rows, 0), None, "{screen:?}");
        }
        assert!(!MarkerWatch::new("", PROMPT).may_be_on(&rows("anything")));
    }

    #[test]
    fn near_misses_do_not_count() {
        let watch = MarkerWatch::new(MARKER, PROMPT);
        for screen in [
            "TASK_COMPLETE:pandas-merge-0012",
            "I will print TASK_COMPLETE:pandas-merge-001",
            "TASK_COMPLETE:pandas-merge-001.",
            "❯ TASK_COMPLETE:pandas-merge-001",
            "`TASK_COMPLETE:pandas-merge-001`",
        ] {
            assert_eq!(watch.find(&rows(screen), 0), None, "{screen:?}");
        }
    }
}
