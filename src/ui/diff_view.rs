//! The diff view (`d`): one task's changes as a list of files and their unified diff, coloured
//! (file headers bold, hunks cyan, added lines on green, removed on red, the code in its
//! language's colours by the file's extension, `highlight`), that scrolls and jumps from file to
//! file.
//!
//! It holds the diff's text once and finds where its lines and files start; drawing classifies
//! and highlights only the lines on screen (looking back to the hunk they are in), so a diff of
//! any size costs a frame only what it shows. The keys become `DiffMove`s here; the text comes
//! from `run::changes` on a worker, never read while drawing.

use crossterm::event::{KeyCode, KeyEvent};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph, Widget};

use std::path::Path;

use syntect::parsing::SyntaxReference;

use super::highlight::{self, DiffLines, LineColours};
use crate::core::facts::changes::{Changes, DiffLine, FileChange, classify_diff_line};
use crate::core::task::TaskSpec;
use crate::run::changes::task::task_changes;

/// Below this width the file list gives way to the diff; the title names the current file.
const SIDE_LIST_MIN_WIDTH: u16 = 100;
const SIDE_LIST_WIDTH: u16 = 34;
/// Behind the code of added and removed lines: dark enough for the syntax colours to read.
const ADDED_BACKGROUND: Color = Color::Rgb(0x1c, 0x3a, 0x24);
const REMOVED_BACKGROUND: Color = Color::Rgb(0x48, 0x1c, 0x22);

/// One task's changes, open in the diff view.
#[derive(Debug, Clone)]
pub struct DiffView {
    task_id: String,
    summary: String,
    files: Vec<FileChange>,
    text: String,
    /// Byte offset where each line of `text` starts.
    line_starts: Vec<usize>,
    /// The line where each file's diff starts (its `diff --git` line).
    file_starts: Vec<usize>,
    /// The language of each file, by its extension (`None`: plain colours).
    file_syntaxes: Vec<Option<&'static SyntaxReference>>,
    /// The syntax colours of the lines drawn so far.
    colours: LineColours,
    /// The first line shown.
    top: usize,
    /// The file jumped to last (`n`/`p`), while the view has not scrolled since: a short diff
    /// does not scroll, and the file still has to be the current one.
    jumped_to: Option<usize>,
}

/// What a key asks of the diff view.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DiffMove {
    Lines(isize),
    Pages(isize),
    NextFile,
    PreviousFile,
    Top,
    Bottom,
    Close,
}

impl DiffMove {
    /// The move a key makes in the diff view; `None` for any other key.
    pub fn from_key(key: KeyEvent) -> Option<DiffMove> {
        Some(match key.code {
            KeyCode::Down | KeyCode::Char('j') => DiffMove::Lines(1),
            KeyCode::Up | KeyCode::Char('k') => DiffMove::Lines(-1),
            KeyCode::PageDown | KeyCode::Char(' ') => DiffMove::Pages(1),
            KeyCode::PageUp | KeyCode::Char('b') => DiffMove::Pages(-1),
            KeyCode::Char('n') | KeyCode::Char(']') | KeyCode::Tab => DiffMove::NextFile,
            KeyCode::Char('p') | KeyCode::Char('[') | KeyCode::BackTab => DiffMove::PreviousFile,
            KeyCode::Home | KeyCode::Char('g') => DiffMove::Top,
            KeyCode::End | KeyCode::Char('G') => DiffMove::Bottom,
            KeyCode::Esc | KeyCode::Char('q' | 'd' | 'D') => DiffMove::Close,
            _ => return None,
        })
    }
}

impl DiffView {
    pub fn new(task_id: &str, changes: &Changes, text: String) -> DiffView {
        let files = changes.files().to_vec();
        let mut line_starts = vec![0];
        line_starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        if line_starts.last() == Some(&text.len()) {
            line_starts.pop();
        }
        let mut view = DiffView {
            task_id: task_id.to_string(),
            summary: changes.summary(),
            files,
            text,
            line_starts,
            file_starts: Vec::new(),
            file_syntaxes: Vec::new(),
            colours: LineColours::default(),
            top: 0,
            jumped_to: None,
        };
        view.file_starts = (0..view.line_starts.len())
            .filter(|&n| view.line(n).starts_with("diff --git "))
            .collect();
        view.file_syntaxes = (view.file_starts.iter())
            .map(|&n| {
                view.line(n)
                    .rsplit_once(" b/")
                    .and_then(|(_, path)| highlight::syntax_of(path))
            })
            .collect();
        view
    }

    fn line(&self, n: usize) -> &str {
        let start = self.line_starts[n];
        let end = self
            .line_starts
            .get(n + 1)
            .map_or(self.text.len(), |next| next - 1);
        &self.text[start..end.max(start)]
    }

