//! The web view's routes. Reads and answers go to the run's loop as control requests
//! (`ask`); every refusal is answered with what was wrong and recorded in the run's log
//! (`refuse`), never with a token in it.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;

use axum::Json;
use axum::Router;
use axum::extract::{ConnectInfo, Path, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::{get, post};
use futures_util::Stream;
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::sync::{broadcast, oneshot};

use super::access::{Refused, Session};
use super::page::{self, LinkPage};
use super::{Shared, random};
use crate::core::approval::AnsweredBy;
use crate::core::operator::action_link::{Action, LinkRefused, hex};
use crate::run::engine::api::ApiAnswer;
use crate::serve::control::Request;
use crate::serve::control::protocol::{Method, RpcError};

type WebState = State<Arc<Shared>>;

pub(super) fn router(shared: Arc<Shared>) -> Router {
    Router::new()
        .route("/", get(page::index))
        .route("/app.js", get(page::script))
        .route("/app.css", get(page::style))
        .route("/api/login", post(login))
        .route("/api/state", get(state))
        .route("/api/events", get(events))
        .route("/api/screen/{task}", get(screen))
        .route("/api/answer", post(answer))
        .route("/a/{token}", get(link_page).post(link_answer))
        .layer(axum::middleware::map_response(secure))
        .with_state(shared)
}

async fn secure(mut response: Response) -> Response {
    let headers = response.headers_mut();
    for (name, value) in page::SECURITY_HEADERS {
        headers.insert(name, HeaderValue::from_static(value));
    }
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

/// Refuses a request: `status` with `why` for the client, and a line in the run's log.
fn refuse(status: StatusCode, what: &str, why: &str) -> Response {
    tracing::warn!("web view: refused {what}: {why}");
    (status, Json(json!({ "error": why }))).into_response()
}

fn refused(what: &str, refusal: Refused) -> Response {
    let status = match refusal {
        Refused::NoSession | Refused::WrongToken => StatusCode::UNAUTHORIZED,
        Refused::TooManyFailures => StatusCode::TOO_MANY_REQUESTS,
        Refused::Csrf | Refused::ForeignOrigin => StatusCode::FORBIDDEN,
    };
    refuse(status, what, &refusal.to_string())
}

/// Asks the run's loop what `method` says, as the web view (answers recorded `"by": "web"`).
async fn ask(shared: &Shared, method: Method) -> Result<Value, RpcError> {
    let (reply, answer) = oneshot::channel();
    let request = Request {
        command: method,
        by: AnsweredBy::Web,
        reply,
    };
    let gone = || RpcError::new(-32603, "herd is ending: its loop is gone");
    shared.requests.send(request).map_err(|_| gone())?;
    answer.await.map_err(|_| gone())?
}

fn header(headers: &HeaderMap, name: impl header::AsHeaderName) -> Option<&str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

/// The value of the session cookie among the request's cookies.
fn cookie<'a>(shared: &Shared, headers: &'a HeaderMap) -> Option<&'a str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(name, _)| *name == shared.cookie)
        .map(|(_, value)| value)
}

/// Whether the request names no other origin than the web view's own.
fn same_origin(headers: &HeaderMap) -> Result<(), Refused> {
    let ok = super::access::origin_ok(
        header(headers, header::ORIGIN),
        header(headers, header::REFERER),
        header(headers, header::HOST),
    );
    ok.then_some(()).ok_or(Refused::ForeignOrigin)
}

/// The session of a read.
fn reader(shared: &Shared, headers: &HeaderMap) -> Result<Session, Refused> {
    let gate = shared.gate.lock().unwrap_or_else(|e| e.into_inner());
    gate.session(cookie(shared, headers)).cloned()
}

/// The session of a change: its origin, cookie and CSRF header.
fn changer(shared: &Shared, headers: &HeaderMap) -> Result<Session, Refused> {
    same_origin(headers)?;
    let gate = shared.gate.lock().unwrap_or_else(|e| e.into_inner());
    let csrf = header(headers, "x-herd-csrf");
    gate.session_for_change(cookie(shared, headers), csrf)
        .cloned()
}

#[derive(Deserialize)]
struct Login {
    token: String,
}

