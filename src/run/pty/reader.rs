//! One thread reads every agent's terminal: the masters wait in one epoll set, and each wakeup
//! reads every ready terminal before handing the engine the whole wakeup's output (a thread per
//! agent woke the engine per burst: #29). Output within [`HOLD`] of the last delivery waits for
//! the hold's end, so a busy fleet costs one engine turn per hold; after small reads the hold is
//! slept through, after a large one reading goes on (an agent filling its terminal would wait
//! every hold). [`HOLD_MOST`] waiting bytes end the hold.
//!
//! Per terminal, order holds (its end after all its output), and a report with no room waits
//! here with its terminal out of the set (retried every [`RETRY`]), so a flooding agent blocks
//! on its own terminal; other terminals go on. A gone receiver ends its terminals' reading. The
//! masters stay blocking (the writer shares their open file).

use std::collections::{HashMap, VecDeque};
use std::io;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use super::PtyEvent;
use crate::run::jobs::{self, NotQueued, NotSent, Outbox};
use filedescriptor::FileDescriptor;
use rustix::buffer::spare_capacity;
use rustix::event::{EventfdFlags, Timespec, epoll, eventfd};
use rustix::fd::OwnedFd;

/// Most bytes one read takes from one terminal.
const READ_MAX: usize = 64 * 1024;

/// Most ready terminals taken from one `epoll_wait`; more wait for the next.
const EVENTS_MAX: usize = 256;

/// How often reports a full channel refused are offered again: 5 ms.
const RETRY: Timespec = Timespec {
    tv_sec: 0,
    tv_nsec: 5_000_000,
};

/// How long after a delivery the next waits, output meanwhile joining it; output after a quiet
/// spell goes at once.
const HOLD: Duration = Duration::from_millis(5);

/// Most bytes one terminal's waiting output reaches before the hold ends early.
const HOLD_MOST: usize = 256 * 1024;

/// Reads below this size since the last delivery let the hold sleep; a larger one may be an agent
/// filling its terminal, and the hold reads on.
const SMALL_READ: usize = 1024;

/// The epoll data of the doorbell that says terminals wait to be added.
const DOORBELL: u64 = 0;

/// A terminal handed to the reader.
struct Terminal {
    key: u64,
    master: Option<FileDescriptor>,
    reports: Outbox<PtyEvent>,
    /// Reports not sent yet, oldest first: output read since the last delivery, and the end.
    waiting: VecDeque<PtyEvent>,
}

/// What the spawners share with the reader thread.
struct Shared {
    epoll: OwnedFd,
    doorbell: OwnedFd,
    /// Terminals handed over since the thread last looked, each with its token.
    incoming: Mutex<Vec<(u64, Terminal)>>,
    /// The next terminal's token (0 is the doorbell's).
    next_token: Mutex<u64>,
}

/// The process's reader, started with the first terminal.
static READER: Mutex<Option<Arc<Shared>>> = Mutex::new(None);

/// Reads `master` from now on: `PtyEvent::Output`, then `PtyEvent::Closed` to `reports`.
pub(super) fn watch(master: FileDescriptor, key: u64, reports: Outbox<PtyEvent>) -> io::Result<()> {
    let shared = reader()?;
    let token = {
        let mut next = shared
            .next_token
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        *next += 1;
        *next
    };
    let terminal = Terminal {
        key,
        master: Some(master),
        reports,
        waiting: VecDeque::new(),
    };
    shared
        .incoming
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .push((token, terminal));
    rustix::io::write(&shared.doorbell, &1u64.to_ne_bytes())?;
    Ok(())
}

