use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use ratatui::backend::TestBackend;

use super::*;
use crate::core::facts::changes::{FileStatus, RepoChanges, StartPoint};

fn file_diff(path: &str, added: usize, removed: usize) -> String {
    let mut text = format!(
        "diff --git a/{path} b/{path}\nindex 3b18e51..a8c2f0d 100644\n--- a/{path}\n+++ b/{path}\n\
         @@ -1,{} +1,{} @@\n fn keep() {{}}\n",
        removed + 1,
        added + 1
    );
    for n in 0..removed {
        text.push_str(&format!("-    let old_{n} = {n};\n"));
    }
    for n in 0..added {
        text.push_str(&format!("+    let new_{n} = {n} * 2;\n"));
    }
    text
}

fn fixture() -> DiffView {
    let specs = [
        ("src/parser.rs", 12, 3),
        ("src/lexer.rs", 30, 8),
        ("README.md", 2, 1),
    ];
    let mut files = Vec::new();
    let mut text = String::new();
    for (path, added, removed) in specs {
        text.push_str(&file_diff(path, added, removed));
        files.push(FileChange {
            path: path.into(),
            status: FileStatus::Modified,
            added: added as u64,
            removed: removed as u64,
            binary: false,
        });
    }
    files.push(FileChange {
        path: "assets/logo.png".into(),
        status: FileStatus::Added,
        added: 0,
        removed: 0,
        binary: true,
    });
    text.push_str(
        "diff --git a/assets/logo.png b/assets/logo.png\nnew file mode 100644\n\
         index 0000000..9d3c1a2\nBinary files /dev/null and b/assets/logo.png differ\n",
    );
    let changes = Changes::InRepository(RepoChanges {
        start: StartPoint {
            commit: Some("abc".into()),
            branch: Some("main".into()),
            dirty: false,
        },
        branch: Some("main".into()),
        files,
    });
    DiffView::new("fix-042", &changes, text)
}

fn frame(view: &DiffView, width: u16, height: u16) -> Terminal<TestBackend> {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
    terminal
        .draw(|f| draw(view, f.area(), f.buffer_mut()))
        .unwrap();
    terminal
}

#[test]
fn it_scrolls_pages_and_jumps_from_file_to_file() {
    let mut view = fixture();
    let height = 10;
    assert_eq!(view.current_file(), Some(0));
    assert!(view.apply(DiffMove::NextFile, height));
    assert_eq!(
        (view.current_file(), view.line(view.top())),
        (Some(1), "diff --git a/src/lexer.rs b/src/lexer.rs")
    );
    assert!(view.apply(DiffMove::NextFile, height));
    assert_eq!(view.current_file(), Some(2));
    assert!(view.apply(DiffMove::PreviousFile, height));
    assert_eq!(view.current_file(), Some(1));
    assert!(view.apply(DiffMove::Top, height));
    assert_eq!(view.top(), 0);
    assert!(view.apply(DiffMove::Pages(1), height));
    assert_eq!(view.top(), 9);
    assert!(view.apply(DiffMove::Lines(-4), height));
    assert_eq!(view.top(), 5);
    assert!(view.apply(DiffMove::Bottom, height));
    assert_eq!(view.top(), view.line_count() - height);
    assert!(
        view.apply(DiffMove::Lines(100), height),
        "never past the end"
    );
    assert_eq!(view.top(), view.line_count() - height);
    assert!(!view.apply(DiffMove::Close, height));
}

#[test]
fn keys_become_moves() {
    let key = |code| KeyEvent::new(code, KeyModifiers::NONE);
    assert_eq!(
        DiffMove::from_key(key(KeyCode::Char('j'))),
        Some(DiffMove::Lines(1))
    );
    assert_eq!(
        DiffMove::from_key(key(KeyCode::Char('n'))),
        Some(DiffMove::NextFile)
    );
    assert_eq!(
        DiffMove::from_key(key(KeyCode::Char(' '))),
        Some(DiffMove::Pages(1))
    );
    assert_eq!(DiffMove::from_key(key(KeyCode::Esc)), Some(DiffMove::Close));
    assert_eq!(DiffMove::from_key(key(KeyCode::Char('x'))), None);
}

#[test]
fn lines_in_the_middle_of_a_hunk_keep_their_colour() {
    let mut view = fixture();
    view.apply(DiffMove::Lines(8), 5);
    let kinds: Vec<DiffLine> = view.visible(3).into_iter().map(|(k, _)| k).collect();
    assert_eq!(
        kinds,
        vec![DiffLine::Removed, DiffLine::Added, DiffLine::Added]
    );
}

