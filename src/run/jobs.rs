//! Worker threads and their way back to the loop. `Outbox<T>` is a worker's sender, in its own
//! report type, converting into the receiver's inbox (`Outbox::map`), so a worker names no
//! receiver. `blocking_send` waits for room (a flooding agent is slowed down), `try_send` never.
//! Every thread starts here (`spawn_job`, `spawn_thread`): named, a panic logged with its name,
//! and a thread the system cannot give is a typed `CannotStart` with the work handed back.

use std::fmt;
use std::sync::Arc;
use std::sync::mpsc as std_mpsc;
use std::thread::{Builder, JoinHandle};

use tokio::sync::mpsc;

/// Why a report was not sent: its receiver is gone (the loop ended).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the receiver of the report is gone")]
pub struct Gone;

/// Why a report was not queued without waiting.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum NotQueued {
    #[error("the receiver's inbox is full")]
    Full,
    #[error("the receiver of the report is gone")]
    Gone,
}

/// A report `try_send` did not queue, and why.
#[derive(Debug, PartialEq, Eq)]
pub struct NotSent<T> {
    pub reason: NotQueued,
    pub report: T,
}

/// Where a worker's reports of type `T` go; cloning it gives another sender to the same inbox.
pub struct Outbox<T> {
    port: Arc<dyn Port<T>>,
}

impl<T> Clone for Outbox<T> {
    fn clone(&self) -> Self {
        Outbox {
            port: Arc::clone(&self.port),
        }
    }
}

impl<T> fmt::Debug for Outbox<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Outbox")
    }
}

impl<T: Send + 'static> Outbox<T> {
    /// The outbox whose reports go, as they are, to `sender`'s channel.
    pub fn new(sender: mpsc::Sender<T>) -> Outbox<T> {
        Outbox {
            port: Arc::new(sender),
        }
    }

    /// An outbox for reports of type `U`, each turned into a `T` by `convert` (tagged with what
    /// the receiver needs).
    pub fn map<U: 'static>(&self, convert: impl Fn(U) -> T + Send + Sync + 'static) -> Outbox<U> {
        Outbox {
            port: Arc::new(Mapped {
                inner: Arc::clone(&self.port),
                convert,
            }),
        }
    }
}

impl<T> Outbox<T> {
    /// Sends `report`, waiting for room: for worker threads only (async code must not block).
    pub fn blocking_send(&self, report: T) -> Result<(), Gone> {
        self.port.blocking_send(report)
    }

    /// Queues `report` if there is room now; a report not queued comes back with the reason.
    pub fn try_send(&self, report: T) -> Result<(), NotSent<T>> {
        let mut slot = Some(report);
        let queued = self.port.try_send_made(&mut || slot.take());
        match (queued, slot) {
            (Err(reason), Some(report)) => Err(NotSent { reason, report }),
            // Taken means queued: a port takes the report only once it holds a place for it.
            (Ok(()), _) | (Err(_), None) => Ok(()),
        }
    }
}

/// The system gave no thread (too many processes or threads, no memory).
#[derive(Debug, thiserror::Error)]
#[error("cannot start the thread {name}: {cause}")]
pub struct CannotStart {
    /// The thread's name.
    pub name: String,
    /// What the system said.
    pub cause: std::io::Error,
}

impl From<CannotStart> for std::io::Error {
    fn from(cannot: CannotStart) -> std::io::Error {
        std::io::Error::new(cannot.cause.kind(), cannot)
    }
}

/// A thread that could not start, and the work it was to do, handed back untouched.
pub struct NotStarted<W> {
    pub error: CannotStart,
    pub work: W,
}

impl<W> fmt::Debug for NotStarted<W> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("NotStarted")
            .field("error", &self.error)
            .finish_non_exhaustive()
    }
}

impl<W> fmt::Display for NotStarted<W> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.error.fmt(f)
    }
}

impl<W> std::error::Error for NotStarted<W> {}

