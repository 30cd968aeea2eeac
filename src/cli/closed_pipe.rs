//! A closed standard output ends a printing command quietly, as it ends `cat` or `grep`.
//!
//! Rust starts every program with SIGPIPE ignored, so `println!` into a pipe whose reader left
//! (`herd explain … | head`) panics with a backtrace. Commands that only print put SIGPIPE
//! back to its default before they write: the kernel ends the process silently and the shell
//! sees 128+13, what `head` expects. Commands that hold agents or write into children's pipes
//! (`run`, the probes of `hosts check`, the ACP client) keep it ignored: a child that went away
//! must be an error they handle, not the end of herd.
//!
//! The only `unsafe` here is the one `signal` call, see below.
#![allow(unsafe_code)]

/// Restores SIGPIPE's default action (end the process, no message) for the rest of the run.
pub(crate) fn end_quietly_when_stdout_closes() {
    // SAFETY: `signal` with SIG_DFL installs no handler (no code runs on the signal), touches no
    // memory of ours, and is called before any thread that could race on dispositions writes.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}
