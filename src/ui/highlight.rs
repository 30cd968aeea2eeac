//! Syntax colours for the lines of a unified diff, by each file's extension (`syntect`'s
//! bundled syntaxes and themes, pure Rust): the diff view and `herd diff` on a terminal.
//!
//! Only the lines asked for are highlighted, lazily: a hunk is read as one stream of code from
//! its `@@` line, and where highlighting stopped in a hunk (its parse state) is kept, so the next
//! lines go on from there. A line far below that point starts afresh a little above it
//! (`RESTART_ABOVE`), so a jump to the end of a 50,000-line hunk costs a screenful and not the
//! hunk. The colours found are kept per line (`LineColours`), bounded. A file whose extension
//! no syntax knows keeps the plain colours of added and removed lines.

use std::collections::HashMap;
use std::ops::Range;
use std::sync::{LazyLock, Mutex};

use ratatui::style::Color;
use syntect::highlighting::{
    HighlightState, Highlighter, RangedHighlightIterator, Theme, ThemeSet,
};
use syntect::parsing::{ParseState, ScopeStack, SyntaxReference, SyntaxSet};

/// How far above a line whose hunk was not highlighted near it highlighting starts afresh.
const RESTART_ABOVE: usize = 60;
/// Lines whose colours are kept; past it the kept colours are dropped and found again.
const KEPT_LINES: usize = 20_000;

static SYNTAXES: LazyLock<SyntaxSet> = LazyLock::new(SyntaxSet::load_defaults_newlines);
static THEME: LazyLock<Theme> = LazyLock::new(|| {
    let mut themes = ThemeSet::load_defaults().themes;
    themes.remove("base16-ocean.dark").unwrap_or_default()
});

/// Loads the syntaxes and the theme (a few milliseconds): on a worker, before the first draw.
pub fn prepare() {
    LazyLock::force(&SYNTAXES);
    LazyLock::force(&THEME);
}

/// The syntax of the file at `path` by its extension; `None` for plain text or one unknown.
pub fn syntax_of(path: &str) -> Option<&'static SyntaxReference> {
    let name = path.rsplit('/').next()?;
    let (_, extension) = name.rsplit_once('.')?;
    SYNTAXES
        .find_syntax_by_extension(extension)
        .filter(|syntax| syntax.name != "Plain Text")
}

/// The colour of each stretch of one line's code (the line without its `+`, `-` or ` `), as
/// byte ranges of that code.
pub type CodeColours = Vec<(Color, Range<usize>)>;

/// What the colours of a diff's lines are read from: its lines by number.
pub trait DiffLines {
    fn diff_line(&self, n: usize) -> &str;
}

/// The colours found so far for one diff, and where highlighting stopped in each hunk. Shared by
/// drawing (`&`), so kept behind a lock: it is a memo, not state anything else reads.
#[derive(Default)]
pub struct LineColours {
    kept: Mutex<Kept>,
}

#[derive(Default)]
struct Kept {
    lines: HashMap<usize, CodeColours>,
    /// By the hunk's `@@` line: the next line to highlight and the states before it.
    stops: HashMap<usize, Stop>,
}

#[derive(Clone)]
struct Stop {
    next: usize,
    parse: ParseState,
    highlight: HighlightState,
}

impl std::fmt::Debug for LineColours {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("LineColours")
    }
}

impl Clone for LineColours {
    /// A memo: a copy finds its colours again.
    fn clone(&self) -> Self {
        LineColours::default()
    }
}

impl LineColours {
    /// The colours of line `n`'s code, in the hunk whose `@@` line is `hunk`, in a file of
    /// `syntax`.
    pub fn of(
        &self,
        diff: &impl DiffLines,
        syntax: &'static SyntaxReference,
        hunk: usize,
        n: usize,
    ) -> CodeColours {
        let mut kept = self
            .kept
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(colours) = kept.lines.get(&n) {
            return colours.clone();
        }
        if kept.lines.len() > KEPT_LINES {
            *kept = Kept::default();
        }
        let highlighter = Highlighter::new(&THEME);
        let mut stop = kept
            .stops
            .get(&hunk)
            .filter(|stop| stop.next <= n && n - stop.next <= RESTART_ABOVE)
            .cloned()
            .unwrap_or_else(|| Stop {
                next: (hunk + 1).max(n.saturating_sub(RESTART_ABOVE)),
                parse: ParseState::new(syntax),
                highlight: HighlightState::new(&highlighter, ScopeStack::new()),
            });
        let mut found = CodeColours::new();
        for m in stop.next..=n {
            found = code_colours(&mut stop, &highlighter, diff.diff_line(m));
            kept.lines.insert(m, found.clone());
        }
        stop.next = n + 1;
        kept.stops.insert(hunk, stop);
        found
    }

    /// How many lines' colours are kept (for tests: only what was asked for is highlighted).
    pub fn kept_lines(&self) -> usize {
        let kept = self
            .kept
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        kept.lines.len()
    }
}

/// One line's code highlighted from `stop`'s states, which go on past it. A line that is not
/// code (`\ No newline at end of file`) has no colours and leaves the states as they were.
fn code_colours(stop: &mut Stop, highlighter: &Highlighter<'_>, line: &str) -> CodeColours {
    let Some(code) = line.get(1..).filter(|_| !line.starts_with('\\')) else {
        return CodeColours::new();
    };
    let text = format!("{code}\n");
    let Ok(ops) = stop.parse.parse_line(&text, &SYNTAXES) else {
        return CodeColours::new();
    };
    RangedHighlightIterator::new(&mut stop.highlight, &ops, &text, highlighter)
        .filter(|(_, _, range)| range.start < code.len())
        .map(|(style, _, range)| {
            let colour = style.foreground;
            let end = range.end.min(code.len());
            (Color::Rgb(colour.r, colour.g, colour.b), range.start..end)
        })
        .collect()
}