impl<W> From<NotStarted<W>> for std::io::Error {
    fn from(not: NotStarted<W>) -> std::io::Error {
        not.error.into()
    }
}

/// A started thread's result, to be joined; or one done here already (`Job::done`).
#[derive(Debug)]
pub struct Job<R> {
    state: JobState<R>,
}

#[derive(Debug)]
enum JobState<R> {
    Running(JoinHandle<Option<R>>),
    Done(R),
}

impl<R> Job<R> {
    /// A job whose work was done here (its thread could not start).
    pub fn done(result: R) -> Job<R> {
        Job {
            state: JobState::Done(result),
        }
    }

    /// Whether the work has ended, for a caller that waits only so long (a job done here has).
    pub fn is_finished(&self) -> bool {
        match &self.state {
            JobState::Running(thread) => thread.is_finished(),
            JobState::Done(_) => true,
        }
    }

    /// Waits for the result; `None` when the work panicked.
    pub fn join(self) -> Option<R> {
        match self.state {
            JobState::Running(thread) => thread.join().ok().flatten(),
            JobState::Done(result) => Some(result),
        }
    }
}

/// Runs `work` on a thread named `name`; its result goes to `outbox`. Not joined.
pub fn spawn_job<T, W>(
    name: impl Into<String>,
    outbox: Outbox<T>,
    work: W,
) -> Result<(), NotStarted<W>>
where
    T: 'static,
    W: FnOnce() -> T + Send + 'static,
{
    start(Builder::new(), name.into(), work, move |work: W| {
        // The receiver gone (the run ended): nobody is left to tell.
        let _ = outbox.blocking_send(work());
    })
    .map(drop)
}

/// Runs `work` on a thread named `name`, to be joined (dropped, it runs on detached).
pub fn spawn_thread<R, W>(name: impl Into<String>, work: W) -> Result<Job<R>, NotStarted<W>>
where
    R: Send + 'static,
    W: FnOnce() -> R + Send + 'static,
{
    start(Builder::new(), name.into(), work, |work: W| work())
}

/// Why work handed to `blocking` gave no result.
#[derive(Debug, thiserror::Error)]
pub enum Unfinished {
    #[error(transparent)]
    CannotStart(#[from] CannotStart),
    #[error("the thread {name} panicked (its message is in the log)")]
    Panicked { name: String },
}

/// Runs `work` on a thread named `name` and awaits it (tokio's blocking pool names no thread).
pub async fn blocking<R, W>(name: impl Into<String>, work: W) -> Result<R, Unfinished>
where
    R: Send + 'static,
    W: FnOnce() -> R + Send + 'static,
{
    let name = name.into();
    let (tell, told) = tokio::sync::oneshot::channel();
    spawn_thread(name.clone(), move || drop(tell.send(work()))).map_err(|not| not.error)?;
    told.await.map_err(|_| Unfinished::Panicked { name })
}

/// Starts a thread named `name` doing `run(work)`; a thread that cannot start gives work back.
fn start<W, R>(
    builder: Builder,
    name: String,
    work: W,
    run: impl FnOnce(W) -> R + Send + 'static,
) -> Result<Job<R>, NotStarted<W>>
where
    W: Send + 'static,
    R: Send + 'static,
{
    let (hand, handed) = std_mpsc::sync_channel::<W>(1);
    let reported_as = name.clone();
    let spawned = builder.name(name.clone()).spawn(move || {
        let work = handed.recv().ok()?;
        Some(reporting_panics(&reported_as, || run(work)))
    });
    let thread = match spawned {
        Ok(thread) => thread,
        Err(cause) => {
            return Err(NotStarted {
                error: CannotStart { name, cause },
                work,
            });
        }
    };
    match hand.send(work) {
        Ok(()) => Ok(Job {
            state: JobState::Running(thread),
        }),
        // The thread waits for its work until it has it; gone before that, it died starting.
        Err(std_mpsc::SendError(work)) => Err(NotStarted {
            error: CannotStart {
                name,
                cause: std::io::Error::other("the thread ended before it took its work"),
            },
            work,
        }),
    }
}

/// Runs `run`; a panic is logged with the thread's `name`, then unwinds on.
fn reporting_panics<R>(name: &str, run: impl FnOnce() -> R) -> R {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(run)) {
        Ok(result) => result,
        Err(payload) => {
            tracing::error!(
                thread = name,
                "the thread panicked: {}",
                panic_text(&*payload)
            );
            std::panic::resume_unwind(payload)
        }
    }
}

