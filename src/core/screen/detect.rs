//! Reading the rendered screen: which permission prompts show, whether the agent waits at its
//! input prompt or is busy. Rows of text only, so split output and redraws read the same.

use std::cell::OnceCell;

use crate::core::profile::{Profile, PromptAnchor, PromptRule};

/// A prompt rule matching the screen now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptSighting {
    /// Index into the profile's `prompts`.
    pub rule: usize,
    /// Tells one appearance from the next: the question's absolute row for cursor-anchored
    /// rules; 0 for dialogs.
    pub appearance: u64,
    /// Visible rows the match covers (first, last), for highlighting.
    pub rows: (usize, usize),
    /// The matched text, for logs and evidence.
    pub text: String,
}

/// The screen as the detectors read it.
#[derive(Debug, Clone, Copy)]
pub struct ScreenView<'a> {
    pub rows: &'a [String],
    pub cursor_row: usize,
    /// Absolute row number of `rows[0]` (rows scrolled away before it).
    pub first_row_number: u64,
}

/// Every prompt rule of `profile` that matches the screen, in rule order.
pub fn find_prompts(profile: &Profile, view: ScreenView<'_>) -> Vec<PromptSighting> {
    // The whole screen joined only for rules with `unless`; each region joined once.
    let whole = OnceCell::new();
    let regions = Regions {
        view,
        region_rows: profile.prompt_region_rows,
        bottom: OnceCell::new(),
        cursor: OnceCell::new(),
    };
    profile
        .prompts
        .iter()
        .enumerate()
        .filter(|(_, rule)| {
            !rule
                .unless
                .iter()
                .any(|re| re.is_match(whole.get_or_init(|| view.rows.join("\n"))))
        })
        .filter_map(|(index, rule)| sight(rule, index, profile, &regions))
        .collect()
}

/// A region of the screen a prompt rule reads: its first and last rows and their text.
type Region = Option<(usize, usize, String)>;

/// The screen's regions prompt rules are anchored to, each read once when a rule first needs it.
struct Regions<'a> {
    view: ScreenView<'a>,
    region_rows: usize,
    bottom: OnceCell<Region>,
    cursor: OnceCell<Region>,
}

impl Regions<'_> {
    fn get(&self, anchor: PromptAnchor) -> Option<(usize, usize, &str)> {
        let rows = self.view.rows;
        let region = match anchor {
            PromptAnchor::Bottom => self.bottom.get_or_init(|| {
                let (first, last) = bottom_region(rows, self.region_rows)?;
                Some((first, last, rows[first..=last].join("\n")))
            }),
            PromptAnchor::Cursor => self.cursor.get_or_init(|| {
                let last = self.view.cursor_row.min(rows.len().checked_sub(1)?);
                let first = last.saturating_sub(3);
                Some((first, last, rows[first..=last].join("\n")))
            }),
        };
        region
            .as_ref()
            .map(|(first, last, text)| (*first, *last, text.as_str()))
    }
}

fn sight(
    rule: &PromptRule,
    index: usize,
    profile: &Profile,
    regions: &Regions<'_>,
) -> Option<PromptSighting> {
    let view = regions.view;
    let (first, last, region) = regions.get(rule.anchor)?;
    let found = match rule.anchor {
        PromptAnchor::Bottom => rule.pattern.find(region),
        // The question must end on the cursor's row.
        PromptAnchor::Cursor => {
            let last_row_start = region.rfind('\n').map_or(0, |i| i + 1);
            rule.pattern
                .find_iter(region)
                .filter(|m| m.end() >= last_row_start)
                .last()
        }
    }?;
    let start_row = first + region[..found.start()].matches('\n').count();
    let end_row = first + region[..found.end()].matches('\n').count();
    // Only the live dialog: a look-alike (printed, or drawn past) has the input prompt below it.
    if rule.anchor == PromptAnchor::Bottom
        && let Some(ready) = &profile.ready
        && end_row < last
        && ready.is_match(&view.rows[end_row + 1..=last].join("\n"))
    {
        return None;
    }
    let appearance = match rule.anchor {
        PromptAnchor::Bottom => 0,
        PromptAnchor::Cursor => view.first_row_number + end_row as u64,
    };
    Some(PromptSighting {
        rule: index,
        appearance,
        rows: (start_row, end_row),
        text: found.as_str().trim().to_string(),
    })
}

/// The rows from the `count`-th last non-blank row to the last non-blank row.
fn bottom_region(rows: &[String], count: usize) -> Option<(usize, usize)> {
    let last = rows.iter().rposition(|r| !r.trim().is_empty())?;
    let mut seen = 0;
    let mut first = last;
    for i in (0..=last).rev() {
        if !rows[i].trim().is_empty() {
            seen += 1;
            first = i;
            if seen == count {
                break;
            }
        }
    }
    Some((first, last))
}

/// The agent shows its input prompt (it finished its turn and waits for a message).
pub fn is_ready(profile: &Profile, screen_text: &str) -> bool {
    profile
        .ready
        .as_ref()
        .is_some_and(|re| re.is_match(screen_text))
}

/// The agent says it is working (a spinner, `esc to interrupt`, `Retrying in 5s`) in its last
/// `prompt_region_rows` non-blank rows; a spinner higher up is history.
pub fn is_busy(profile: &Profile, screen_text: &str) -> bool {
    let rows: Vec<String> = screen_text.lines().map(str::to_string).collect();
    is_busy_rows(profile, &rows)
}

