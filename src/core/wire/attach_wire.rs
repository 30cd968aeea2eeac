//! The wire between `herd attach` and a background run's session holder: frames of a kind byte,
//! a big-endian u32 length and the payload (`Hello`, `Input`, `Resize` from the client;
//! `Output` and one `Bye` from the holder), and the escape sequence asking to detach. Pure.

use thiserror::Error;

/// The largest payload accepted: more is a peer that does not speak this wire.
pub const MAX_PAYLOAD: usize = 1 << 20;

/// Ctrl-\ in a raw terminal: the client's detach key (as dtach's), unused by the dashboard.
pub const DETACH_KEY: u8 = 0x1c;

/// An OSC no terminal knows, written by the dashboard to ask the holder to detach the client
/// that typed the last key; the holder takes it out of the stream.
pub const DETACH_REQUEST: &[u8] = b"\x1b]5379;herd-detach\x07";

/// One message on the attach socket.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Frame {
    /// Client → holder, first: the client terminal's size.
    Hello { cols: u16, rows: u16 },
    /// Client → holder: keys for the dashboard.
    Input(Vec<u8>),
    /// Client → holder: the client's terminal changed size.
    Resize { cols: u16, rows: u16 },
    /// Holder → client: bytes for the client's terminal.
    Output(Vec<u8>),
    /// Holder → client, last: why the connection ends (detached, the batch ended, refused).
    Bye(String),
}

/// A peer that does not speak the wire.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum WireError {
    #[error("unknown frame kind {0}")]
    UnknownKind(u8),
    #[error("frame of {0} bytes is larger than the limit")]
    TooLong(usize),
    #[error("a size frame needs 4 bytes, got {0}")]
    BadSize(usize),
}

const HELLO: u8 = 1;
const INPUT: u8 = 2;
const RESIZE: u8 = 3;
const OUTPUT: u8 = 10;
const BYE: u8 = 11;

impl Frame {
    /// The frame's bytes on the wire.
    pub fn encode(&self) -> Vec<u8> {
        let (kind, payload): (u8, Vec<u8>) = match self {
            Frame::Hello { cols, rows } => (HELLO, size_bytes(*cols, *rows)),
            Frame::Input(bytes) => (INPUT, bytes.clone()),
            Frame::Resize { cols, rows } => (RESIZE, size_bytes(*cols, *rows)),
            Frame::Output(bytes) => (OUTPUT, bytes.clone()),
            Frame::Bye(text) => (BYE, text.as_bytes().to_vec()),
        };
        let len = u32::try_from(payload.len()).unwrap_or(u32::MAX);
        let mut out = Vec::with_capacity(5 + payload.len());
        out.push(kind);
        out.extend_from_slice(&len.to_be_bytes());
        out.extend_from_slice(&payload);
        out
    }
}

fn size_bytes(cols: u16, rows: u16) -> Vec<u8> {
    let mut out = cols.to_be_bytes().to_vec();
    out.extend_from_slice(&rows.to_be_bytes());
    out
}

fn size_of(payload: &[u8]) -> Result<(u16, u16), WireError> {
    match payload {
        [c0, c1, r0, r1] => Ok((
            u16::from_be_bytes([*c0, *c1]),
            u16::from_be_bytes([*r0, *r1]),
        )),
        other => Err(WireError::BadSize(other.len())),
    }
}

/// Frames out of a byte stream that arrives in pieces of any size.
#[derive(Debug, Default)]
pub struct Decoder {
    pending: Vec<u8>,
}

impl Decoder {
    /// Adds bytes as they were read.
    pub fn push(&mut self, bytes: &[u8]) {
        self.pending.extend_from_slice(bytes);
    }

    /// The next whole frame, `None` until one has arrived; an error ends the stream.
    pub fn next_frame(&mut self) -> Option<Result<Frame, WireError>> {
        let header: [u8; 5] = self.pending.get(..5)?.try_into().ok()?;
        let len = u32::from_be_bytes([header[1], header[2], header[3], header[4]]) as usize;
        if len > MAX_PAYLOAD {
            return Some(Err(WireError::TooLong(len)));
        }
        let payload = self.pending.get(5..5 + len)?.to_vec();
        self.pending.drain(..5 + len);
        Some(decode(header[0], payload))
    }
}