/// The running reader, started on first use.
fn reader() -> io::Result<Arc<Shared>> {
    let mut reader = READER.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(shared) = reader.as_ref() {
        return Ok(Arc::clone(shared));
    }
    let epoll = epoll::create(epoll::CreateFlags::CLOEXEC)?;
    let doorbell = eventfd(0, EventfdFlags::CLOEXEC | EventfdFlags::NONBLOCK)?;
    add_to_set(&epoll, &doorbell, DOORBELL)?;
    let shared = Arc::new(Shared {
        epoll,
        doorbell,
        incoming: Mutex::new(Vec::new()),
        next_token: Mutex::new(DOORBELL),
    });
    let thread_shared = Arc::clone(&shared);
    jobs::spawn_thread("pty-read", move || Reader::new(thread_shared).run())?;
    *reader = Some(Arc::clone(&shared));
    Ok(shared)
}

/// The reader thread's state.
struct Reader {
    shared: Arc<Shared>,
    terminals: HashMap<u64, Terminal>,
    /// Terminals out of the set until their waiting reports are sent.
    stalled: Vec<u64>,
    buf: Vec<u8>,
    /// The largest read since the last delivery.
    largest_read: usize,
}

impl Reader {
    fn new(shared: Arc<Shared>) -> Reader {
        Reader {
            shared,
            terminals: HashMap::new(),
            stalled: Vec::new(),
            buf: vec![0; READ_MAX],
            largest_read: 0,
        }
    }

    fn run(mut self) {
        let mut events: Vec<epoll::Event> = Vec::with_capacity(EVENTS_MAX);
        let mut touched: Vec<u64> = Vec::with_capacity(EVENTS_MAX);
        let mut delivered_at: Option<Instant> = None;
        // The last delivery's reads were all small.
        let mut small = false;
        loop {
            if let Err(error) = self.wait_and_read(delivered_at, small, &mut events, &mut touched) {
                self.give_up(&error);
                return;
            }
            if touched.is_empty() {
                // A hold slept through with nothing coming: the next output goes at once.
                delivered_at = None;
            } else {
                touched.sort_unstable();
                touched.dedup();
                for &token in &touched {
                    self.send(token);
                }
                touched.clear();
                delivered_at = Some(Instant::now());
                small = self.largest_read < SMALL_READ;
                self.largest_read = 0;
            }
            self.retry_stalled();
        }
    }

    /// Reads the next batch into `touched`, holding output that follows the last delivery until
    /// the hold's end (sleeping through it after small reads).
    fn wait_and_read(
        &mut self,
        delivered_at: Option<Instant>,
        small: bool,
        events: &mut Vec<epoll::Event>,
        touched: &mut Vec<u64>,
    ) -> io::Result<()> {
        let hold_end = delivered_at.map(|at| at + HOLD);
        if small && let Some(until) = hold_end.filter(|&end| end > Instant::now()) {
            return self.sleep_through_hold(until, events, touched);
        }
        let timeout = (!self.stalled.is_empty()).then_some(&RETRY);
        self.read_ready(events, touched, timeout)?;
        match hold_end {
            Some(until) if !touched.is_empty() => self.hold(until, events, touched),
            _ => Ok(()),
        }
    }

    /// Reads what arrives until `until`, or until a terminal has `HOLD_MOST` bytes waiting.
    fn hold(
        &mut self,
        until: Instant,
        events: &mut Vec<epoll::Event>,
        touched: &mut Vec<u64>,
    ) -> io::Result<()> {
        while let Some(left) = until.checked_duration_since(Instant::now())
            && !self.holds_most(touched)
        {
            let left = Timespec {
                tv_sec: 0,
                tv_nsec: i64::from(left.subsec_nanos()),
            };
            self.read_ready(events, touched, Some(&left))?;
        }
        Ok(())
    }

    /// Sleeps until `until`, then reads every terminal that is ready once.
    fn sleep_through_hold(
        &mut self,
        until: Instant,
        events: &mut Vec<epoll::Event>,
        touched: &mut Vec<u64>,
    ) -> io::Result<()> {
        if let Some(left) = until.checked_duration_since(Instant::now()) {
            std::thread::sleep(left);
        }
        let now = Timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        self.read_ready(events, touched, Some(&now))
    }