    pub fn line_count(&self) -> usize {
        self.line_starts.len()
    }

    pub fn top(&self) -> usize {
        self.top
    }

    /// The file jumped to last, else the one the first line shown belongs to.
    pub fn current_file(&self) -> Option<usize> {
        self.jumped_to.or_else(|| {
            self.file_starts
                .iter()
                .rposition(|&start| start <= self.top)
        })
    }

    /// Carries out `movement` for a diff area `height` lines high; `false` when it closes the view.
    pub fn apply(&mut self, movement: DiffMove, height: usize) -> bool {
        let last = self.line_count().saturating_sub(height.max(1));
        let page = height.saturating_sub(1).max(1) as isize;
        let by = |top: usize, lines: isize| top.saturating_add_signed(lines).min(last);
        let jump = |file: usize| (self.file_starts[file].min(last), Some(file));
        let current = self.current_file();
        let files = self.file_starts.len();
        (self.top, self.jumped_to) = match movement {
            DiffMove::Lines(n) => (by(self.top, n), None),
            DiffMove::Pages(n) => (by(self.top, n * page), None),
            DiffMove::Top => (0, None),
            DiffMove::Bottom => (last, None),
            DiffMove::NextFile => match current.map_or(0, |f| f + 1) {
                next if next < files => jump(next),
                _ => (self.top, self.jumped_to),
            },
            DiffMove::PreviousFile => match current {
                Some(file) if file > 0 => jump(file - 1),
                _ => (0, self.jumped_to.map(|_| 0)),
            },
            DiffMove::Close => return false,
        };
        true
    }

    /// The lines from `top`, at most `height`, each with its kind.
    #[cfg(test)]
    fn visible(&self, height: usize) -> Vec<(DiffLine, &str)> {
        let shown = self.shown(self.top, height);
        shown
            .into_iter()
            .map(|line| (line.kind, line.text))
            .collect()
    }

    /// The lines from `from`, at most `count`, each with its kind and the hunk it is in.
    fn shown(&self, from: usize, count: usize) -> Vec<Shown<'_>> {
        let mut hunk = self.hunk_above(from);
        (from..self.line_count().min(from.saturating_add(count)))
            .map(|n| {
                let text = self.line(n);
                let kind = classify_diff_line(text, hunk.is_some());
                hunk = match kind {
                    DiffLine::FileHeader => None,
                    DiffLine::Hunk => Some(n),
                    _ => hunk,
                };
                Shown {
                    n,
                    kind,
                    text,
                    hunk,
                }
            })
            .collect()
    }

    /// The hunk (its `@@` line) that line `n` is inside: the nearest hunk or file header above it
    /// says.
    fn hunk_above(&self, n: usize) -> Option<usize> {
        (0..n)
            .rev()
            .find(|&m| self.line(m).starts_with("@@") || self.line(m).starts_with("diff --git "))
            .filter(|&m| self.line(m).starts_with("@@"))
    }

    /// The language of the file whose diff holds line `n`.
    fn syntax_at(&self, n: usize) -> Option<&'static SyntaxReference> {
        let file = self
            .file_starts
            .partition_point(|&start| start <= n)
            .checked_sub(1)?;
        *self.file_syntaxes.get(file)?
    }

    /// Line `shown` in its colours: the code of a hunk's line in its language's, else by kind.
    fn styled<'v>(&'v self, shown: &Shown<'v>) -> Line<'v> {
        let plain = || {
            Line::styled(
                shown.text.replace('\t', "    "),
                style_of(shown.kind, shown.text),
            )
        };
        let background = match shown.kind {
            DiffLine::Added => Some(ADDED_BACKGROUND),
            DiffLine::Removed => Some(REMOVED_BACKGROUND),
            DiffLine::Context => None,
            DiffLine::FileHeader | DiffLine::Hunk => return plain(),
        };
        let Some((hunk, syntax)) = shown.hunk.and_then(|h| Some((h, self.syntax_at(h)?))) else {
            return plain();
        };
        let Some((marker, code)) = shown.text.split_at_checked(1) else {
            return plain();
        };
        let with_background = |style: Style| background.map_or(style, |colour| style.bg(colour));
        let marker = Span::styled(marker, with_background(style_of(shown.kind, shown.text)));
        let pieces = self
            .colours
            .of(self, syntax, hunk, shown.n)
            .into_iter()
            .map(|(colour, range)| {
                let text = code.get(range).unwrap_or_default().replace('\t', "    ");
                Span::styled(text, with_background(Style::new().fg(colour)))
            });
        Line::from(std::iter::once(marker).chain(pieces).collect::<Vec<_>>())
    }

    /// How many lines' syntax colours the view keeps (only those drawn are found).
    pub fn highlighted_lines(&self) -> usize {
        self.colours.kept_lines()
    }
}

