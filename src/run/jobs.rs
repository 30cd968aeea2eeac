//! Worker threads and their way back to the loop.
//!
//! `Outbox<T>` is the sender a worker gets for the reports it makes, in its own type (`T`: a
//! PTY's `PtyEvent`, the tasks file writer's `TasksFileWritten`, …): the receiver hands it out
//! already converting (and tagging) into its own inbox (`Outbox::map`), so a worker names
//! neither its receiver nor any other worker. Sending keeps the channel's semantics exactly:
//! `blocking_send` waits for room in the bounded channel (a flooding agent is slowed down, not
//! buffered), `try_send` never waits.
//!
//! This module knows no receiver and no worker; it must not import either.

use std::fmt;
use std::sync::Arc;

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

    /// An outbox for reports of type `U`, each turned into a `T` by `convert` (and so tagged
    /// with what the receiver needs to know, such as which attempt it is about) on its way into
    /// this one.
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
    /// Sends `report`, waiting for room in the inbox when it is full: the worker is slowed down
    /// to the receiver's pace. For worker threads only (it blocks, which async code must not).
    pub fn blocking_send(&self, report: T) -> Result<(), Gone> {
        self.port.blocking_send(report)
    }

    /// Queues `report` if there is room now; never waits.
    pub fn try_send(&self, report: T) -> Result<(), NotQueued> {
        self.port.try_send(report)
    }
}

/// The channel behind an outbox, whatever its receiver's type.
trait Port<T>: Send + Sync {
    fn blocking_send(&self, report: T) -> Result<(), Gone>;
    fn try_send(&self, report: T) -> Result<(), NotQueued>;
}

impl<T: Send> Port<T> for mpsc::Sender<T> {
    fn blocking_send(&self, report: T) -> Result<(), Gone> {
        mpsc::Sender::blocking_send(self, report).map_err(|_| Gone)
    }

    fn try_send(&self, report: T) -> Result<(), NotQueued> {
        mpsc::Sender::try_send(self, report).map_err(|error| match error {
            mpsc::error::TrySendError::Full(_) => NotQueued::Full,
            mpsc::error::TrySendError::Closed(_) => NotQueued::Gone,
        })
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

    fn try_send(&self, report: U) -> Result<(), NotQueued> {
        self.inner.try_send((self.convert)(report))
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
        assert_eq!(outbox.try_send(2), Err(NotQueued::Full));
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
    fn a_gone_receiver_is_reported() {
        let (tx, rx) = mpsc::channel::<u32>(1);
        let outbox = Outbox::new(tx);
        drop(rx);
        assert_eq!(outbox.blocking_send(1), Err(Gone));
        assert_eq!(outbox.try_send(1), Err(NotQueued::Gone));
    }
}
