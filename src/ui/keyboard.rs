//! The terminal's events, read by a thread of their own and handed to the loop through a
//! channel. crossterm's `EventStream` spun on its reader's lock at every poll: a tenth of the
//! dashboard's CPU with a fleet running (#29).

use std::io;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use crossterm::event::Event;
use tokio::sync::mpsc;

/// How long the thread waits for input before it looks whether it was told to stop.
const LOOK_AGAIN: Duration = Duration::from_millis(100);

/// Room for events the loop has not taken yet (a paste is one event).
const WAITING_MAX: usize = 64;

/// The running reader; dropping it stops the thread (within `LOOK_AGAIN`).
pub struct Keyboard {
    events: mpsc::Receiver<io::Result<Event>>,
    stop: Arc<AtomicBool>,
}

impl Keyboard {
    /// Starts reading the terminal's events.
    pub fn start() -> io::Result<Keyboard> {
        let (sender, events) = mpsc::channel(WAITING_MAX);
        let stop = Arc::new(AtomicBool::new(false));
        let stop_seen = Arc::clone(&stop);
        crate::run::jobs::spawn_thread("keyboard", move || read_events(&sender, &stop_seen))?;
        Ok(Keyboard { events, stop })
    }

    /// The next event; `None` once the thread ended.
    pub async fn next(&mut self) -> Option<io::Result<Event>> {
        self.events.recv().await
    }
}

impl Drop for Keyboard {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// Sends the terminal's events until told to stop, nobody takes them, or a read fails (the error
/// is sent, and nothing after it).
fn read_events(sender: &mpsc::Sender<io::Result<Event>>, stop: &AtomicBool) {
    while !stop.load(Ordering::Relaxed) {
        let event = match crossterm::event::poll(LOOK_AGAIN) {
            Ok(false) => continue,
            Ok(true) => crossterm::event::read(),
            Err(error) => Err(error),
        };
        let failed = event.is_err();
        if sender.blocking_send(event).is_err() || failed {
            return;
        }
    }
}