fn decode(kind: u8, payload: Vec<u8>) -> Result<Frame, WireError> {
    Ok(match kind {
        HELLO => {
            let (cols, rows) = size_of(&payload)?;
            Frame::Hello { cols, rows }
        }
        INPUT => Frame::Input(payload),
        RESIZE => {
            let (cols, rows) = size_of(&payload)?;
            Frame::Resize { cols, rows }
        }
        OUTPUT => Frame::Output(payload),
        BYE => Frame::Bye(String::from_utf8_lossy(&payload).into_owned()),
        other => return Err(WireError::UnknownKind(other)),
    })
}

/// Takes the dashboard's detach requests out of its output, split across reads or not (bytes
/// that may start one are held back).
#[derive(Debug, Default)]
pub struct DetachScanner {
    held: Vec<u8>,
}

impl DetachScanner {
    /// The output to pass on, and how many detach requests were in it.
    pub fn scan(&mut self, bytes: &[u8]) -> (Vec<u8>, usize) {
        let mut input = std::mem::take(&mut self.held);
        input.extend_from_slice(bytes);
        let mut out = Vec::with_capacity(input.len());
        let mut requests = 0;
        let mut at = 0;
        while at < input.len() {
            let rest = &input[at..];
            if rest.starts_with(DETACH_REQUEST) {
                requests += 1;
                at += DETACH_REQUEST.len();
            } else if DETACH_REQUEST.starts_with(rest) {
                self.held = rest.to_vec();
                break;
            } else {
                out.push(input[at]);
                at += 1;
            }
        }
        (out, requests)
    }
}

/// Where the client's detach key is in what its keyboard sent: the keys before it go on.
pub fn split_at_detach_key(keys: &[u8]) -> (&[u8], bool) {
    match keys.iter().position(|b| *b == DETACH_KEY) {
        Some(at) => (&keys[..at], true),
        None => (keys, false),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_frame_comes_back_as_it_went_even_one_byte_at_a_time() {
        let frames = [
            Frame::Hello {
                cols: 120,
                rows: 40,
            },
            Frame::Input(b"q".to_vec()),
            Frame::Resize { cols: 300, rows: 2 },
            Frame::Output(vec![0x1b, b'[', b'H']),
            Frame::Output(Vec::new()),
            Frame::Bye("detached ✓".into()),
        ];
        let wire: Vec<u8> = frames.iter().flat_map(Frame::encode).collect();
        let mut decoder = Decoder::default();
        let mut seen = Vec::new();
        for byte in wire {
            decoder.push(&[byte]);
            while let Some(frame) = decoder.next_frame() {
                seen.push(frame.expect("valid"));
            }
        }
        assert_eq!(seen, frames);
    }

    #[test]
    fn bad_frames_are_errors() {
        let cases: [(&[u8], WireError); 3] = [
            (&[99, 0, 0, 0, 0], WireError::UnknownKind(99)),
            (
                &[2, 0xff, 0xff, 0xff, 0xff],
                WireError::TooLong(u32::MAX as usize),
            ),
            (&[1, 0, 0, 0, 3, 1, 2, 3], WireError::BadSize(3)),
        ];
        for (bytes, want) in cases {
            let mut decoder = Decoder::default();
            decoder.push(bytes);
            assert_eq!(decoder.next_frame(), Some(Err(want)), "{bytes:?}");
        }
    }

    #[test]
    fn detach_requests_are_taken_out_wherever_the_reads_split_them() {
        let stream: Vec<u8> = [
            b"ab".as_slice(),
            DETACH_REQUEST,
            b"\x1b]9;x\x07c",
            DETACH_REQUEST,
        ]
        .concat();
        for split in 0..=stream.len() {
            let mut scanner = DetachScanner::default();
            let (mut out, mut n) = scanner.scan(&stream[..split]);
            let (more, m) = scanner.scan(&stream[split..]);
            out.extend(more);
            n += m;
            assert_eq!(out, b"ab\x1b]9;x\x07c", "split at {split}");
            assert_eq!(n, 2, "split at {split}");
        }
    }

    #[test]
    fn a_prefix_that_turns_out_to_be_something_else_is_passed_on() {
        let mut scanner = DetachScanner::default();
        assert_eq!(scanner.scan(b"x\x1b]53"), (b"x".to_vec(), 0));
        assert_eq!(scanner.scan(b"q"), (b"\x1b]53q".to_vec(), 0));
    }

    #[test]
    fn the_detach_key_cuts_the_keys() {
        let cases: [(&[u8], &[u8], bool); 4] = [
            (b"abc", b"abc", false),
            (b"ab\x1ccd", b"ab", true),
            (b"\x1c", b"", true),
            (b"", b"", false),
        ];
        for (keys, before, found) in cases {
            assert_eq!(split_at_detach_key(keys), (before, found), "{keys:?}");
        }
    }
}