/// `is_busy` on the screen's rows (a `Snapshot`'s), without reading its text again.
pub fn is_busy_rows(profile: &Profile, rows: &[String]) -> bool {
    if profile.busy.is_empty() {
        return false;
    }
    let bottom = tail_rows(rows, profile.prompt_region_rows).join("\n");
    profile.busy.iter().any(|re| re.is_match(&bottom))
}

/// The last `count` non-blank rows, oldest first: "the end of the output".
pub fn tail_rows(rows: &[String], count: usize) -> Vec<String> {
    let mut tail: Vec<String> = rows
        .iter()
        .rev()
        .filter(|r| !r.trim().is_empty())
        .take(count)
        .cloned()
        .collect();
    tail.reverse();
    tail
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::profile::ProfileSet;

    fn profile() -> Profile {
        let text = r#"
[profiles.t]
command = ["t"]
ready = '(?m)^❯\s*$'
busy = ['esc to interrupt', 'Retrying in \d+s']
prompt_region_rows = 6
[[profiles.t.prompts]]
name = "press_1"
pattern = '(?m)^\s*❯\s*1\. Yes'
unless = ['Usage limit reached']
send = "1"
[[profiles.t.prompts]]
name = "shell"
pattern = 'Run shell command\? \(Y\)es/\(N\)o.*\[Yes\]:'
anchor = "cursor"
send = "y\r"
"#;
        ProfileSet::test_profile(text)
    }

    fn rows(text: &str) -> Vec<String> {
        text.lines().map(str::to_string).collect()
    }

    fn view(rows: &[String], cursor_row: usize) -> ScreenView<'_> {
        ScreenView {
            rows,
            cursor_row,
            first_row_number: 100,
        }
    }

    #[test]
    fn a_dialog_at_the_bottom_is_seen() {
        let p = profile();
        let r = rows(
            "● Bash(touch x)\n\n Do you want to proceed?\n ❯ 1. Yes\n   2. No\n\n Esc to cancel\n",
        );
        let found = find_prompts(&p, view(&r, 0));
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].rule, 0);
        assert_eq!(found[0].rows, (3, 3));
    }

    #[test]
    fn a_dialog_that_scrolled_up_out_of_the_bottom_region_is_stale() {
        let p = profile();
        let mut text = String::from(" ❯ 1. Yes\n");
        for i in 0..8 {
            text.push_str(&format!("output line {i}\n"));
        }
        assert!(find_prompts(&p, view(&rows(&text), 0)).is_empty());
    }

    #[test]
    fn a_dialog_shown_as_text_above_the_input_prompt_is_not_live() {
        let p = profile();
        // The agent printed a file that holds a dialog, then waits at its own prompt.
        let r = rows(
            "● Read(dialog.txt)\n  ⎿  Do you want to proceed?\n ❯ 1. Yes\n   2. No\n\n───\n❯ \n───\n",
        );
        assert!(find_prompts(&p, view(&r, 6)).is_empty());
        // The same dialog as the agent's focus (nothing drawn below it) is.
        assert_eq!(find_prompts(&p, view(&r[..5], 0)).len(), 1);
    }

    #[test]
    fn unless_texts_veto_a_rule() {
        let p = profile();
        let r = rows("Usage limit reached for gemini-pro.\n ❯ 1. Yes, switch\n");
        assert!(find_prompts(&p, view(&r, 0)).is_empty());
    }

    #[test]
    fn cursor_questions_are_new_appearances_on_new_rows() {
        let p = profile();
        let r = rows(
            "Run shell command? (Y)es/(N)o/(D)on't ask again [Yes]: y\nok\nRun shell command? (Y)es/(N)o/(D)on't ask again [Yes]:",
        );
        let found = find_prompts(&p, view(&r, 2));
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].appearance, 102);
        // The answered question above the cursor is not a prompt.
        let found = find_prompts(&p, view(&r[..2], 1));
        assert!(found.is_empty());
    }

    #[test]
    fn ready_and_busy() {
        let p = profile();
        assert!(is_ready(&p, "───\n❯ \n───"));
        assert!(!is_ready(&p, "❯ 1. Yes"));
        assert!(is_busy(&p, "✻ Thinking… (esc to interrupt)"));
        assert!(is_busy(&p, "API error · Retrying in 32s · attempt 7/10"));
    }

    /// Gemini after its folder-trust answer: the first session's spinner stays high up the
    /// screen, the restarted one sits idle at its prompt below.
    #[test]
    fn a_spinner_left_high_up_the_screen_is_not_work_going_on() {
        let p = profile();
        let live = "text\n✻ Thinking… (esc to interrupt)\n───\n❯ \n───";
        assert!(is_busy(&p, live));
        let history: String = (0..p.prompt_region_rows)
            .map(|i| format!("line {i}\n\n"))
            .collect();
        let stale = format!("✻ Thinking… (esc to interrupt)\n{history}───\n❯ \n───");
        assert!(!is_busy(&p, &stale));
        // Read from a snapshot's rows (blank rows below included), the same answers.
        for (text, busy) in [(live.to_string(), true), (stale, false)] {
            let mut rows = rows(&text);
            rows.extend(["".to_string(), "".to_string()]);
            assert_eq!(is_busy_rows(&p, &rows), busy, "{text}");
        }
    }

    #[test]
    fn tail_skips_blank_rows() {
        let r = rows("a\n\nb\n\n\nc\n\n");
        assert_eq!(tail_rows(&r, 2), ["b", "c"]);
    }
}
