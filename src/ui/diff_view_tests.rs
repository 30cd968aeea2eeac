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
