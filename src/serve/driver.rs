//! The one event loop every face of a batch runs (the dashboard, headless). It waits on the
//! signals, the face's input and its workers' replies, the engine's inbox, the control socket
//! and the next wakeup; reports go to `Engine::on_report`, control commands are answered, and
//! what the face asks goes as `Command`s through `Engine::apply`. A turn ends with
//! `Engine::on_tick`, the events shown by the face (and published to the control socket's
//! subscribers), then the face's frame laid out and drawn. A `Face` reads the batch through
//! `&dyn BatchView` only: it changes the engine only by asking.

use std::future::Future;
use std::sync::Arc;
use std::time::Instant;

use color_eyre::eyre::{Result, WrapErr};
use serde_json::json;
use tokio::signal::unix::{SignalKind, signal};
use tokio::sync::mpsc;

use crate::run::clock::Now;
use crate::run::engine::command::Command;
use crate::run::engine::control::ControlOutcome;
use crate::run::engine::inbox::EngineInbox;
use crate::run::engine::{BatchView, Engine, EngineEvent};
use crate::run::jobs::Outbox;
use crate::serve::control::{self, ControlLink, Request};
use crate::serve::web::{self, WebView};

/// Room for what a face's workers handed back and the loop has not taken yet.
const REPLIES_MAX: usize = 16;

/// A command a face asks for, with what the face keeps to be told its outcome (`Face::told`).
#[derive(Debug)]
pub struct Asked<N> {
    pub command: Command,
    pub note: N,
}

/// Why the run is to stop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// INT or TERM.
    Interrupt,
    /// HUP: the terminal closed.
    HangUp,
    /// `batch.stop` through the control socket.
    Asked,
}

/// One face of a batch, as the loop runs it: it reads the batch and says what it asks of it.
/// What a hook asks is carried out at once, in order, and each outcome handed to `told`.
pub trait Face {
    /// What the face's own source gives: keys, nothing.
    type Input;
    /// What the face keeps of a command it asked for, to be told its outcome.
    type Note;
    /// What its workers hand back through the outbox it gets at `start` (files read).
    type Reply: Send + 'static;

    /// The face's own next input; never ready when it has none.
    fn next_input(&mut self) -> impl Future<Output = Self::Input> {
        std::future::pending()
    }

    /// When the face wants a turn of its own (a frame, its clock), seen at `now`.
    fn next_wakeup(&mut self, _now: Instant) -> Option<Instant> {
        None
    }

    /// What it asks before the first turn (the first agents started).
    fn start(
        &mut self,
        batch: &dyn BatchView,
        replies: Outbox<Self::Reply>,
        now: Now,
    ) -> Asks<Self>;

    /// A turn woke for time alone.
    fn on_timer(&mut self, _now: Instant) {}

    /// Looks at a report of `task` before the engine takes it (its attempt may go with it).
    fn look(&mut self, _batch: &dyn BatchView, _report: &EngineInbox, _task: Option<usize>) {}

    /// What its own input, or a worker's reply, asks of the batch.
    fn on_input(&mut self, _batch: &dyn BatchView, _input: Input<Self>, _now: Now) -> Asks<Self> {
        Vec::new()
    }

    /// A control command was carried out (what it changed may show).
    fn on_control(&mut self) {}

    /// What stopping asks of the batch.
    fn on_stop(&mut self, batch: &dyn BatchView, stop: Stop, now: Now) -> Asks<Self>;

    /// What a command it asked for did.
    fn told(&mut self, _note: Self::Note, _outcome: &ControlOutcome, _now: Instant) {}

    /// Shows the engine's events (and the turn's end).
    fn show(&mut self, batch: &dyn BatchView, events: &[EngineEvent], now: Now) -> Result<()>;

    /// Whether the loop ends now.
    fn leaves(&self, batch: &dyn BatchView) -> bool;

    /// Lays out the face's frame when one is due; what the layout asks of the batch.
    fn lay_out(&mut self, _batch: &dyn BatchView, _now: Now) -> Asks<Self> {
        Vec::new()
    }

    /// Draws what it laid out; what losing the terminal asks of the batch.
    fn draw(&mut self, _batch: &dyn BatchView, _now: Now) -> Asks<Self> {
        Vec::new()
    }
}

/// What a face's hook asks of the batch.
pub type Asks<F> = Vec<Asked<<F as Face>::Note>>;

/// A face's own input, or what one of its workers handed back.
pub enum Input<F: Face + ?Sized> {
    Own(F::Input),
    Reply(F::Reply),
}

/// What woke a turn of the loop.
enum Woke<F: Face> {
    Stop(Stop),
    Face(Input<F>),
    /// The first report waiting; the others are taken with it.
    Report(Option<EngineInbox>),
    Control(Request),
    Timer,
}

/// The signals a run stops on, listened to for the whole run: a fresh listener per turn would
/// miss a signal that arrives while the loop is busy between two waits.
struct Signals {
    interrupt: tokio::signal::unix::Signal,
    terminate: tokio::signal::unix::Signal,
    hangup: tokio::signal::unix::Signal,
}