    /// Whether one of the `touched` terminals has `HOLD_MOST` bytes waiting.
    fn holds_most(&self, touched: &[u64]) -> bool {
        touched.iter().any(|token| {
            self.terminals.get(token).is_some_and(|terminal| {
                let waiting: usize = terminal
                    .waiting
                    .iter()
                    .map(|report| match report {
                        PtyEvent::Output { bytes } => bytes.len(),
                        _ => 0,
                    })
                    .sum();
                waiting >= HOLD_MOST
            })
        })
    }

    /// Waits up to `timeout` and reads every ready terminal once before anything is sent; those
    /// with reports go into `touched`.
    fn read_ready(
        &mut self,
        events: &mut Vec<epoll::Event>,
        touched: &mut Vec<u64>,
        timeout: Option<&Timespec>,
    ) -> io::Result<()> {
        events.clear();
        match epoll::wait(&self.shared.epoll, spare_capacity(events), timeout) {
            Ok(_) | Err(rustix::io::Errno::INTR) => {}
            Err(error) => return Err(error.into()),
        }
        for event in events.iter() {
            match event.data.u64() {
                DOORBELL => self.take_incoming(),
                token => {
                    if self.read(token) {
                        touched.push(token);
                    }
                }
            }
        }
        Ok(())
    }

    /// The terminals can no longer be waited for: each one's end is said.
    fn give_up(&mut self, error: &io::Error) {
        tracing::error!("cannot wait for the agents' terminals: {error}");
        *READER.lock().unwrap_or_else(PoisonError::into_inner) = None;
        let incoming = std::mem::take(
            &mut *self
                .shared
                .incoming
                .lock()
                .unwrap_or_else(PoisonError::into_inner),
        );
        let terminals = self.terminals.drain().chain(incoming);
        for (_, mut terminal) in terminals {
            if terminal.master.take().is_some() {
                terminal.waiting.push_back(PtyEvent::Closed);
            }
            for report in terminal.waiting {
                if terminal.reports.blocking_send(report).is_err() {
                    break;
                }
            }
        }
    }

    /// Adds the terminals handed over since the last look to the set.
    fn take_incoming(&mut self) {
        let mut count = [0u8; 8];
        // The doorbell's count only says "look"; a failed read leaves nothing to look at.
        let _ = rustix::io::read(&self.shared.doorbell, &mut count);
        let incoming = std::mem::take(
            &mut *self
                .shared
                .incoming
                .lock()
                .unwrap_or_else(PoisonError::into_inner),
        );
        for (token, mut terminal) in incoming {
            let added = terminal
                .master
                .as_ref()
                .map(|master| add_to_set(&self.shared.epoll, master, token));
            if let Some(Err(error)) = added {
                // Unreadable from the start: the terminal ends at once.
                tracing::warn!(key = terminal.key, "cannot watch the terminal: {error}");
                terminal.master = None;
                terminal.waiting.push_back(PtyEvent::Closed);
                self.terminals.insert(token, terminal);
                self.stalled.push(token);
                continue;
            }
            self.terminals.insert(token, terminal);
        }
    }

    /// One read of a ready terminal; whether it has reports to send.
    fn read(&mut self, token: u64) -> bool {
        let Some(terminal) = self.terminals.get_mut(&token) else {
            return false;
        };
        let Some(master) = terminal.master.as_ref() else {
            return false;
        };
        match rustix::io::read(master, &mut self.buf[..]) {
            Ok(0) => {}
            Ok(n) => {
                self.largest_read = self.largest_read.max(n);
                // Reads during a hold join the output already waiting: one report per hold.
                match terminal.waiting.back_mut() {
                    Some(PtyEvent::Output { bytes }) => bytes.extend_from_slice(&self.buf[..n]),
                    _ => terminal.waiting.push_back(PtyEvent::Output {
                        bytes: self.buf[..n].to_vec(),
                    }),
                }
                return true;
            }
            Err(rustix::io::Errno::INTR | rustix::io::Errno::AGAIN) => return false,
            // EIO once every process holding the terminal is gone.
            Err(_) => {}
        }
        // End of file: out of the set (closing ours would not), its end said after its output.
        if let Some(master) = terminal.master.take() {
            let _ = epoll::delete(&self.shared.epoll, &master);
        }
        terminal.waiting.push_back(PtyEvent::Closed);
        true
    }