#[test]
fn a_large_diff_draws_only_what_is_on_screen() {
    let mut text = String::new();
    for n in 0..2000 {
        text.push_str(&file_diff(&format!("gen/f{n}.rs"), 50, 0));
    }
    let view = DiffView::new("big", &Changes::NotARepository, text);
    assert_eq!(view.line_count(), 2000 * 56);
    assert_eq!(view.visible(40).len(), 40);
}

#[test]
fn the_diff_view_160x45() {
    let mut view = fixture();
    view.apply(DiffMove::NextFile, 43);
    let terminal = frame(&view, 160, 45);
    let text = format!("{}", terminal.backend());
    assert!(
        text.contains("fix-042 · 4 files +44 −12, 1 binary"),
        "{text}"
    );
    assert!(text.contains("src/lexer.rs"), "{text}");
    insta::assert_snapshot!(terminal.backend());
}

#[test]
fn the_diff_view_80x24() {
    let view = fixture();
    let terminal = frame(&view, 80, 24);
    let text = format!("{}", terminal.backend());
    assert!(
        text.contains("1/4 src/parser.rs"),
        "the narrow view names the file: {text}"
    );
    insta::assert_snapshot!(terminal.backend());
}

/// The colours of the spans of `view`'s line that reads `text`, by their text.
fn spans_of(view: &DiffView, text: &str) -> Vec<(String, Style)> {
    let lines = coloured_lines(view);
    let line = lines.iter().find(|l| l.to_string() == text).unwrap();
    (line.spans.iter())
        .map(|span| (span.content.to_string(), line.style.patch(span.style)))
        .collect()
}

#[test]
fn a_rust_hunk_gets_its_keywords_coloured_apart_from_the_rest() {
    let view = DiffView::new("t", &Changes::NotARepository, file_diff("src/lib.rs", 1, 1));
    let spans = spans_of(&view, "+    let new_0 = 0 * 2;");
    let colour_of = |text: &str| spans.iter().find(|(t, _)| t.trim() == text).unwrap().1;
    let keyword = colour_of("let");
    assert!(matches!(keyword.fg, Some(Color::Rgb(..))), "{spans:?}");
    assert_ne!(keyword.fg, colour_of("=").fg, "{spans:?}");
    assert_eq!(
        colour_of("+").fg,
        Some(Color::Green),
        "the marker keeps its colour"
    );
    assert!(
        spans.iter().all(|(_, s)| s.bg == Some(ADDED_BACKGROUND)),
        "{spans:?}"
    );
    let removed = spans_of(&view, "-    let old_0 = 0;");
    assert!(
        removed
            .iter()
            .all(|(_, s)| s.bg == Some(REMOVED_BACKGROUND))
    );
    let context = spans_of(&view, " fn keep() {}");
    let fn_keyword = context.iter().find(|(t, _)| t == "fn").unwrap();
    assert!(
        matches!(fn_keyword.1.fg, Some(Color::Rgb(..))),
        "{context:?}"
    );
    assert!(context.iter().all(|(_, s)| s.bg.is_none()), "{context:?}");
}

#[test]
fn an_unknown_extension_keeps_the_plain_colours() {
    let view = DiffView::new("t", &Changes::NotARepository, file_diff("notes.zzz", 1, 1));
    let added = spans_of(&view, "+    let new_0 = 0 * 2;");
    assert_eq!(added.len(), 1, "{added:?}");
    assert_eq!(added[0].1, Style::new().fg(Color::Green));
    let removed = spans_of(&view, "-    let old_0 = 0;");
    assert_eq!(removed[0].1, Style::new().fg(Color::Red));
}

#[test]
fn a_fifty_thousand_line_diff_highlights_only_what_is_drawn() {
    let mut view = DiffView::new(
        "big",
        &Changes::NotARepository,
        file_diff("big.rs", 50_000, 0),
    );
    let height = 40;
    view.apply(DiffMove::Bottom, height);
    frame(&view, 120, height as u16 + 2);
    assert!(
        view.highlighted_lines() >= height,
        "{}",
        view.highlighted_lines()
    );
    assert!(
        view.highlighted_lines() <= height + 61,
        "{}",
        view.highlighted_lines()
    );
    view.apply(DiffMove::Lines(-1), height);
    frame(&view, 120, height as u16 + 2);
    assert!(
        view.highlighted_lines() <= 2 * height + 122,
        "one line up stays cheap"
    );
}
