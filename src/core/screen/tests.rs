use super::*;

#[test]
fn text_follows_cursor_moves() {
    let mut s = Screen::new(5, 40);
    s.feed(b"Claude\x1b[13GCode\r\n\x1b[3;5Hdown here", 0);
    assert_eq!(s.visible_rows()[0], "Claude      Code");
    assert_eq!(s.visible_rows()[2], "    down here");
}

#[test]
fn queries_are_answered_with_the_cursor_at_the_query() {
    let mut s = Screen::new(10, 40);
    let out = s.feed(b"ab\x1b[6ncd\x1b[c", 0);
    assert_eq!(out.replies, b"\x1b[1;3R\x1b[?62;22c");
}

#[test]
fn queries_split_across_feeds_are_answered_once() {
    let mut s = Screen::new(10, 40);
    let a = s.feed(b"x\x1b[", 0);
    let b = s.feed(b"6n", 0);
    assert!(a.replies.is_empty());
    assert_eq!(b.replies, b"\x1b[1;2R");
}

#[test]
fn a_character_split_across_feeds_keeps_what_follows() {
    let mut s = Screen::new(5, 40);
    s.feed(b"x \xc2", 0);
    s.feed(b"\xb7 \xe2\x86", 0);
    s.feed(b"\x90!", 0);
    assert_eq!(s.visible_rows()[0], "x · ←!");
}

#[test]
fn incomplete_tails_are_measured() {
    assert_eq!(incomplete_utf8_tail(b"abc"), 0);
    assert_eq!(incomplete_utf8_tail(b"a\xc2"), 1);
    assert_eq!(incomplete_utf8_tail(b"a\xe2\x86"), 2);
    assert_eq!(incomplete_utf8_tail("a←".as_bytes()), 0);
    assert_eq!(incomplete_utf8_tail(b"\xf0\x9f\x98"), 3);
    assert_eq!(incomplete_utf8_tail(b"\x86\x90"), 0);
}

#[test]
fn scrolled_rows_come_back_in_order_with_context() {
    let mut s = Screen::new(3, 20);
    s.feed(b"one\r\ntwo\r\nthree", 0);
    let out = s.feed(b"\r\nfour\r\nfive", 1);
    assert_eq!(out.scrolled_rows, ["one", "two"]);
    assert_eq!(out.context_rows, 0);
    let out = s.feed(b"\r\nsix", 1);
    assert_eq!(out.scrolled_rows, ["two", "three"]);
    assert_eq!(out.context_rows, 1);
    assert_eq!(s.rows_scrolled_total(), 3);
    assert_eq!(s.visible_rows(), ["four", "five", "six"]);
}

#[test]
fn a_flood_larger_than_the_screen_keeps_every_scrolled_row() {
    let mut s = Screen::with_scrollback(4, 20, 100);
    let text: String = (0..30).map(|i| format!("line {i}\r\n")).collect();
    let out = s.feed(text.as_bytes(), 0);
    assert_eq!(out.scrolled_rows.len(), 27);
    assert_eq!(out.scrolled_rows[0], "line 0");
    assert_eq!(out.scrolled_rows[26], "line 26");
}

#[test]
fn history_past_capacity_is_still_counted() {
    let mut s = Screen::with_scrollback(2, 20, 3);
    let text: String = (0..10).map(|i| format!("l{i}\r\n")).collect();
    let out = s.feed(text.as_bytes(), 0);
    assert_eq!(s.rows_scrolled_total(), 9);
    assert_eq!(out.scrolled_rows, ["l6", "l7", "l8"]);
}

#[test]
fn the_scroll_view_shows_history_with_its_colours_and_stops_at_the_oldest_row() {
    let mut s = Screen::with_scrollback(3, 20, 100);
    let text: String = (0..8)
        .map(|i| format!("\x1b[31mred {i}\x1b[m plain\r\n"))
        .collect();
    s.feed(text.as_bytes(), 0);
    s.feed(b"now", 0);
    assert_eq!(s.history_len(), 6);
    let (view, offset) = s.scrolled_view(2);
    assert_eq!(offset, 2);
    let rows: Vec<String> = view.rows(0, 20).collect();
    assert_eq!(rows, ["red 4 plain", "red 5 plain", "red 6 plain"]);
    let cell = view.cell(0, 0).expect("a cell");
    assert_eq!(cell.fgcolor(), vt100::Color::Idx(1), "the colour is kept");
    assert_eq!(
        view.cell(0, 6).map(vt100::Cell::fgcolor),
        Some(vt100::Color::Default)
    );
    assert!(view.hide_cursor(), "no cursor while looking back");
    // Past the oldest row, the view stops there.
    let (view, offset) = s.scrolled_view(1000);
    assert_eq!(offset, 6);
    let rows: Vec<String> = view.rows(0, 20).collect();
    assert_eq!(rows, ["red 0 plain", "red 1 plain", "red 2 plain"]);
    // The live screen is untouched.
    assert_eq!(s.visible_rows(), ["red 6 plain", "red 7 plain", "now"]);
}

#[test]
fn a_full_screen_programs_own_screen_is_not_history() {
    let mut s = Screen::with_scrollback(3, 20, 100);
    s.feed(b"before\r\n", 0);
    let text: String = (0..10).map(|i| format!("alt {i}\r\n")).collect();
    s.feed(format!("\x1b[?1049h{text}\x1b[?1049l").as_bytes(), 0);
    assert_eq!(s.history_len(), 0);
    assert_eq!(s.rows_scrolled_total(), 0);
}
