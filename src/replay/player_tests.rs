use std::time::{Duration, Instant};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::*;

fn secs(s: f64) -> Duration {
    Duration::from_secs_f64(s)
}

#[test]
fn play_advances_with_the_clock_and_stops_at_the_end() {
    let t0 = Instant::now();
    let mut p = Player::new(10.0, t0);
    assert_eq!(p.position(t0 + secs(3.0)), 0.0);
    assert_eq!(p.handle(PlayerAction::TogglePlay, t0, &[]), Outcome::Redraw);
    assert!((p.position(t0 + secs(3.0)) - 3.0).abs() < 1e-9);
    assert!(!p.tick(t0 + secs(9.0)));
    assert!(p.tick(t0 + secs(12.0)));
    assert!(!p.playing());
    assert_eq!(p.position(t0 + secs(20.0)), 10.0);
    // Play at the end starts over.
    assert_eq!(
        p.handle(PlayerAction::TogglePlay, t0 + secs(20.0), &[]),
        Outcome::Seek(0.0)
    );
    assert!(p.playing());
}

#[test]
fn pause_keeps_the_position() {
    let t0 = Instant::now();
    let mut p = Player::new(10.0, t0);
    p.handle(PlayerAction::TogglePlay, t0, &[]);
    p.handle(PlayerAction::TogglePlay, t0 + secs(2.0), &[]);
    assert!(!p.playing());
    assert!((p.position(t0 + secs(8.0)) - 2.0).abs() < 1e-9);
    assert_eq!(p.next_wakeup(t0), None);
}

#[test]
fn speed_steps_and_reanchors() {
    let t0 = Instant::now();
    let mut p = Player::new(100.0, t0);
    p.handle(PlayerAction::TogglePlay, t0, &[]);
    p.handle(PlayerAction::Faster, t0 + secs(2.0), &[]);
    assert_eq!(p.speed(), 2.0);
    // 2 s at 1x, then 1 s at 2x.
    assert!((p.position(t0 + secs(3.0)) - 4.0).abs() < 1e-9);
    for _ in 0..10 {
        p.handle(PlayerAction::Faster, t0 + secs(3.0), &[]);
    }
    assert_eq!(p.speed(), 16.0);
    for _ in 0..10 {
        p.handle(PlayerAction::Slower, t0 + secs(3.0), &[]);
    }
    assert_eq!(p.speed(), 0.25);
    p.handle(PlayerAction::NormalSpeed, t0 + secs(3.0), &[]);
    assert_eq!(p.speed(), 1.0);
    p.set_speed(5.0, t0 + secs(3.0));
    assert_eq!(p.speed(), 4.0);
}

#[test]
fn seeks_are_clamped() {
    let t0 = Instant::now();
    let mut p = Player::new(100.0, t0);
    assert_eq!(
        p.handle(PlayerAction::SeekBy(-5.0), t0, &[]),
        Outcome::Seek(0.0)
    );
    assert_eq!(
        p.handle(PlayerAction::SeekBy(60.0), t0, &[]),
        Outcome::Seek(60.0)
    );
    assert_eq!(
        p.handle(PlayerAction::SeekBy(60.0), t0, &[]),
        Outcome::Seek(100.0)
    );
    assert_eq!(
        p.handle(PlayerAction::SeekStart, t0, &[]),
        Outcome::Seek(0.0)
    );
    assert_eq!(
        p.handle(PlayerAction::SeekEnd, t0, &[]),
        Outcome::Seek(100.0)
    );
}

#[test]
fn markers_are_stepped_through() {
    let t0 = Instant::now();
    let mut p = Player::new(10.0, t0);
    let marks = [1.0, 1.0, 4.0];
    assert_eq!(
        p.handle(PlayerAction::NextMarker, t0, &marks),
        Outcome::SeekMarker(0)
    );
    // Markers at the same time are visited one by one.
    assert_eq!(
        p.handle(PlayerAction::NextMarker, t0, &marks),
        Outcome::SeekMarker(1)
    );
    assert_eq!(
        p.handle(PlayerAction::NextMarker, t0, &marks),
        Outcome::SeekMarker(2)
    );
    assert_eq!(
        p.handle(PlayerAction::NextMarker, t0, &marks),
        Outcome::Nothing
    );
    assert_eq!(
        p.handle(PlayerAction::PrevMarker, t0, &marks),
        Outcome::SeekMarker(1)
    );
    assert_eq!(
        p.handle(PlayerAction::PrevMarker, t0, &marks),
        Outcome::SeekMarker(0)
    );
    assert_eq!(
        p.handle(PlayerAction::PrevMarker, t0, &marks),
        Outcome::Seek(0.0)
    );
    // From between markers: the nearest one on that side.
    p.handle(PlayerAction::SeekBy(2.0), t0, &marks);
    assert_eq!(
        p.handle(PlayerAction::PrevMarker, t0, &marks),
        Outcome::SeekMarker(1)
    );
    p.handle(PlayerAction::SeekBy(0.5), t0, &marks);
    assert_eq!(
        p.handle(PlayerAction::NextMarker, t0, &marks),
        Outcome::SeekMarker(2)
    );
}

#[test]
fn fastest_play_follows_the_screen() {
    let t0 = Instant::now();
    let mut p = Player::new(10.0, t0);
    p.handle(PlayerAction::Fastest, t0, &[]);
    p.handle(PlayerAction::TogglePlay, t0, &[]);
    assert_eq!(p.next_wakeup(t0), Some(t0));
    p.set_position(3.5, t0 + secs(1.0));
    assert_eq!(p.position(t0 + secs(5.0)), 3.5);
    p.stop_at_end(t0 + secs(2.0));
    assert!(!p.playing());
    assert_eq!(p.position(t0 + secs(2.0)), 10.0);
}

#[test]
fn keys_map_to_commands() {
    let key = |code| KeyEvent::new(code, KeyModifiers::NONE);
    let cases = [
        (key(KeyCode::Char(' ')), Some(PlayerAction::TogglePlay)),
        (key(KeyCode::Left), Some(PlayerAction::SeekBy(-5.0))),
        (key(KeyCode::Right), Some(PlayerAction::SeekBy(5.0))),
        (
            KeyEvent::new(KeyCode::Right, KeyModifiers::SHIFT),
            Some(PlayerAction::SeekBy(60.0)),
        ),
        (key(KeyCode::Up), Some(PlayerAction::SeekBy(-60.0))),
        (key(KeyCode::Down), Some(PlayerAction::SeekBy(60.0))),
        (key(KeyCode::Home), Some(PlayerAction::SeekStart)),
        (key(KeyCode::End), Some(PlayerAction::SeekEnd)),
        (key(KeyCode::Char('n')), Some(PlayerAction::NextMarker)),
        (key(KeyCode::Char('p')), Some(PlayerAction::PrevMarker)),
        (key(KeyCode::Char('+')), Some(PlayerAction::Faster)),
        (key(KeyCode::Char('-')), Some(PlayerAction::Slower)),
        (key(KeyCode::Char('f')), Some(PlayerAction::Fastest)),
        (key(KeyCode::Char('i')), Some(PlayerAction::ToggleIdleCap)),
        (key(KeyCode::Char('q')), Some(PlayerAction::Quit)),
        (
            KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL),
            Some(PlayerAction::Quit),
        ),
        (key(KeyCode::Char('z')), None),
    ];
    for (key, command) in cases {
        assert_eq!(PlayerAction::from_key(key), command, "{key:?}");
    }
}
