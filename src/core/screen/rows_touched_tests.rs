//! The rows `Screen::update` reads again are all it needs: after every feed, the snapshot kept
//! up to date row by row equals the screen read whole, for random streams of every sequence the
//! tracker follows (and those it gives up on), cut at random places, and for the real CLIs'
//! captures.

use proptest::prelude::*;

use super::super::{Screen, Snapshot};

/// Feeds `chunks` one by one; after each, the updated snapshot must equal a whole read, and
/// `update` must say "changed" exactly when the text or the cursor's row changed.
fn check_feeds(rows: u16, cols: u16, chunks: &[Vec<u8>]) -> Result<(), TestCaseError> {
    let mut screen = Screen::new(rows, cols);
    let mut kept = Snapshot::default();
    screen.update(&mut kept);
    for (i, chunk) in chunks.iter().enumerate() {
        let before = (kept.text.clone(), kept.cursor_row);
        screen.feed_counted(chunk);
        let changed = screen.update(&mut kept);
        let whole = screen.snapshot();
        prop_assert_eq!(
            &kept.rows,
            &whole.rows,
            "after chunk {} of {}: {:?}",
            i,
            chunks.len(),
            String::from_utf8_lossy(chunk)
        );
        prop_assert_eq!(&kept.text, &whole.text);
        prop_assert_eq!(kept.cursor_row, whole.cursor_row);
        prop_assert_eq!(kept.first_row_number, whole.first_row_number);
        prop_assert_eq!(changed, before != (kept.text.clone(), kept.cursor_row));
    }
    Ok(())
}

/// One piece of terminal output, of the kinds agents write.
fn piece() -> impl Strategy<Value = Vec<u8>> {
    let text = prop_oneof![
        "[a-z ]{1,30}",
        "[a-zA-Z0-9 .,:()]{20,140}",
        Just("● Bash(cargo test)".to_string()),
        Just("  ⎿  ok │ 漢字テキスト │ 🦀🦀".to_string()),
        Just("e\u{301}\u{fe0f}❯ ✻ ·".to_string()),
    ]
    .prop_map(String::into_bytes);
    let n = 0u16..50;
    let csi = (n.clone(), n.clone(), 0usize..31).prop_map(|(a, b, which)| {
        let finals = [
            "A", "B", "C", "D", "E", "F", "G", "`", "H", "f", "d", "J", "?J", "K", "?K", "@", "P",
            "X", "L", "M", "S", "T", "b", "r", "m", "n", "?25l", "?1049h", "?1049l", "?47h", "q",
        ];
        let f = finals[which];
        match f {
            "H" | "f" | "r" => format!("\x1b[{a};{b}{f}"),
            "?J" | "?K" => format!("\x1b[?{}{}", a % 3, &f[1..]),
            "J" | "K" => format!("\x1b[{}{f}", a % 4),
            f if f.starts_with('?') => format!("\x1b[{f}"),
            "q" => format!("\x1b[{} q", a % 6),
            _ => format!("\x1b[{a}{f}"),
        }
        .into_bytes()
    });
    let control = prop_oneof![
        Just(b"\r\n".to_vec()),
        Just(b"\n".to_vec()),
        Just(b"\r".to_vec()),
        Just(b"\x08".to_vec()),
        Just(b"\t".to_vec()),
        Just(b"\x0b".to_vec()),
        Just(b"\x1b7".to_vec()),
        Just(b"\x1b8".to_vec()),
        Just(b"\x1bM".to_vec()),
        Just(b"\x1bD".to_vec()),
        Just(b"\x1bc".to_vec()),
        Just(b"\x1b[r".to_vec()),
        Just(b"\x1b[?1047h".to_vec()),
        Just(b"\x1b[?6h".to_vec()),
        Just(b"\x1b[?6l".to_vec()),
        Just(b"\x1b]0;title\x07".to_vec()),
        Just(b"\x1b[38;5;174m".to_vec()),
        Just(b"\x1b[m".to_vec()),
    ];
    prop_oneof![4 => text, 3 => control, 3 => csi]
}

