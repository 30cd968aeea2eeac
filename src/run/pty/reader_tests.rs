// Test code: a failed `expect` is the test failing, with its message.
#![allow(clippy::expect_used)]

use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use portable_pty::{PtySize, native_pty_system};
use tokio::sync::mpsc;

use super::watch;
use crate::run::jobs::Outbox;
use crate::run::pty::PtyEvent;

/// What a test's channel carries: the terminal's key and its event, as the engine's outbox
/// tags them.
type Tagged = (u64, PtyEvent);

const PATIENCE: Duration = Duration::from_secs(20);

/// A terminal whose master the reader reads (reports to `reports` as `key`), and its slave side
/// opened for writing as an agent would.
fn terminal(key: u64, reports: mpsc::Sender<Tagged>) -> std::fs::File {
    let pty = native_pty_system()
        .openpty(PtySize {
            rows: 24,
            cols: 80,
            pixel_width: 0,
            pixel_height: 0,
        })
        .expect("openpty");
    let name = pty.master.tty_name().expect("tty name");
    let slave = std::fs::OpenOptions::new()
        .write(true)
        .open(&name)
        .expect("open the slave");
    // Raw output: the bytes arrive as written (no \n to \r\n).
    let mut termios = rustix::termios::tcgetattr(&slave).expect("tcgetattr");
    termios.make_raw();
    rustix::termios::tcsetattr(&slave, rustix::termios::OptionalActions::Now, &termios)
        .expect("tcsetattr");
    drop(pty.slave);
    let fd = pty.master.as_raw_fd().expect("master fd");
    let master = filedescriptor::FileDescriptor::dup(&fd).expect("dup");
    let outbox = Outbox::new(reports).map(move |event| (key, event));
    watch(master, key, outbox).expect("watch");
    slave
}

/// Takes reports of `key` until its `Closed`: the output joined, and how many reports came
/// after the end (none expected; the caller closes nothing else on this channel).
fn until_closed(rx: &mut mpsc::Receiver<Tagged>, key: u64) -> Vec<u8> {
    let deadline = Instant::now() + PATIENCE;
    let mut output = Vec::new();
    loop {
        match rx.try_recv() {
            Ok((k, PtyEvent::Output { bytes })) => {
                assert_eq!(k, key);
                output.extend_from_slice(&bytes);
            }
            Ok((k, PtyEvent::Closed)) => {
                assert_eq!(k, key);
                return output;
            }
            Ok(other) => panic!("unexpected report {other:?}"),
            Err(mpsc::error::TryRecvError::Empty) => {
                assert!(Instant::now() < deadline, "no end of the terminal");
                std::thread::sleep(Duration::from_millis(1));
            }
            Err(mpsc::error::TryRecvError::Disconnected) => panic!("the reader went away"),
        }
    }
}

#[test]
fn output_arrives_in_order_and_the_end_after_it() {
    let (tx, mut rx) = mpsc::channel(64);
    let mut slave = terminal(7, tx);
    let mut written = Vec::new();
    for i in 0..200 {
        let chunk = format!("line {i} ");
        slave.write_all(chunk.as_bytes()).expect("write");
        written.extend_from_slice(chunk.as_bytes());
    }
    drop(slave);
    assert_eq!(until_closed(&mut rx, 7), written);
    // Nothing after the end.
    std::thread::sleep(Duration::from_millis(20));
    assert!(rx.try_recv().is_err());
}

#[test]
fn a_full_channel_stops_its_terminal_and_loses_nothing() {
    const TOTAL: usize = 4 << 20;
    let (tx, mut rx) = mpsc::channel(1);
    let slave = terminal(3, tx);
    let written = Arc::new(AtomicUsize::new(0));
    let progress = Arc::clone(&written);
    let writer = std::thread::spawn(move || {
        let mut slave = slave;
        let pattern: Vec<u8> = (0..=255u8).cycle().take(TOTAL).collect();
        for chunk in pattern.chunks(4096) {
            slave.write_all(chunk).expect("write");
            progress.fetch_add(chunk.len(), Ordering::SeqCst);
        }
    });
    // Nobody takes the reports: the writer ends up blocked well short of the total (the reader
    // holds at most a read or two, the channel one report, the terminal its buffer).
    let deadline = Instant::now() + PATIENCE;
    let mut last = usize::MAX;
    loop {
        std::thread::sleep(Duration::from_millis(200));
        let now = written.load(Ordering::SeqCst);
        if now == last {
            break;
        }
        last = now;
        assert!(Instant::now() < deadline, "the writer never stopped");
    }
    assert!(last < TOTAL / 4, "{last} bytes written with nobody reading");
    assert!(!writer.is_finished());
    let output = until_closed(&mut rx, 3);
    writer.join().expect("writer");
    let expected: Vec<u8> = (0..=255u8).cycle().take(TOTAL).collect();
    assert!(
        output == expected,
        "{} bytes came, out of order or lost",
        output.len()
    );
}

#[test]
fn a_full_channel_does_not_stop_another_channels_terminal() {
    let (stuck_tx, _stuck_rx) = mpsc::channel(1);
    let stuck = terminal(1, stuck_tx);
    let flood = std::thread::spawn(move || {
        let mut stuck = stuck;
        // Blocks once the stuck channel and terminal are full; ends with an error when the
        // test drops the receiver at its end.
        while stuck.write_all(&[b'x'; 4096]).is_ok() {}
    });
    let (tx, mut rx) = mpsc::channel(64);
    let mut slave = terminal(2, tx);
    slave.write_all(b"still read").expect("write");
    drop(slave);
    assert_eq!(until_closed(&mut rx, 2), b"still read");
    drop(flood);
}
