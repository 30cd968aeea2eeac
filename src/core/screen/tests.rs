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

#[test]
fn a_snapshot_is_the_screen_read_once() {
    let mut s = Screen::with_scrollback(4, 20, 100);
    s.feed(b"one\r\ntwo\r\nthree\r\nfour\r\nfive\x1b[2;3H", 0);
    let snapshot = s.snapshot();
    assert_eq!(snapshot.rows, s.visible_rows());
    assert_eq!(snapshot.text, s.text());
    assert_eq!(snapshot.text, "two\nthree\nfour\nfive");
    assert_eq!(snapshot.cursor_row, 1);
    assert_eq!(snapshot.first_row_number, s.rows_scrolled_total());
    assert_eq!(snapshot.first_row_number, 1);
    // Trailing blank rows are no part of the text, as with `text`.
    s.feed(b"\x1b[2J\x1b[Hhi", 0);
    assert_eq!(s.snapshot().text, "hi");
    assert_eq!(s.snapshot().rows, ["hi", "", "", ""]);
}

#[test]
fn history_below_a_snapshot_is_what_rows_with_history_gives() {
    let mut s = Screen::with_scrollback(2, 20, 100);
    s.feed(b"a\r\nb\r\nc\r\nd\r\ne", 0);
    let (rows, history) = s.snapshot().with_history(s.history_tail(2));
    assert_eq!(rows, s.rows_with_history(2));
    assert_eq!(rows, ["b", "c", "d", "e"]);
    assert_eq!(history, 2);
    // Less held than asked for: what there is.
    assert_eq!(s.history_tail(10), ["a", "b", "c"]);
}

#[test]
fn feeding_counted_then_reading_the_scrolled_rows_is_feeding() {
    let bytes = b"1\r\n2\r\n3\r\n4\r\n5\r\n6\x1b[6n";
    let mut whole = Screen::with_scrollback(3, 20, 100);
    let mut counted = Screen::with_scrollback(3, 20, 100);
    whole.feed(b"0\r\n", 0);
    counted.feed(b"0\r\n", 0);
    let outcome = whole.feed(bytes, 2);
    let fed = counted.feed_counted(bytes);
    assert_eq!(fed.scrolled, 4);
    assert_eq!(fed.replies, outcome.replies);
    assert_eq!(fed.bell, outcome.bell);
    assert_eq!(
        counted.scrolled_rows(fed.scrolled, 2),
        (outcome.scrolled_rows, outcome.context_rows)
    );
    assert_eq!(counted.snapshot(), whole.snapshot());
}
