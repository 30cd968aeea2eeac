//! What the operator is told and in which words: the `notify` events, the ids of waiting
//! prompts, the one-time action links for them, the morning digest, the event that decided a verdict, times as people say them.

pub mod action_link;
pub mod clock_words;
pub mod deciding_event;
pub mod digest;
pub mod notify;
