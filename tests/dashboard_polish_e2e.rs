//! End to end, the real `herd run` in a pseudo-terminal of 100x30 with `NO_COLOR`: ids that
//! differ only at their end stay apart in the queue, the selected row is marked without colour,
//! "why" a task failed is the line of its output that says it, `f` goes only through the
//! statuses there are, `/` narrows the queue as in less/k9s/lazygit (Enter keeps, Esc clears),
//! and the summary printed on leaving has one line per task within the terminal's width.

// Test code: a failed `expect` is the test failing, with its message.
#![allow(clippy::expect_used, clippy::unwrap_used)]

use std::path::Path;
use std::time::Duration;

mod common;
use common::dashboard::{Dashboard, Launch};

const ROWS: u16 = 30;
const COLS: u16 = 100;

/// The queue's title row (the screen's first).
fn title(screen: &vt100::Screen) -> String {
    screen.rows(0, COLS).next().unwrap_or_default()
}

/// The row holding `needle`, if any.
fn row_of(screen: &vt100::Screen, needle: &str) -> Option<u16> {
    screen
        .rows(0, COLS)
        .position(|r| r.contains(needle))
        .map(|r| r as u16)
}

fn tasks_file(dir: &Path) -> std::path::PathBuf {
    let done = |id: &str| {
        format!(
            r#"{{"task_id": "{id}", "agent": "generic", "max_retries": 0, "prompt_template": "x",
                "command": ["sh", "-c", "echo TASK_COMPLETE:{id}"]}}"#
        )
    };
    let cargo = r#"{"task_id": "structured-output-cargo-build-019", "agent": "generic",
        "max_retries": 0, "prompt_template": "x", "command": ["sh", "-c",
        "echo 'Compiling'; echo 'error: could not find `Cargo.toml` in `/tmp/nowhere` or any parent directory' >&2; exit 101"]}"#;
    let disabled = r#"{"task_id": "later-016", "agent": "generic", "enabled": false,
        "prompt_template": "x", "command": ["true"]}"#;
    let text = format!(
        r#"{{"tasks": [{}, {}, {cargo}, {disabled}]}}"#,
        done("structured-output-cargo-build-017"),
        done("structured-output-cargo-build-018"),
    );
    let path = dir.join("tasks.json");
    std::fs::write(&path, text).expect("write tasks");
    path
}

#[test]
fn the_queue_reads_well_at_100_columns_without_colour() {
    let dir = tempfile::tempdir().expect("temp dir");
    let tasks = tasks_file(dir.path());
    let mut ui = Dashboard::start(
        &tasks,
        Launch {
            env: &[("NO_COLOR", "1")],
            ..Launch::size(ROWS, COLS)
        },
    );
    ui.wait_until("the batch to end", Duration::from_secs(60), |s| {
        s.contents().contains("The batch is done")
    });
    let screen = ui.screen().clone();
    let text = screen.contents();
    // Ids that differ at their end stay apart, whole or cut in the middle.
    for end in ["017", "018", "019"] {
        assert!(
            text.lines().any(|l| l.contains(&format!("-{end} "))
                && (l.contains("structured-output-cargo-build") || l.contains('…'))),
            "id …{end} is not told apart:\n{text}"
        );
    }
    // The selected row (the first) is marked without colour: reverse video.
    let first = row_of(&screen, "-017").expect("first row");
    assert!(
        screen.cell(first, 3).is_some_and(vt100::Cell::inverse),
        "the selected row is not marked under NO_COLOR:\n{text}"
    );
    // The failed task's details say what its output said, not only its exit code.
    ui.press("jj");
    ui.wait_until("the cause in the details", Duration::from_secs(5), |s| {
        let text = s.contents();
        text.contains("error: could not") && text.contains("`Cargo.toml`")
    });

    // `f` skips the statuses no task has: here failed, completed, skipped and all.
    let mut seen = Vec::new();
    for _ in 0..4 {
        let before = title(ui.screen());
        ui.press("f");
        ui.wait_until("the filter to change", Duration::from_secs(5), |s| {
            title(s) != before
        });
        seen.push(title(ui.screen()));
    }
    let labels: Vec<&str> = seen
        .iter()
        .map(|t| {
            [
                "all",
                "failed",
                "completed",
                "skipped",
                "active",
                "waiting",
                "pending",
                "retryable",
                "cancelled",
            ]
            .into_iter()
            .find(|l| t.contains(&format!("· {l} ")))
            .unwrap_or("?")
        })
        .collect();
    assert_eq!(
        labels,
        ["failed", "completed", "skipped", "all"],
        "{seen:#?}"
    );

    // `/` narrows the queue as it is typed; Enter keeps it; `/` then Esc clears it.
    ui.press("/018");
    ui.wait_until("the search in the title", Duration::from_secs(5), |s| {
        title(s).contains("/018")
    });
    ui.press("\r");
    ui.wait_until("only the matching task", Duration::from_secs(5), |s| {
        let text = s.contents();
        text.contains("-018") && !text.contains("-017 ") && title(s).contains("/018")
    });
    ui.press("/");
    ui.press("\x1b");
    ui.wait_until("every task again", Duration::from_secs(5), |s| {
        let text = s.contents();
        text.contains("-017") && text.contains("-018") && !title(s).contains("/018")
    });

    ui.press("q");
    ui.wait_for_exit(Duration::from_secs(20));
    let after = ui.screen().contents();
    let rows: Vec<&str> = after
        .lines()
        .filter(|l| l.contains("-01") || l.contains("later-016"))
        .collect();
    assert_eq!(rows.len(), 4, "one line per task in the summary:\n{after}");
    assert!(
        rows.iter().any(|l| l.contains("could not find")),
        "the summary says why it failed:\n{after}"
    );
    assert!(
        after.contains("4 tasks: 2 completed, 1 failed, 1 skipped"),
        "the summary counts as `herd status` does:\n{after}"
    );
}