/// What a panic said (its `&str` or `String` message).
fn panic_text(payload: &(dyn std::any::Any + Send)) -> &str {
    payload
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("(no message)")
}

/// The channel behind an outbox, whatever its receiver's type.
trait Port<T>: Send + Sync {
    fn blocking_send(&self, report: T) -> Result<(), Gone>;
    /// Takes a place in the inbox if there is one now, and only then calls `make` (`None` gives
    /// the place back): a report that finds no room is never taken.
    fn try_send_made(&self, make: &mut dyn FnMut() -> Option<T>) -> Result<(), NotQueued>;
}

impl<T: Send> Port<T> for mpsc::Sender<T> {
    fn blocking_send(&self, report: T) -> Result<(), Gone> {
        mpsc::Sender::blocking_send(self, report).map_err(|_| Gone)
    }

    fn try_send_made(&self, make: &mut dyn FnMut() -> Option<T>) -> Result<(), NotQueued> {
        let permit = self.try_reserve().map_err(|error| match error {
            mpsc::error::TrySendError::Full(()) => NotQueued::Full,
            mpsc::error::TrySendError::Closed(()) => NotQueued::Gone,
        })?;
        if let Some(report) = make() {
            permit.send(report);
        }
        Ok(())
    }
}

/// A port that converts each report before it goes into `inner`.
struct Mapped<T, F> {
    inner: Arc<dyn Port<T>>,
    convert: F,
}

impl<T, U, F: Fn(U) -> T + Send + Sync> Port<U> for Mapped<T, F> {
    fn blocking_send(&self, report: U) -> Result<(), Gone> {
        self.inner.blocking_send((self.convert)(report))
    }