impl DiffLines for DiffView {
    fn diff_line(&self, n: usize) -> &str {
        self.line(n)
    }
}

/// One line of the diff as drawn: its number, kind and text, and the hunk (`@@` line) it is in.
struct Shown<'v> {
    n: usize,
    kind: DiffLine,
    text: &'v str,
    hunk: Option<usize>,
}

/// Every line of `view` in the colours the view draws it with (`herd diff` on a terminal).
pub fn coloured_lines(view: &DiffView) -> Vec<Line<'_>> {
    let shown = view.shown(0, view.line_count());
    shown.iter().map(|line| view.styled(line)).collect()
}

/// Reads what `task` changed in its latest attempt, into a view (on a worker: it
/// reads the repository). A failure to read is shown in the view's place of the diff.
pub fn read(task: &TaskSpec, tasks_file: &Path, runs_dir: &Path) -> DiffView {
    highlight::prepare();
    match task_changes(task, tasks_file, runs_dir, None, true) {
        Ok((_, _, found)) => DiffView::new(&task.task_id, &found.changes, found.text),
        Err(error) => {
            let mut view = DiffView::new(&task.task_id, &Changes::NotARepository, String::new());
            view.summary = format!("cannot read its changes: {error}");
            view
        }
    }
}

/// Draws `view` into `area` of `buf`: a bordered box titled with the task and its summary, the
/// file list at its left when it is wide enough, the diff beside it.
pub fn draw(view: &DiffView, area: Rect, buf: &mut Buffer) {
    let title = title(view);
    let block = Block::default()
        .borders(Borders::ALL)
        .title(Span::styled(
            title,
            Style::new().add_modifier(Modifier::BOLD),
        ))
        .title_bottom(" j/k scroll · space/b page · n/p file · g/G ends · q close ");
    let inner = block.inner(area);
    block.render(area, buf);
    let diff_area = if area.width >= SIDE_LIST_MIN_WIDTH {
        let list = Rect {
            width: SIDE_LIST_WIDTH,
            ..inner
        };
        draw_files(view, list, buf);
        Rect {
            x: inner.x + SIDE_LIST_WIDTH + 1,
            width: inner.width.saturating_sub(SIDE_LIST_WIDTH + 1),
            ..inner
        }
    } else {
        inner
    };
    draw_diff(view, diff_area, buf);
}

fn title(view: &DiffView) -> String {
    let file = view
        .current_file()
        .and_then(|i| view.files.get(i).map(|f| (i, f)))
        .map(|(i, f)| format!(" · {}/{} {}", i + 1, view.files.len(), f.path))
        .unwrap_or_default();
    format!(" {} · {}{file} ", view.task_id, view.summary)
}

fn draw_files(view: &DiffView, area: Rect, buf: &mut Buffer) {
    let current = view.current_file();
    let lines: Vec<Line<'_>> = view
        .files
        .iter()
        .enumerate()
        .map(|(i, file)| {
            let counts = if file.binary {
                "bin".to_string()
            } else {
                format!("+{} −{}", file.added, file.removed)
            };
            let style = if Some(i) == current {
                Style::new().add_modifier(Modifier::REVERSED)
            } else {
                Style::new()
            };
            Line::from(vec![
                Span::styled(format!("{} ", file.status.letter()), style),
                Span::styled(format!("{counts:>10} "), style),
                Span::styled(file.path.clone(), style),
            ])
        })
        .collect();
    Paragraph::new(lines).render(area, buf);
}

fn draw_diff(view: &DiffView, area: Rect, buf: &mut Buffer) {
    if view.line_count() == 0 || view.text.is_empty() {
        Paragraph::new(view.summary.clone()).render(area, buf);
        return;
    }
    let shown = view.shown(view.top, usize::from(area.height));
    let lines: Vec<Line<'_>> = shown.iter().map(|line| view.styled(line)).collect();
    Paragraph::new(lines).render(area, buf);
}

fn style_of(kind: DiffLine, text: &str) -> Style {
    match kind {
        DiffLine::FileHeader if text.starts_with("diff --git") => {
            Style::new().add_modifier(Modifier::BOLD)
        }
        DiffLine::FileHeader => Style::new().add_modifier(Modifier::DIM),
        DiffLine::Hunk => Style::new().fg(Color::Cyan),
        DiffLine::Added => Style::new().fg(Color::Green),
        DiffLine::Removed => Style::new().fg(Color::Red),
        DiffLine::Context => Style::new(),
    }
}

#[cfg(test)]
#[path = "diff_view_tests.rs"]
mod tests;