/// A stream of pieces, cut into chunks at random byte offsets (inside sequences and
/// characters too).
fn stream() -> impl Strategy<Value = Vec<Vec<u8>>> {
    (
        prop::collection::vec(piece(), 1..80),
        prop::collection::vec(any::<prop::sample::Index>(), 0..30),
    )
        .prop_map(|(pieces, cuts)| {
            let bytes: Vec<u8> = pieces.concat();
            let mut at: Vec<usize> = cuts.iter().map(|c| c.index(bytes.len() + 1)).collect();
            at.push(bytes.len());
            at.sort_unstable();
            at.dedup();
            let mut chunks = Vec::new();
            let mut start = 0;
            for end in at {
                chunks.push(bytes[start..end].to_vec());
                start = end;
            }
            chunks
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn the_rows_read_again_are_all_that_changed(
        chunks in stream(),
        size in prop_oneof![Just((24u16, 80u16)), Just((6, 20)), Just((40, 120)), Just((3, 7))],
    ) {
        check_feeds(size.0, size.1, &chunks)?;
    }
}

/// The real CLIs' captures (the repository's fixtures), cut into pieces of a few sizes.
#[test]
fn the_real_clis_captures_read_row_by_row_equal_the_whole_screen() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let mut captures = 0;
    for cli in ["claude", "codex", "gemini", "aider"] {
        let Ok(entries) = std::fs::read_dir(root.join(cli)) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.extension().is_none_or(|e| e != "raw") {
                continue;
            }
            let bytes = std::fs::read(&path).expect("capture");
            captures += 1;
            for (chunk, (rows, cols)) in [
                (1, (40, 120)),
                (7, (24, 80)),
                (64, (40, 120)),
                (4096, (30, 100)),
            ] {
                let chunks: Vec<Vec<u8>> = bytes.chunks(chunk).map(<[u8]>::to_vec).collect();
                if let Err(error) = check_feeds(rows, cols, &chunks) {
                    panic!(
                        "{} in chunks of {chunk} at {rows}x{cols}: {error}",
                        path.display()
                    );
                }
            }
        }
    }
    assert!(
        captures >= 10,
        "only {captures} captures found under {}",
        root.display()
    );
}

/// Found by the property test: a repeat that wrapped, then up to the top and a line feed;
/// the cursor's true column was past the bound's (reset by its wrap) once both rows met.
#[test]
fn a_move_that_stops_at_the_top_gives_the_columns_bound_up() {
    let chunks: [&[u8]; 7] = [
        b"\x1bc\xe2\x97\x8f Bash",
        b"(cargo te",
        b"st)\x1b[1J\x1b]0;title\x07\x1bD  ",
        b"ps dx",
        b"  ",
        b"k  jxswc",
        b" rbg\x1b[39b\x1b[6A\ndu  rx  z  ua",
    ];
    let chunks: Vec<Vec<u8>> = chunks.iter().map(|c| c.to_vec()).collect();
    check_feeds(24, 80, &chunks).expect("kept equals whole");
}

#[test]
fn a_streaming_line_and_spinner_read_only_their_rows() {
    let mut screen = Screen::new(10, 40);
    let mut kept = Snapshot::default();
    for i in 0..30 {
        screen.feed_counted(
            format!("\r\x1b[2Kline {i}\r\n\x1b[31m✻\x1b[0m Working… {i}s").as_bytes(),
        );
        screen.update(&mut kept);
    }
    // One burst more: the line scrolls one row off, the spinner's row is redrawn.
    screen.feed_counted(b"\r\x1b[2Kline 30\r\n\x1b[31m\xe2\x9c\xbb\x1b[0m Working\xe2\x80\xa6 30s");
    assert_eq!(
        screen.pending,
        super::super::Pending::Rows {
            scrolled: 1,
            touched: super::Touched::Rows { first: 8, last: 9 }
        }
    );
    assert!(screen.update(&mut kept));
    assert_eq!(kept, screen.snapshot());
}

#[test]
fn a_snapshot_the_screen_did_not_update_last_is_read_whole() {
    let mut screen = Screen::new(4, 20);
    let mut first = Snapshot::default();
    let mut second = Snapshot::default();
    screen.feed_counted(b"one\r\ntwo");
    screen.update(&mut first);
    screen.update(&mut second);
    screen.feed_counted(b"\r\nthree");
    // `first` is not the snapshot updated last: bringing only its touched rows up to date
    // would leave it wrong; it is read whole.
    screen.update(&mut first);
    assert_eq!(first, screen.snapshot());
    assert_eq!(first.text, "one\ntwo\nthree");
}
