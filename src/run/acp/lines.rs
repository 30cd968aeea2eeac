//! The agent's stdout as lines, untrusted: an over-long line is skipped (reported), invalid UTF-8
//! replaced, the end reported once.

use std::io::{BufRead, BufReader, Read};

/// The longest line kept: ACP messages carry file contents and diffs, rarely more.
pub(super) const MAX_LINE_BYTES: usize = 8 * 1024 * 1024;

/// One thing read from the agent's stdout.
#[derive(Debug, PartialEq)]
pub(super) enum AgentLine {
    Line(String),
    /// A line over the cap, skipped; its first bytes for the record.
    Oversized {
        bytes: usize,
        head: String,
    },
}

/// Calls `each` for every line until the stream ends or `each` returns false.
pub(super) fn read_lines(input: impl Read, cap: usize, mut each: impl FnMut(AgentLine) -> bool) {
    let mut reader = BufReader::with_capacity(64 * 1024, input);
    let mut line: Vec<u8> = Vec::new();
    let mut skipped: Option<(usize, String)> = None;
    loop {
        let (consumed, ended) = match reader.fill_buf() {
            Ok([]) | Err(_) => break,
            Ok(buf) => {
                let newline = buf.iter().position(|&b| b == b'\n');
                let take = newline.map_or(buf.len(), |at| at + 1);
                let part = &buf[..newline.unwrap_or(buf.len())];
                match &mut skipped {
                    Some((bytes, _)) => *bytes += part.len(),
                    None if line.len() + part.len() > cap => {
                        let mut head = std::mem::take(&mut line);
                        head.extend_from_slice(&part[..part.len().min(200)]);
                        head.truncate(200);
                        let bytes = head.len().max(cap) + part.len();
                        skipped = Some((bytes, String::from_utf8_lossy(&head).into_owned()));
                    }
                    None => line.extend_from_slice(part),
                }
                (take, newline.is_some())
            }
        };
        reader.consume(consumed);
        if ended {
            let read = match skipped.take() {
                Some((bytes, head)) => AgentLine::Oversized { bytes, head },
                None => AgentLine::Line(
                    String::from_utf8_lossy(&std::mem::take(&mut line)).into_owned(),
                ),
            };
            if !each(read) {
                return;
            }
        }
    }
    if let Some((bytes, head)) = skipped {
        each(AgentLine::Oversized { bytes, head });
    } else if !line.is_empty() {
        each(AgentLine::Line(String::from_utf8_lossy(&line).into_owned()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(input: &[u8], cap: usize) -> Vec<AgentLine> {
        let mut out = Vec::new();
        read_lines(input, cap, |r| {
            out.push(r);
            true
        });
        out
    }

    #[test]
    fn long_lines_are_skipped_and_the_rest_read() {
        let mut input = b"{\"a\":1}\n".to_vec();
        input.extend(std::iter::repeat_n(b'x', 5000));
        input.extend(b"\nok\xff\nlast");
        let read = all(&input, 1000);
        assert_eq!(read[0], AgentLine::Line("{\"a\":1}".into()));
        assert!(
            matches!(&read[1], AgentLine::Oversized { bytes, head } if *bytes >= 5000 && head.len() == 200)
        );
        assert_eq!(read[2], AgentLine::Line("ok\u{fffd}".into()));
        assert_eq!(read[3], AgentLine::Line("last".into()));
        assert_eq!(read.len(), 4);
    }
}
