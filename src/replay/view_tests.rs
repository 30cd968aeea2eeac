//! Frames of the replay view at 120x40 and 80x24 (insta snapshots), and its keys end to end on an
//! in-memory recording.

use std::io::Cursor;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use ratatui::backend::TestBackend;

use super::*;
use crate::replay::seek::{Index, IndexOptions, Playhead};

/// A short Claude-like session: a dialog answered by policy, a long pause, the verdict.
fn session_cast(cols: u16, rows: u16) -> String {
    let mut lines = vec![format!(
        "{{\"version\":2,\"width\":{cols},\"height\":{rows},\"title\":\"demo\"}}"
    )];
    let mut event = |t: f64, kind: &str, data: &str| {
        lines.push(serde_json::json!([t, kind, data]).to_string());
    };
    event(
        0.1,
        "o",
        "\x1b]0;✳ Claude Code\x07\x1b[38;5;174m╭─── Claude Code ───╮\x1b[0m\r\n",
    );
    event(
        0.2,
        "o",
        "\x1b[1m❯\x1b[0m Fix issue #142 and run the tests\r\n\r\n",
    );
    event(
        0.5,
        "o",
        "● Bash(touch 漢字.txt)\r\n\r\n Do you want to proceed?\r\n \x1b[36m❯ 1. Yes\x1b[0m\r\n   2. No\r\n",
    );
    event(0.8, "m", "prompt press_1: ❯ 1. Yes");
    event(0.8, "i", "1");
    event(0.8, "m", "auto answer press_1: \"1\"");
    event(0.9, "o", "\x1b[4A\x1b[J  ⎿  Done\r\n");
    event(30.9, "o", "● TASK_COMPLETE:fix-issue-142\r\n");
    event(31.0, "m", "completion marker seen");
    event(31.0, "m", "ending: completion marker seen");
    event(31.2, "m", "verdict: completed");
    lines.join("\n") + "\n"
}

fn view(cast: &str, options: ReplayOptions, now: Instant) -> ReplayView<Cursor<Vec<u8>>> {
    let bytes = cast.as_bytes().to_vec();
    let index = Index::build(Cursor::new(&bytes), IndexOptions::default(), &mut |_| {}).unwrap();
    let playhead = Playhead::new(Cursor::new(bytes), Arc::new(index)).unwrap();
    ReplayView::new(
        playhead,
        "fix-issue-142 · attempt 1".to_string(),
        options,
        now,
    )
}

fn key(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::NONE)
}

fn frame(
    view: &mut ReplayView<Cursor<Vec<u8>>>,
    w: u16,
    h: u16,
    now: Instant,
) -> Terminal<TestBackend> {
    let mut terminal = Terminal::new(TestBackend::new(w, h)).unwrap();
    terminal.draw(|f| view.draw_at(f, f.area(), now)).unwrap();
    terminal
}

#[test]
fn at_the_prompt_marker_120x40() {
    let t0 = Instant::now();
    let mut v = view(&session_cast(80, 16), ReplayOptions::default(), t0);
    assert_eq!(v.handle_key_at(key(KeyCode::Char('n')), t0), Handled::Yes);
    insta::assert_snapshot!(frame(&mut v, 120, 40, t0).backend());
}

#[test]
fn at_the_end_with_idle_gaps_capped_120x40() {
    let t0 = Instant::now();
    let options = ReplayOptions {
        idle_limit: Some(1.0),
        ..ReplayOptions::default()
    };
    let mut v = view(&session_cast(80, 16), options, t0);
    v.handle_key_at(key(KeyCode::End), t0);
    insta::assert_snapshot!(frame(&mut v, 120, 40, t0).backend());
}

#[test]
fn a_big_recording_in_a_small_terminal_80x24() {
    let t0 = Instant::now();
    let options = ReplayOptions {
        start_at: Some(0.5),
        ..ReplayOptions::default()
    };
    let mut v = view(&session_cast(120, 40), options, t0);
    insta::assert_snapshot!(frame(&mut v, 80, 24, t0).backend());
}

#[test]
fn playing_moves_the_screen_with_the_clock() {
    let t0 = Instant::now();
    let options = ReplayOptions {
        autoplay: true,
        speed: Some(2.0),
        ..ReplayOptions::default()
    };
    let mut v = view(&session_cast(80, 16), options, t0);
    assert!(v.tick(t0));
    frame(&mut v, 120, 40, t0);
    // 0.3 s at 2x is 0.6 s: the dialog is up, not yet answered.
    let t = t0 + Duration::from_millis(300);
    assert!(v.tick(t));
    assert!(v.screen().contents().contains("Do you want to proceed?"));
    assert_eq!(v.next_wakeup(t), Some(t + crate::replay::player::FRAME));
    // Fastest play runs to the end without waiting for the clock.
    v.handle_key_at(key(KeyCode::Char('f')), t);
    for _ in 0..10 {
        v.tick(t);
    }
    assert!(v.screen().contents().contains("TASK_COMPLETE"));
    assert_eq!(v.next_wakeup(t), None);
}

#[test]
fn keys_step_and_seek_and_switch_the_idle_cap() {
    let t0 = Instant::now();
    let mut v = view(&session_cast(80, 16), ReplayOptions::default(), t0);
    assert_eq!(v.position(t0), 0.0);
    v.handle_key_at(key(KeyCode::Char('.')), t0);
    assert_eq!(v.playhead.applied(), 1);
    v.handle_key_at(key(KeyCode::Right), t0);
    assert!((v.position(t0) - 5.1).abs() < 1e-6);
    assert!(v.screen().contents().contains("Done"));
    assert_eq!(v.timeline.shown_duration(), 31.2);
    v.handle_key_at(key(KeyCode::Char('i')), t0);
    // The 30 s pause is cut to 2 s; the screen stays where it was.
    assert!((v.timeline.shown_duration() - 3.2).abs() < 1e-6);
    assert!(v.screen().contents().contains("Done"));
    v.handle_key_at(key(KeyCode::Home), t0);
    assert_eq!(v.playhead.applied(), 0);
    assert_eq!(
        v.handle_key_at(key(KeyCode::Char('z')), t0),
        Handled::Ignored
    );
    assert_eq!(v.handle_key_at(key(KeyCode::Char('q')), t0), Handled::Exit);
}

#[test]
fn tiny_terminals_do_not_panic() {
    let t0 = Instant::now();
    let mut v = view(&session_cast(120, 40), ReplayOptions::default(), t0);
    v.handle_key_at(key(KeyCode::End), t0);
    for (w, h) in [(1, 1), (2, 2), (10, 3), (30, 4), (200, 2), (5, 60)] {
        frame(&mut v, w, h, t0);
    }
}