    /// Sends what terminal `token` has waiting; stalls it on a full channel.
    fn send(&mut self, token: u64) {
        match self.flush(token) {
            Flushed::All => {}
            Flushed::Full => {
                if let Some(master) = self.terminals.get(&token).and_then(|t| t.master.as_ref()) {
                    let _ = epoll::delete(&self.shared.epoll, master);
                }
                self.stalled.push(token);
            }
            Flushed::Gone => self.forget(token),
        }
    }

    /// Offers the stalled terminals' reports again; those sent go back into the set.
    fn retry_stalled(&mut self) {
        if self.stalled.is_empty() {
            return;
        }
        let stalled = std::mem::take(&mut self.stalled);
        for token in stalled {
            match self.flush(token) {
                Flushed::All => {
                    let resumed = self
                        .terminals
                        .get(&token)
                        .and_then(|t| t.master.as_ref())
                        .map(|master| add_to_set(&self.shared.epoll, master, token));
                    if let Some(Err(error)) = resumed {
                        tracing::warn!("cannot watch the terminal again: {error}");
                        self.end_now(token);
                    }
                }
                Flushed::Full => self.stalled.push(token),
                Flushed::Gone => self.forget(token),
            }
        }
    }

    /// Ends a terminal that can no longer be read: its end waits to be said.
    fn end_now(&mut self, token: u64) {
        if let Some(terminal) = self.terminals.get_mut(&token) {
            terminal.master = None;
            terminal.waiting.push_back(PtyEvent::Closed);
            self.stalled.push(token);
        }
    }

    /// Sends terminal `token`'s reports in order as far as its channel takes them.
    fn flush(&mut self, token: u64) -> Flushed {
        let Some(terminal) = self.terminals.get_mut(&token) else {
            return Flushed::Gone;
        };
        while let Some(report) = terminal.waiting.pop_front() {
            match terminal.reports.try_send(report) {
                Ok(()) => {}
                Err(NotSent {
                    reason: NotQueued::Full,
                    report,
                }) => {
                    terminal.waiting.push_front(report);
                    return Flushed::Full;
                }
                Err(NotSent {
                    reason: NotQueued::Gone,
                    ..
                }) => return Flushed::Gone,
            }
        }
        if terminal.master.is_none() {
            return Flushed::Gone;
        }
        Flushed::All
    }

    /// Drops terminal `token`: its end was said, or nobody listens any more.
    fn forget(&mut self, token: u64) {
        if let Some(terminal) = self.terminals.remove(&token)
            && let Some(master) = terminal.master
        {
            let _ = epoll::delete(&self.shared.epoll, &master);
        }
    }
}

/// Adds `fd` to the epoll set, its readiness to read reported with `token`.
fn add_to_set(epoll: &OwnedFd, fd: impl rustix::fd::AsFd, token: u64) -> rustix::io::Result<()> {
    epoll::add(
        epoll,
        fd,
        epoll::EventData::new_u64(token),
        epoll::EventFlags::IN,
    )
}

/// How far `Reader::flush` got.
enum Flushed {
    /// Everything was sent; the terminal is still read.
    All,
    /// The channel is full; the rest waits.
    Full,
    /// The terminal is done with: its end was sent, or its receiver is gone.
    Gone,
}

#[cfg(test)]
#[path = "reader_tests.rs"]
mod tests;
