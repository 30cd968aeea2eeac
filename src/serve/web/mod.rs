//! The web view (`herd run --web`, `herd web`): a small web app served from the herd process,
//! a face of the run like the dashboard and the control socket. It reads the batch and answers
//! prompts through the same requests as the control socket (`control::Request`, answers
//! recorded `"by": "web"`), so a stale prompt id is refused there as anywhere.
//!
//! Only the operator can answer: 127.0.0.1 unless told otherwise, a random token printed once
//! (also as a QR code) exchanged for a session cookie, CSRF tokens and Origin checks on every
//! change, failed logins limited (`access`), and one-time action links for notifications
//! (`core::operator::action_link`). Every refusal is recorded in the run's log, never with a
//! secret in it.
//!
//! The server runs on a thread of its own (`run::jobs`) with its own small runtime, so the
//! loop's one-thread runtime never waits on a browser.

mod access;
mod page;
mod routes;

use std::io;
use std::net::{SocketAddr, TcpListener};
use std::sync::{Arc, Mutex};

use tokio::sync::{broadcast, mpsc, oneshot};

use super::control::Request;
use crate::core::operator::action_link::{ActionLinks, LinkKey, Spent, hex};
use crate::run::jobs;

/// Where the web view listens unless told: this machine only.
pub const DEFAULT_ADDR: &str = "127.0.0.1:8917";
/// The recent events the page shows.
const RECENT_EVENTS: usize = 50;

/// A running web view; it stops when dropped.
pub struct WebView {
    /// Where it listens.
    pub addr: SocketAddr,
    /// `http://127.0.0.1:8917`
    pub url: String,
    /// The address with the token, to open once (`…/#token=…`: the fragment never reaches a
    /// server log).
    pub login_url: String,
    pub links: ActionLinks,
    stop: Option<oneshot::Sender<()>>,
}

impl Drop for WebView {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

/// What the routes share: the way to the loop, the gate, the spent links, the recent events.
struct Shared {
    requests: mpsc::UnboundedSender<Request>,
    events: broadcast::Sender<Arc<str>>,
    gate: Mutex<access::Gate>,
    spent: Mutex<Spent>,
    key: LinkKey,
    recent: Mutex<std::collections::VecDeque<Arc<str>>>,
    /// The session cookie's name: one per port, as cookies do not tell ports apart.
    cookie: String,
}

/// Why the web view did not start.
#[derive(Debug, thiserror::Error)]
pub enum WebError {
    #[error("cannot listen on {addr}: {source} (choose another with --web ADDR, e.g. 127.0.0.1:0)")]
    Bind { addr: String, source: io::Error },
    #[error("{0:?} is not an address to listen on (IP:PORT, e.g. 127.0.0.1:8917)")]
    BadAddr(String),
    #[error("cannot start the web view: {0}")]
    Start(io::Error),
}

/// Parses `--web ADDR`: `IP:PORT`, or a port alone on 127.0.0.1.
pub fn parse_addr(text: &str) -> Result<SocketAddr, WebError> {
    let text = text.trim();
    if let Ok(port) = text.parse::<u16>() {
        return Ok(SocketAddr::from(([127, 0, 0, 1], port)));
    }
    text.parse()
        .map_err(|_| WebError::BadAddr(text.to_string()))
}

/// Starts the web view on `addr`, asking the loop through `requests` and showing `events`.
pub fn start(
    addr: SocketAddr,
    requests: mpsc::UnboundedSender<Request>,
    events: broadcast::Sender<Arc<str>>,
) -> Result<WebView, WebError> {
    let listener = TcpListener::bind(addr).map_err(|source| WebError::Bind {
        addr: addr.to_string(),
        source,
    })?;
    listener.set_nonblocking(true).map_err(WebError::Start)?;
    let bound = listener.local_addr().map_err(WebError::Start)?;
    let token = hex(&random::<16>().map_err(WebError::Start)?);
    let key = LinkKey::new(random::<64>().map_err(WebError::Start)?);
    let url = format!("http://{bound}");
    let shared = Arc::new(Shared {
        requests,
        events,
        gate: Mutex::new(access::Gate::new(token.clone())),
        spent: Mutex::new(Spent::default()),
        key: key.clone(),
        recent: Mutex::new(std::collections::VecDeque::new()),
        cookie: format!("herd_{}", bound.port()),
    });
    let (stop, stopped) = oneshot::channel();
    let serving = jobs::spawn_thread("herd-web", move || serve(listener, shared, stopped));
    serving.map_err(|_| WebError::Start(io::Error::other("no thread")))?;
    tracing::info!(%url, "web view listening");
    Ok(WebView {
        addr: bound,
        login_url: format!("{url}/#token={token}"),
        links: ActionLinks {
            base_url: url.clone(),
            key,
        },
        url,
        stop: Some(stop),
    })
}

/// The server's thread: its runtime, the recent events kept, the routes served until stopped.
fn serve(listener: TcpListener, shared: Arc<Shared>, stopped: oneshot::Receiver<()>) {
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => return tracing::error!("web view: no runtime: {error}"),
    };
    runtime.block_on(async move {
        let listener = match tokio::net::TcpListener::from_std(listener) {
            Ok(listener) => listener,
            Err(error) => return tracing::error!("web view: cannot listen: {error}"),
        };
        tokio::spawn(keep_recent(shared.clone()));
        let app = routes::router(shared).into_make_service_with_connect_info::<SocketAddr>();
        let stopping = async {
            let _ = stopped.await;
        };
        if let Err(error) = axum::serve(listener, app)
            .with_graceful_shutdown(stopping)
            .await
        {
            tracing::error!("web view stopped: {error}");
        }
    });
}

/// Keeps the last `RECENT_EVENTS` events for the page's first look.
async fn keep_recent(shared: Arc<Shared>) {
    let mut events = shared.events.subscribe();
    loop {
        match events.recv().await {
            Ok(line) if line.is_empty() => return,
            Ok(line) => {
                let mut recent = shared.recent.lock().unwrap_or_else(|e| e.into_inner());
                if recent.len() >= RECENT_EVENTS {
                    recent.pop_front();
                }
                recent.push_back(line);
            }
            Err(broadcast::error::RecvError::Lagged(_)) => continue,
            Err(broadcast::error::RecvError::Closed) => return,
        }
    }
}

/// `N` random bytes from the operating system.
fn random<const N: usize>() -> io::Result<[u8; N]> {
    let mut bytes = [0u8; N];
    getrandom::fill(&mut bytes).map_err(|e| io::Error::other(e.to_string()))?;
    Ok(bytes)
}

/// The lines printed once when the web view starts: where it is, how to sign in (with a QR
/// code of the address and its token), and a warning when it listens beyond this machine.
pub fn announcement(url: &str, login_url: &str, local: bool) -> String {
    let mut text = format!(
        "herd: web view at {url}\nherd: open this once to sign in (it holds the token; keep it \
         private):\n  {login_url}\n"
    );
    if let Ok(code) = qrcode::QrCode::new(login_url.as_bytes()) {
        let art = code
            .render::<qrcode::render::unicode::Dense1x2>()
            .quiet_zone(true)
            .build();
        text.push_str(&art);
        text.push('\n');
    }
    if !local {
        text.push_str(&format!(
            "herd: WARNING: the web view at {url} listens beyond this machine, over plain \
             HTTP. Prefer the default (127.0.0.1) with an ssh tunnel \
             (ssh -L 8917:127.0.0.1:8917 HOST) or a private network such as Tailscale.\n"
        ));
    }
    text
}
