//! The web view's files, built into the binary (no Node build step), and the small pages of a
//! one-time link, written on the server with every text escaped.

use axum::http::header;
use axum::response::{Html, IntoResponse, Response};

const INDEX: &str = include_str!("assets/index.html");
const SCRIPT: &str = include_str!("assets/app.js");
const STYLE: &str = include_str!("assets/app.css");

/// The headers every page of the web view gets: no framing, no sniffing, no referrer beyond
/// its own origin (a form posts its true `Origin` then, never `null`), and
/// scripts and styles of its own only.
pub(super) const SECURITY_HEADERS: [(&str, &str); 4] = [
    ("x-frame-options", "DENY"),
    ("x-content-type-options", "nosniff"),
    ("referrer-policy", "same-origin"),
    (
        "content-security-policy",
        "default-src 'self'; script-src 'self'; style-src 'self'; \
         frame-ancestors 'none'; form-action 'self'",
    ),
];

pub(super) async fn index() -> Response {
    Html(INDEX).into_response()
}

pub(super) async fn script() -> Response {
    (
        [(header::CONTENT_TYPE, "text/javascript; charset=utf-8")],
        SCRIPT,
    )
        .into_response()
}

pub(super) async fn style() -> Response {
    ([(header::CONTENT_TYPE, "text/css; charset=utf-8")], STYLE).into_response()
}

/// What a link's page says, and the button that carries out its answer (none once it cannot).
pub(super) struct LinkPage<'a> {
    pub heading: &'a str,
    pub lines: Vec<String>,
    /// What the prompt asks, shown as code.
    pub request: Option<&'a str>,
    pub button: Option<&'a str>,
}

/// A one-time link's page: a GET never answers (a chat app's preview would), its button
/// posts the answer.
pub(super) fn link_page(page: &LinkPage<'_>) -> String {
    let mut lines: String = page
        .lines
        .iter()
        .map(|line| format!("<p>{}</p>", escape(line)))
        .collect();
    if let Some(request) = page.request {
        lines.push_str(&format!("<code>{}</code>", escape(request)));
    }
    let form = page.button.map_or(String::new(), |label| {
        let class = if label == "Deny" { "deny" } else { "approve" };
        format!(
            "<form method=\"post\" class=\"buttons\"><button type=\"submit\" class=\"{class}\" \
             data-testid=\"link-answer\">{}</button></form>",
            escape(label)
        )
    });
    format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <meta name=\"referrer\" content=\"same-origin\"><title>herd</title>\
         <link rel=\"stylesheet\" href=\"/app.css\"></head><body><main>\
         <h1 data-testid=\"link-heading\">{}</h1><div class=\"prompt\">{lines}{form}</div>\
         </main></body></html>",
        escape(page.heading)
    )
}

pub(super) fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}
