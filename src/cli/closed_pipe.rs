//! A closed standard output ends a printing command quietly, as it ends `cat` or `grep`.
//!
//! Rust ignores SIGPIPE, so `println!` into a pipe whose reader left (`herd explain … | head`)
//! panics. Commands that only print restore its default before they write; commands that hold
//! agents or write into children's pipes keep it ignored: a child that went away is an error
//! they handle. The only `unsafe` here is the one `signal` call.
#![allow(unsafe_code)]

/// Restores SIGPIPE's default action (end the process, no message) for the rest of the run.
pub(crate) fn end_quietly_when_stdout_closes() {
    // SAFETY: `signal` with SIG_DFL installs no handler (no code runs on the signal), touches no
    // memory of ours, and is called before any thread that could race on dispositions writes.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}
