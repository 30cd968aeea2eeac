//! What a run prints for the operator: event lines and the summary on stdout, notes on stderr. A
//! reader that goes away (`| head`, a closed terminal) ends only the printing: the run keeps
//! SIGPIPE ignored, so `EPIPE` ends that stream (noted once in `runs/herd.log`, where the lines
//! go on), never the run and never a panic.

use std::io::{self, Write};

/// One output stream of a run that stops printing, for good, at its first failed write.
#[derive(Debug)]
pub struct Console<W: Write> {
    out: W,
    /// `stdout` or `stderr`, for the log line that says printing stopped.
    name: &'static str,
    closed: bool,
}

impl Console<io::Stdout> {
    /// The run's standard output.
    pub fn stdout() -> Self {
        Console::new(io::stdout(), "stdout")
    }
}

impl<W: Write> Console<W> {
    pub fn new(out: W, name: &'static str) -> Self {
        Console {
            out,
            name,
            closed: false,
        }
    }

    /// `line` and a newline; into `runs/herd.log` once the stream is closed.
    pub fn line(&mut self, line: &str) {
        self.text(&format!("{line}\n"));
    }

    /// `text` as it is, flushed; into `runs/herd.log` once the stream is closed.
    pub fn text(&mut self, text: &str) {
        if !self.closed {
            let written = self
                .out
                .write_all(text.as_bytes())
                .and_then(|()| self.out.flush());
            match written {
                Ok(()) => return,
                Err(error) => {
                    self.closed = true;
                    tracing::warn!(
                        "{} is closed ({error}): printing stops, the run goes on; what it would \
                         have printed follows in this log",
                        self.name
                    );
                }
            }
        }
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            tracing::info!(target: "herd::printed", "{line}");
        }
    }

    /// Whether a write failed and printing stopped.
    pub fn is_closed(&self) -> bool {
        self.closed
    }
}

/// `line` on stderr, or into `runs/herd.log` when stderr is closed.
pub fn note(line: &str) {
    Console::new(io::stderr(), "stderr").line(line);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A writer whose reader left after `room` bytes.
    struct ClosingPipe {
        written: Vec<u8>,
        room: usize,
    }

    impl Write for ClosingPipe {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            if self.written.len() + buf.len() > self.room {
                return Err(io::Error::from(io::ErrorKind::BrokenPipe));
            }
            self.written.extend_from_slice(buf);
            Ok(buf.len())
        }

        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_closed_stream_stops_the_printing_for_good_without_an_error() {
        let pipe = ClosingPipe {
            written: Vec::new(),
            room: 14,
        };
        let mut console = Console::new(pipe, "stdout");
        console.line("first line");
        assert!(!console.is_closed());
        console.line("second line");
        assert!(console.is_closed());
        // Even a line that would fit again is not printed: the reader is gone.
        console.line("x");
        assert_eq!(console.out.written, b"first line\n");
        assert!(console.is_closed());
    }
}