    fn try_send_made(&self, make: &mut dyn FnMut() -> Option<U>) -> Result<(), NotQueued> {
        self.inner
            .try_send_made(&mut || make().map(|report| (self.convert)(report)))
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::time::{Duration, Instant};

    use super::*;

    #[derive(Debug, PartialEq)]
    enum Inbox {
        Tagged { key: u64, text: String },
    }

    /// Waits up to 10 s for `done`.
    fn wait_until(done: impl Fn() -> bool) -> bool {
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if done() {
                return true;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        done()
    }

    #[test]
    fn a_mapped_outbox_tags_each_report_on_its_way_in() {
        let (tx, mut rx) = mpsc::channel(4);
        let inbox = Outbox::new(tx);
        let seven = inbox.map(|text: &str| Inbox::Tagged {
            key: 7,
            text: text.to_string(),
        });
        seven.blocking_send("a").expect("sent");
        seven.try_send("b").expect("queued");
        let got: Vec<Inbox> = std::iter::from_fn(|| rx.try_recv().ok()).collect();
        assert_eq!(
            got,
            [
                Inbox::Tagged {
                    key: 7,
                    text: "a".into()
                },
                Inbox::Tagged {
                    key: 7,
                    text: "b".into()
                },
            ]
        );
    }

    #[test]
    fn blocking_send_waits_for_room_and_try_send_does_not() {
        let (tx, mut rx) = mpsc::channel::<u32>(1);
        let outbox = Outbox::new(tx).map(|n: u32| n * 10);
        outbox.blocking_send(1).expect("sent");
        // Refused through a map, the report comes back as it was given (not converted).
        assert_eq!(
            outbox.try_send(2),
            Err(NotSent {
                reason: NotQueued::Full,
                report: 2
            })
        );
        let sent = Arc::new(AtomicBool::new(false));
        let (worker, flag) = (outbox.clone(), Arc::clone(&sent));
        let waiting = std::thread::spawn(move || {
            let result = worker.blocking_send(3);
            flag.store(true, Ordering::SeqCst);
            result
        });
        // Still full: the worker waits (a worker that had not waited would be done by now).
        std::thread::sleep(Duration::from_millis(100));
        assert!(!sent.load(Ordering::SeqCst), "blocking_send did not wait");
        assert_eq!(rx.blocking_recv(), Some(10));
        assert!(wait_until(|| sent.load(Ordering::SeqCst)));
        assert_eq!(waiting.join().expect("joined"), Ok(()));
        assert_eq!(rx.blocking_recv(), Some(30));
    }

    #[test]
    fn a_job_reports_its_result_and_a_thread_is_joined_with_its_name() {
        let (tx, mut rx) = mpsc::channel(1);
        let outbox = Outbox::new(tx).map(|n: usize| n + 1);
        spawn_job("job-test", outbox, || 41).expect("started");
        assert_eq!(rx.blocking_recv(), Some(42));
        let named = spawn_thread("thread-test", || {
            std::thread::current().name().map(str::to_string)
        })
        .expect("started");
        assert_eq!(named.join(), Some(Some("thread-test".to_string())));
        assert!(Job::done(7).is_finished());
        assert_eq!(Job::done(7).join(), Some(7));
        let panicked = spawn_thread("panic-test", || -> u8 { panic!("on purpose") });
        assert_eq!(panicked.expect("started").join(), None);
    }

    #[test]
    fn a_thread_that_cannot_start_gives_its_work_back() {
        // A stack larger than the address space: the system refuses the thread.
        let huge = Builder::new().stack_size(1 << 50);
        let not = match start(huge, "huge-stack".into(), || 5, |work| work()) {
            Ok(_) => panic!("a thread with a 1 PiB stack started"),
            Err(not) => not,
        };
        assert_eq!(not.error.name, "huge-stack");
        assert_eq!((not.work)(), 5, "the work comes back untouched");
        let io: std::io::Error = not.error.into();
        assert!(
            io.to_string()
                .starts_with("cannot start the thread huge-stack: "),
            "{io}"
        );
    }

    #[test]
    fn blocking_work_is_awaited_and_its_panic_told() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("runtime");
        let done = runtime.block_on(blocking("blocking-test", || 6 * 7));
        assert_eq!(done.expect("done"), 42);
        let panicked = runtime.block_on(blocking("blocking-panic", || -> u8 {
            panic!("on purpose")
        }));
        let said = panicked.expect_err("panicked").to_string();
        assert!(said.contains("blocking-panic panicked"), "{said}");
    }

    #[test]
    fn a_panic_is_told_with_its_message() {
        let said = std::panic::catch_unwind(|| panic!("on purpose {}", 7)).expect_err("panicked");
        assert_eq!(panic_text(&*said), "on purpose 7");
        let said = std::panic::catch_unwind(|| panic!("literal")).expect_err("panicked");
        assert_eq!(panic_text(&*said), "literal");
        let said = std::panic::catch_unwind(|| std::panic::panic_any(5_u8)).expect_err("panicked");
        assert_eq!(panic_text(&*said), "(no message)");
        let unwound = std::panic::catch_unwind(|| reporting_panics("t", || panic!("again")));
        assert!(unwound.is_err(), "the panic goes on after it is reported");
        assert_eq!(reporting_panics("t", || 3), 3);
    }

    #[test]
    fn a_gone_receiver_is_reported() {
        let (tx, rx) = mpsc::channel::<u32>(1);
        let outbox = Outbox::new(tx);
        drop(rx);
        assert_eq!(outbox.blocking_send(1), Err(Gone));
        assert_eq!(
            outbox.try_send(1),
            Err(NotSent {
                reason: NotQueued::Gone,
                report: 1
            })
        );
    }
}