async fn login(
    State(shared): WebState,
    ConnectInfo(client): ConnectInfo<SocketAddr>,
    headers: HeaderMap,
    body: Option<Json<Login>>,
) -> Response {
    if let Err(refusal) = same_origin(&headers) {
        return refused("a login", refusal);
    }
    let token = body.map(|Json(login)| login.token).unwrap_or_default();
    let now = jiff::Timestamp::now().as_second();
    let (Ok(id), Ok(csrf)) = (random::<16>(), random::<16>()) else {
        return refuse(
            StatusCode::INTERNAL_SERVER_ERROR,
            "a login",
            "no random bytes",
        );
    };
    let fresh = || Session {
        id: hex(&id),
        csrf: hex(&csrf),
    };
    let signed = {
        let mut gate = shared.gate.lock().unwrap_or_else(|e| e.into_inner());
        gate.log_in(client.ip(), &token, now, fresh)
    };
    match signed {
        Ok(session) => {
            tracing::info!(client = %client.ip(), "web view: signed in");
            let cookie = format!(
                "{}={}; HttpOnly; SameSite=Strict; Path=/",
                shared.cookie, session.id
            );
            let mut response = Json(json!({ "csrf": session.csrf })).into_response();
            if let Ok(value) = HeaderValue::from_str(&cookie) {
                response.headers_mut().insert(header::SET_COOKIE, value);
            }
            response
        }
        Err(refusal) => refused(&format!("a login from {}", client.ip()), refusal),
    }
}

/// The batch as the page draws it: tasks, waiting prompts, the digest, the recent events.
async fn state(State(shared): WebState, headers: HeaderMap) -> Response {
    let session = match reader(&shared, &headers) {
        Ok(session) => session,
        Err(refusal) => return refused("a read of the batch", refusal),
    };
    let tasks = ask(&shared, Method::ListTasks { status: None }).await;
    let prompts = ask(&shared, Method::ListPrompts).await;
    let digest = ask(&shared, Method::Digest).await;
    let (Ok(tasks), Ok(prompts), Ok(digest)) = (tasks, prompts, digest) else {
        return refuse(StatusCode::SERVICE_UNAVAILABLE, "a read", "herd is ending");
    };
    let events: Vec<Arc<str>> = {
        let recent = shared.recent.lock().unwrap_or_else(|e| e.into_inner());
        recent.iter().cloned().collect()
    };
    Json(json!({
        "tasks": tasks["tasks"],
        "prompts": prompts["prompts"],
        "digest": digest["lines"],
        "events": events,
        "csrf": session.csrf,
    }))
    .into_response()
}

/// The run's events as they come (server-sent events), each line as the control socket
/// publishes it.
async fn events(State(shared): WebState, headers: HeaderMap) -> Response {
    if let Err(refusal) = reader(&shared, &headers) {
        return refused("the event stream", refusal);
    }
    let stream = event_stream(shared.events.subscribe());
    Sse::new(stream)
        .keep_alive(KeepAlive::default())
        .into_response()
}

fn event_stream(
    events: broadcast::Receiver<Arc<str>>,
) -> impl Stream<Item = Result<Event, Infallible>> {
    futures_util::stream::unfold(events, |mut events| async move {
        let data = match events.recv().await {
            // The server closes: the stream ends.
            Ok(line) if line.is_empty() => return None,
            Ok(line) => line.trim_end().to_string(),
            Err(broadcast::error::RecvError::Lagged(_)) => r#"{"event":"lagged"}"#.to_string(),
            Err(broadcast::error::RecvError::Closed) => return None,
        };
        Some((Ok(Event::default().data(data)), events))
    })
}

async fn screen(State(shared): WebState, headers: HeaderMap, Path(task): Path<String>) -> Response {
    if let Err(refusal) = reader(&shared, &headers) {
        return refused("a pane", refusal);
    }
    let method = Method::Screen {
        task_id: task,
        styled: true,
    };
    match ask(&shared, method).await {
        Ok(screen) => Json(screen).into_response(),
        Err(error) => {
            (StatusCode::NOT_FOUND, Json(json!({"error": error.message}))).into_response()
        }
    }
}

#[derive(Deserialize)]
struct Answer {
    prompt_id: String,
    answer: String,
}

/// The operator's answer from the page.
async fn answer(
    State(shared): WebState,
    headers: HeaderMap,
    body: Option<Json<Answer>>,
) -> Response {
    if let Err(refusal) = changer(&shared, &headers) {
        return refused("an answer", refusal);
    }
    let Some(Json(body)) = body else {
        return refuse(
            StatusCode::BAD_REQUEST,
            "an answer",
            "no {prompt_id, answer} given",
        );
    };
    give(&shared, &body.prompt_id, &body.answer).await
}

