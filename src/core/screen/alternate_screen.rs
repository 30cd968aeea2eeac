//! Whether a terminal shows its alternate screen, followed from the bytes written to it (modes
//! 1049, 1047, 47), split anywhere. The attach client must not leave it twice: `?1049l` also
//! restores the cursor, over the dashboard's last words. Pure.

/// The longest unfinished sequence kept for the next bytes: longer is not one of ours.
const LONGEST_PENDING: usize = 32;

/// Follows the alternate screen of one terminal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AlternateScreen {
    on: bool,
    /// The start of a sequence the bytes so far ended in.
    pending: Vec<u8>,
}

/// What the bytes at some position are.
enum Sequence {
    /// A private mode set or reset that switches the alternate screen; its length.
    Switch { on: bool, len: usize },
    /// Could be one, but the bytes end first.
    Unfinished,
    /// Anything else.
    Other,
}

impl AlternateScreen {
    /// A terminal that is (`on`) or is not in its alternate screen now.
    pub fn new(on: bool) -> Self {
        AlternateScreen {
            on,
            pending: Vec::new(),
        }
    }

    pub fn is_on(&self) -> bool {
        self.on
    }

    /// Takes in bytes written to the terminal.
    pub fn feed(&mut self, bytes: &[u8]) {
        let mut input = std::mem::take(&mut self.pending);
        input.extend_from_slice(bytes);
        let mut at = 0;
        while at < input.len() {
            if input[at] != 0x1b {
                at += 1;
                continue;
            }
            match sequence(&input[at..]) {
                Sequence::Switch { on, len } => {
                    self.on = on;
                    at += len;
                }
                Sequence::Unfinished => {
                    if input.len() - at <= LONGEST_PENDING {
                        self.pending = input[at..].to_vec();
                    }
                    return;
                }
                Sequence::Other => at += 1,
            }
        }
    }
}

/// Reads `ESC [ ? <modes> h|l` at the start of `bytes`.
fn sequence(bytes: &[u8]) -> Sequence {
    const INTRO: &[u8] = b"\x1b[?";
    if bytes.len() < INTRO.len() {
        return if INTRO.starts_with(bytes) {
            Sequence::Unfinished
        } else {
            Sequence::Other
        };
    }
    if !bytes.starts_with(INTRO) {
        return Sequence::Other;
    }
    let params = &bytes[INTRO.len()..];
    let Some(end) = params
        .iter()
        .position(|b| !(b.is_ascii_digit() || *b == b';'))
    else {
        return Sequence::Unfinished;
    };
    let on = match params[end] {
        b'h' => true,
        b'l' => false,
        _ => return Sequence::Other,
    };
    let switches = params[..end]
        .split(|b| *b == b';')
        .any(|mode| matches!(mode, b"1049" | b"1047" | b"47"));
    if switches {
        Sequence::Switch {
            on,
            len: INTRO.len() + end + 1,
        }
    } else {
        Sequence::Other
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn after(start: bool, bytes: &[u8]) -> bool {
        let mut screen = AlternateScreen::new(start);
        screen.feed(bytes);
        screen.is_on()
    }

    #[test]
    fn the_switches_are_followed_and_other_modes_ignored() {
        let cases: &[(bool, &[u8], bool)] = &[
            (true, b"summary\r\n", true),
            (true, b"\x1b[?1049l\r\nsummary", false),
            (false, b"\x1b[?1049h", true),
            (true, b"\x1b[?25h\x1b[?1049l\x1b[?2004l", false),
            (true, b"\x1b[?1000;1049l", false),
            (false, b"\x1b[?1047h", true),
            (true, b"\x1b[?47l", false),
            (true, b"\x1b[?10490l\x1b[?2004l\x1b[1049l", true),
            (true, b"\x1b[?1049l text \x1b[?1049h", true),
        ];
        for (start, bytes, want) in cases {
            assert_eq!(
                after(*start, bytes),
                *want,
                "{start} {:?}",
                String::from_utf8_lossy(bytes)
            );
        }
    }

    /// As vt100's split-escapes test: the stream split at every position gives the same answer.
    #[test]
    fn a_stream_split_anywhere_gives_the_same_answer() {
        let stream: &[u8] =
            b"\x1b[2J\x1b[?25l drawn \x1b[?1000;1006h\x1b[?1049l\x1b[0m ATTEMPTS\r\n\x1b[?25h";
        let whole = after(true, stream);
        assert!(!whole);
        for split in 0..=stream.len() {
            let mut screen = AlternateScreen::new(true);
            screen.feed(&stream[..split]);
            screen.feed(&stream[split..]);
            assert_eq!(screen.is_on(), whole, "split at {split}");
        }
    }
}
