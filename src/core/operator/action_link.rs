//! One-time action links: a link that gives one answer to one waiting prompt, for a
//! notification (an ntfy action button, a chat message) when the web view runs.
//!
//! A link is its own proof: the prompt id, the answer and the expiry, signed with the web
//! view's key (HMAC-SHA256), so minting one needs no shared table between the engine (which
//! sends notifications) and the web server (which takes the links). The server keeps the
//! links already taken (`Spent`) until they expire, so each works once; a link for a prompt
//! that no longer waits is refused by the prompt-id path itself (a stale id).
//!
//! Pure: the key and the time are handed in.

use std::collections::HashMap;

use hmac::digest::KeyInit;
use hmac::{Hmac, Mac};
use sha2::Sha256;

/// How long a link works at most, when the prompt waits that long.
pub const LINK_LIFETIME_SECS: i64 = 60 * 60;

/// The secret a web view signs its links with (random, never written anywhere): a block of
/// SHA-256, HMAC's own key size.
#[derive(Clone)]
pub struct LinkKey([u8; 64]);

impl std::fmt::Debug for LinkKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("LinkKey(…)")
    }
}

/// What a link does: give `answer` to the prompt `prompt_id`, until `expires` (Unix seconds).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Action {
    pub prompt_id: String,
    pub answer: String,
    pub expires: i64,
}

/// Why a link was not taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum LinkRefused {
    #[error("the link is not one of this web view's (malformed or forged)")]
    Forged,
    #[error("the link expired")]
    Expired,
    #[error("the link was used already")]
    Spent,
}

/// The web view's links: where they point and how they are signed.
#[derive(Debug, Clone)]
pub struct ActionLinks {
    /// The web view's address, `http://127.0.0.1:8917`.
    pub base_url: String,
    pub key: LinkKey,
}

/// One link of a waiting prompt, as a notification carries it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct LinkOffer {
    pub answer: String,
    pub url: String,
}

impl LinkKey {
    pub fn new(bytes: [u8; 64]) -> LinkKey {
        LinkKey(bytes)
    }

    fn mac(&self, body: &str) -> String {
        let mut mac = <Hmac<Sha256> as KeyInit>::new(&self.0.into());
        mac.update(body.as_bytes());
        hex(&mac.finalize().into_bytes())
    }

    /// The token of `action`: `<prompt id, hex>.<answer>.<expires>.<signature>`.
    pub fn sign(&self, action: &Action) -> String {
        let body = format!(
            "{}.{}.{}",
            hex(action.prompt_id.as_bytes()),
            action.answer,
            action.expires
        );
        let signature = self.mac(&body);
        format!("{body}.{signature}")
    }

    /// The action `token` stands for, if this key signed it and it has not expired at `now`.
    pub fn open(&self, token: &str, now: i64) -> Result<Action, LinkRefused> {
        let (body, signature) = token.rsplit_once('.').ok_or(LinkRefused::Forged)?;
        if !same(self.mac(body).as_bytes(), signature.as_bytes()) {
            return Err(LinkRefused::Forged);
        }
        let mut parts = body.splitn(3, '.');
        let (Some(id), Some(answer), Some(expires)) = (parts.next(), parts.next(), parts.next())
        else {
            return Err(LinkRefused::Forged);
        };
        let prompt_id = unhex(id).ok_or(LinkRefused::Forged)?;
        let expires: i64 = expires.parse().map_err(|_| LinkRefused::Forged)?;
        if now >= expires {
            return Err(LinkRefused::Expired);
        }
        Ok(Action {
            prompt_id,
            answer: answer.to_string(),
            expires,
        })
    }
}

impl ActionLinks {
    /// One link per answer `answers` offers for `prompt_id`, working for `LINK_LIFETIME_SECS`
    /// from `now`.
    pub fn offers(&self, prompt_id: &str, answers: &[&str], now: i64) -> Vec<LinkOffer> {
        answers
            .iter()
            .map(|answer| {
                let action = Action {
                    prompt_id: prompt_id.to_string(),
                    answer: answer.to_string(),
                    expires: now + LINK_LIFETIME_SECS,
                };
                LinkOffer {
                    answer: answer.to_string(),
                    url: format!("{}/a/{}", self.base_url, self.key.sign(&action)),
                }
            })
            .collect()
    }
}

/// The links taken, each kept until it expires: a link works once.
#[derive(Debug, Default)]
pub struct Spent {
    taken: HashMap<String, i64>,
}

impl Spent {
    /// Whether `token` was taken already.
    pub fn is_spent(&self, token: &str) -> bool {
        self.taken.contains_key(token)
    }

    /// Takes `token` (already opened as `action`) at `now`; refused when it was taken before.
    pub fn take(&mut self, token: &str, action: &Action, now: i64) -> Result<(), LinkRefused> {
        self.taken.retain(|_, expires| *expires > now);
        if self.taken.contains_key(token) {
            return Err(LinkRefused::Spent);
        }
        self.taken.insert(token.to_string(), action.expires);
        Ok(())
    }
}

/// Compares two secrets in a time that does not depend on where they differ.
pub fn same(a: &[u8], b: &[u8]) -> bool {
    use subtle::ConstantTimeEq;
    a.len() == b.len() && bool::from(a.ct_eq(b))
}

pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex(text: &str) -> Option<String> {
    if !text.len().is_multiple_of(2) {
        return None;
    }
    let bytes: Option<Vec<u8>> = (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(text.get(i..i + 2)?, 16).ok())
        .collect();
    String::from_utf8(bytes?).ok()
}

#[cfg(test)]
#[path = "action_link_tests.rs"]
mod tests;