/// Gives `answer` to the prompt `prompt_id` through the loop, as any answer by id.
async fn give(shared: &Shared, prompt_id: &str, answer: &str) -> Response {
    let what = format!("an answer to {prompt_id}");
    let Some(parsed) = ApiAnswer::parse(answer) else {
        let why = format!("{answer:?} is not approve, approve_always or deny");
        return refuse(StatusCode::BAD_REQUEST, &what, &why);
    };
    let method = Method::Answer {
        prompt_id: prompt_id.to_string(),
        answer: parsed,
    };
    match ask(shared, method).await {
        Ok(done) => {
            tracing::info!(prompt_id, answer, "web view: answered");
            Json(done).into_response()
        }
        Err(error) => refuse(StatusCode::CONFLICT, &what, &error.message),
    }
}

/// The action a link stands for, if it is one of this web view's and has not expired.
fn open_link(shared: &Shared, token: &str) -> Result<Action, LinkRefused> {
    shared.key.open(token, jiff::Timestamp::now().as_second())
}

fn link_refused(why: &str, status: StatusCode) -> Response {
    tracing::warn!("web view: refused a one-time link: {why}");
    let page = LinkPage {
        heading: "Refused",
        lines: vec![why.to_string(), "Nothing was answered.".into()],
        request: None,
        button: None,
    };
    (status, Html(page::link_page(&page))).into_response()
}

/// A link's page: what it answers, and a button to answer. A GET never answers: a chat app
/// that previews the link must not approve anything.
async fn link_page(State(shared): WebState, Path(token): Path<String>) -> Response {
    let action = match open_link(&shared, &token) {
        Ok(action) => action,
        Err(refusal) => return link_refused(&refusal.to_string(), StatusCode::FORBIDDEN),
    };
    let spent = {
        let spent = shared.spent.lock().unwrap_or_else(|e| e.into_inner());
        spent.is_spent(&token)
    };
    if spent {
        return link_refused(&LinkRefused::Spent.to_string(), StatusCode::GONE);
    }
    let prompts = ask(&shared, Method::ListPrompts).await.unwrap_or_default();
    let waiting = prompts["prompts"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|p| p["prompt_id"] == action.prompt_id.as_str());
    let Some(prompt) = waiting else {
        let why = format!("prompt {} no longer waits", action.prompt_id);
        return link_refused(&why, StatusCode::GONE);
    };
    let label = answer_label(&action.answer);
    let page = LinkPage {
        heading: &format!("{label}?"),
        lines: vec![
            format!(
                "{} · attempt {}",
                prompt["task_id"].as_str().unwrap_or("?"),
                prompt["attempt"]
            ),
            prompt["guard"]["reason"]
                .as_str()
                .unwrap_or_default()
                .to_string(),
        ],
        request: prompt["request"].as_str(),
        button: Some(label),
    };
    Html(page::link_page(&page)).into_response()
}

/// A link's answer, once: spent before it is given, so two taps give one answer.
async fn link_answer(
    State(shared): WebState,
    headers: HeaderMap,
    Path(token): Path<String>,
) -> Response {
    if same_origin(&headers).is_err() {
        return link_refused(&Refused::ForeignOrigin.to_string(), StatusCode::FORBIDDEN);
    }
    let now = jiff::Timestamp::now().as_second();
    let taken = open_link(&shared, &token).and_then(|action| {
        let mut spent = shared.spent.lock().unwrap_or_else(|e| e.into_inner());
        spent.take(&token, &action, now).map(|()| action)
    });
    let action = match taken {
        Ok(action) => action,
        Err(LinkRefused::Spent) => {
            return link_refused(&LinkRefused::Spent.to_string(), StatusCode::GONE);
        }
        Err(refusal) => return link_refused(&refusal.to_string(), StatusCode::FORBIDDEN),
    };
    let method = Method::Answer {
        prompt_id: action.prompt_id.clone(),
        answer: match ApiAnswer::parse(&action.answer) {
            Some(answer) => answer,
            None => return link_refused("the link's answer is unknown", StatusCode::BAD_REQUEST),
        },
    };
    match ask(&shared, method).await {
        Ok(done) => {
            tracing::info!(
                prompt_id = action.prompt_id,
                answer = action.answer,
                "web view: answered by a one-time link"
            );
            let page = LinkPage {
                heading: "Answered",
                lines: vec![done["message"].as_str().unwrap_or("answered").to_string()],
                request: None,
                button: None,
            };
            Html(page::link_page(&page)).into_response()
        }
        Err(error) => link_refused(&error.message, StatusCode::GONE),
    }
}

fn answer_label(answer: &str) -> &'static str {
    match answer {
        "approve" => "Approve",
        "approve_always" => "Approve always",
        "deny" => "Deny",
        _ => "Answer",
    }
}