impl Signals {
    fn listen() -> Result<Signals> {
        let listen = |kind| signal(kind).wrap_err("cannot listen for signals");
        Ok(Signals {
            interrupt: listen(SignalKind::interrupt())?,
            terminate: listen(SignalKind::terminate())?,
            hangup: listen(SignalKind::hangup())?,
        })
    }
}

/// Runs `face` on the batch until it leaves, then waits (a moment at most) for the run's last
/// writes. When the loop fails, the run is abandoned (its agents killed, their tasks written
/// back as `retryable`) before the error is returned.
pub async fn run<F: Face>(engine: &mut Engine, driver: &mut Driver, face: &mut F) -> Result<()> {
    let outcome = drive(engine, driver, face).await;
    if let Err(error) = &outcome {
        tracing::error!("herd cannot go on: {error:#}");
        let reason = format!("{error:#}");
        // Abandoning carries out no effect that can fail.
        if let Err(error) = engine.apply(Command::Abandon { reason }, Now::read()) {
            tracing::error!("cannot abandon the run: {error:#}");
        }
    }
    outcome
}

async fn drive<F: Face>(engine: &mut Engine, driver: &mut Driver, face: &mut F) -> Result<()> {
    let mut signals = Signals::listen()?;
    let (replies, mut replied) = mpsc::channel(REPLIES_MAX);
    // The time of each turn, read once when it starts.
    let mut now = Now::read();
    let asked = face.start(engine.view(), Outbox::new(replies), now);
    carry_out(engine, face, asked, now)?;
    show(engine, driver, face, now)?;
    while !face.leaves(engine.view()) {
        let sources = (&mut signals, &mut replied);
        let woke = driver.wait(engine, face, sources, now.at).await;
        now = Now::read();
        driver.take(engine, face, woke, now)?;
        engine.on_tick(now)?;
        show(engine, driver, face, now)?;
        if face.leaves(engine.view()) {
            break;
        }
        let asked = face.lay_out(engine.view(), now);
        if !asked.is_empty() {
            carry_out(engine, face, asked, now)?;
            // Resizing panes can change what the detectors see (a prompt redrawn).
            show(engine, driver, face, now)?;
        }
        let asked = face.draw(engine.view(), now);
        carry_out(engine, face, asked, now)?;
    }
    // What the run leaves on disk is written before the face says its last.
    let now = Now::read();
    engine.settle_writes(now, crate::run::engine::LAST_WRITE_WAIT)?;
    show(engine, driver, face, now)
}

/// The engine's events since the last drain, published and shown.
fn show<F: Face>(engine: &mut Engine, driver: &mut Driver, face: &mut F, now: Now) -> Result<()> {
    let events = driver.drain(engine);
    face.show(engine.view(), &events, now)
}

/// Carries out what a face asked, and tells it what each command did.
fn carry_out<F: Face>(engine: &mut Engine, face: &mut F, asked: Asks<F>, now: Now) -> Result<()> {
    for Asked { command, note } in asked {
        let outcome = engine.apply(command, now)?;
        face.told(note, &outcome, now.at);
    }
    Ok(())
}

async fn sleep_until(at: Option<Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at.into()).await,
        None => std::future::pending::<()>().await,
    }
}

/// Where the web view runs, and whether this call started it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebStarted {
    pub url: String,
    pub login_url: String,
    pub started: bool,
    /// It listens on this machine only.
    pub local: bool,
}

impl WebStarted {
    fn of(web: &WebView, started: bool) -> WebStarted {
        WebStarted {
            url: web.url.clone(),
            login_url: web.login_url.clone(),
            started,
            local: web.addr.ip().is_loopback(),
        }
    }

    fn to_json(&self) -> serde_json::Value {
        json!({"url": self.url, "login_url": self.login_url, "started": self.started, "local": self.local})
    }
}

/// The loop's own sources: the engine's inbox and the control socket.
pub struct Driver {
    reports: mpsc::Receiver<EngineInbox>,
    control: Option<ControlLink>,
    /// The web view, once started (`--web`, `web.start`); it asks through the control link.
    web: Option<WebView>,
    /// `batch_done` was published and the batch has not started anything since.
    said_done: bool,
}

impl Driver {
    /// `control`: the run's control socket, when it has one.
    pub fn new(reports: mpsc::Receiver<EngineInbox>, control: Option<ControlLink>) -> Driver {
        Driver {
            reports,
            control,
            web: None,
            said_done: false,
        }
    }

    /// Where the run's web view listens, once started.
    pub fn web_url(&self) -> Option<&str> {
        self.web.as_ref().map(|web| web.url.as_str())
    }

    /// Starts the web view on `addr` (its default without), or says where it runs already;
    /// its one-time links go into the `notify` events from now on.
    pub fn start_web(
        &mut self,
        engine: &mut Engine,
        addr: Option<&str>,
    ) -> Result<WebStarted, String> {
        if let Some(web) = &self.web {
            return Ok(WebStarted::of(web, false));
        }
        let Some(link) = &self.control else {
            return Err("the web view needs the run's control socket, which it has not".into());
        };
        let addr = web::parse_addr(addr.unwrap_or(web::DEFAULT_ADDR)).map_err(|e| e.to_string())?;
        let view =
            web::start(addr, link.asker.clone(), link.events.clone()).map_err(|e| e.to_string())?;
        engine.set_action_links(view.links.clone());
        Ok(WebStarted::of(self.web.insert(view), true))
    }

