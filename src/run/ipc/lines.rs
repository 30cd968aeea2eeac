//! JSON-line framing: one message a line, read with a size limit, written in one write.

use std::io::{self, BufRead, Read, Write};

/// One line as read off a connection.
#[derive(Debug, PartialEq, Eq)]
pub enum LineRead {
    /// A line of at most the limit's bytes, its newline included when it had one.
    Line(Vec<u8>),
    /// The limit reached before a newline (`skip_rest_of_line`).
    TooLong,
    /// The peer closed its side, or the connection failed (a read time-out included).
    End,
}

/// Reads one line of at most `limit` bytes.
pub fn read_line(reader: &mut impl BufRead, limit: u64) -> LineRead {
    match read_line_or_error(reader, limit) {
        Ok(read) => read,
        Err(_) => LineRead::End,
    }
}

/// Reads one line of at most `limit` bytes; errors (time-outs included) told apart from an end.
pub fn read_line_or_error(reader: &mut impl BufRead, limit: u64) -> io::Result<LineRead> {
    let mut line = Vec::new();
    Ok(match reader.take(limit).read_until(b'\n', &mut line)? {
        0 => LineRead::End,
        _ if line.last() != Some(&b'\n') && line.len() as u64 >= limit => LineRead::TooLong,
        _ => LineRead::Line(line),
    })
}

/// Reads past the end of the current line; false when the connection ended first.
pub fn skip_rest_of_line(reader: &mut impl BufRead) -> bool {
    loop {
        let (used, ended) = match reader.fill_buf() {
            Ok([]) | Err(_) => return false,
            Ok(buffer) => match buffer.iter().position(|byte| *byte == b'\n') {
                Some(at) => (at + 1, true),
                None => (buffer.len(), false),
            },
        };
        reader.consume(used);
        if ended {
            return true;
        }
    }
}

/// Writes `line` and its newline in one write, and flushes.
pub fn write_line(writer: &mut impl Write, line: &str) -> io::Result<()> {
    let mut framed = Vec::with_capacity(line.len() + 1);
    framed.extend_from_slice(line.as_bytes());
    framed.push(b'\n');
    writer.write_all(&framed)?;
    writer.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_read_up_to_the_limit_and_a_longer_one_refused_then_skipped() {
        let mut reader = io::BufReader::new(&b"short\n0123456789abcdef\nnext\nlast"[..]);
        assert_eq!(
            read_line(&mut reader, 8),
            LineRead::Line(b"short\n".to_vec())
        );
        assert_eq!(read_line(&mut reader, 8), LineRead::TooLong);
        assert!(skip_rest_of_line(&mut reader));
        assert_eq!(
            read_line(&mut reader, 8),
            LineRead::Line(b"next\n".to_vec())
        );
        assert_eq!(read_line(&mut reader, 8), LineRead::Line(b"last".to_vec()));
        assert_eq!(read_line(&mut reader, 8), LineRead::End);
        assert!(!skip_rest_of_line(&mut reader));
    }

    #[test]
    fn a_line_is_written_with_its_newline() {
        let mut out = Vec::new();
        write_line(&mut out, r#"{"a":1}"#).expect("written");
        write_line(&mut out, "").expect("written");
        assert_eq!(out, b"{\"a\":1}\n\n");
    }
}