    /// Waits for what wakes the next turn, seen from the last turn's time. In this order when
    /// several are ready: a signal, the face's input (the operator's key), then reports, so a
    /// fleet's output never keeps a key waiting for more than one turn of the loop.
    async fn wait<F: Face>(
        &mut self,
        engine: &Engine,
        face: &mut F,
        (signals, replied): (&mut Signals, &mut mpsc::Receiver<F::Reply>),
        now: Instant,
    ) -> Woke<F> {
        let wake = [engine.next_wakeup(now), face.next_wakeup(now)]
            .into_iter()
            .flatten()
            .min();
        let control = async {
            match self.control.as_mut() {
                Some(link) => link.requests.recv().await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            biased;
            _ = signals.interrupt.recv() => Woke::Stop(Stop::Interrupt),
            _ = signals.terminate.recv() => Woke::Stop(Stop::Interrupt),
            _ = signals.hangup.recv() => Woke::Stop(Stop::HangUp),
            input = face.next_input() => Woke::Face(Input::Own(input)),
            Some(reply) = replied.recv() => Woke::Face(Input::Reply(reply)),
            report = self.reports.recv() => Woke::Report(report),
            Some(request) = control => Woke::Control(request),
            () = sleep_until(wake) => Woke::Timer,
        }
    }

    /// Carries out what woke the turn.
    fn take<F: Face>(
        &mut self,
        engine: &mut Engine,
        face: &mut F,
        woke: Woke<F>,
        now: Now,
    ) -> Result<()> {
        let asked = match woke {
            Woke::Stop(stop) => face.on_stop(engine.view(), stop, now),
            Woke::Face(input) => face.on_input(engine.view(), input, now),
            Woke::Report(first) => {
                self.take_reports(engine, face, first, now)?;
                Vec::new()
            }
            Woke::Control(request) => {
                face.on_control();
                match self.handle(engine, request, now) {
                    true => face.on_stop(engine.view(), Stop::Asked, now),
                    false => Vec::new(),
                }
            }
            Woke::Timer => {
                face.on_timer(now.at);
                Vec::new()
            }
        };
        carry_out(engine, face, asked, now)
    }

    /// The reports waiting, taken together (each terminal's output in one piece:
    /// `engine::inbox::coalesce`), each fed to the engine after the face had a look at it.
    fn take_reports<F: Face>(
        &mut self,
        engine: &mut Engine,
        face: &mut F,
        first: Option<EngineInbox>,
        now: Now,
    ) -> Result<()> {
        // Take everything already waiting before drawing conclusions.
        let mut batch: Vec<EngineInbox> = first.into_iter().collect();
        while !batch.is_empty()
            && batch.len() < crate::run::engine::inbox::BATCH_MAX
            && let Ok(report) = self.reports.try_recv()
        {
            batch.push(report);
        }
        for report in crate::run::engine::inbox::coalesce(batch) {
            face.look(engine.view(), &report, engine.task_of_report(&report));
            engine.on_report(report, now)?;
        }
        Ok(())
    }

    /// Carries out a control command and answers it; whether it was `batch.stop`.
    fn handle(&mut self, engine: &mut Engine, request: Request, now: Now) -> bool {
        if let control::protocol::Method::WebStart { addr } = &request.command {
            let started = self.start_web(engine, addr.as_deref());
            let reply = started
                .map(|s| s.to_json())
                .map_err(|why| control::protocol::RpcError::new(control::protocol::REFUSED, why));
            let _ = request.reply.send(reply);
            return false;
        }
        let hello = self
            .control
            .as_ref()
            .map_or(serde_json::Value::Null, |c| c.hello.clone());
        let handled = control::handle::handle(engine, (request.command, request.by), &hello, now);
        // The caller may have gone; nothing to answer then.
        let _ = request.reply.send(handled.reply);
        handled.stop
    }

    /// The engine's events since the last drain, published to subscribers.
    pub fn drain(&mut self, engine: &mut Engine) -> Vec<EngineEvent> {
        let events = engine.drain_events();
        self.publish(engine, &events);
        events
    }

    fn publish(&mut self, batch: &dyn BatchView, events: &[EngineEvent]) {
        let Some(link) = &self.control else {
            return;
        };
        let mut lines: Vec<serde_json::Value> = Vec::new();
        if link.events.receiver_count() > 0 {
            lines.extend(
                events
                    .iter()
                    .filter_map(|e| control::events::to_json(batch, e)),
            );
        }
        let done = batch.is_done() && !batch.any_needs_input();
        if done && !self.said_done {
            lines.push(json!({"event": "batch_done", "exit_code": batch.exit_code()}));
        }
        self.said_done = done;
        for line in lines {
            let line: Arc<str> = control::protocol::event_line(&line).into();
            // No subscriber: nobody to tell.
            let _ = link.events.send(line);
        }
    }
}
