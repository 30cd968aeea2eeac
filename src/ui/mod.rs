//! The full-screen dashboard of `herd run`: the queue, live panes of the running agents, waiting
//! prompts, and the keys that act on tasks. A face of the driver's loop (`serve::driver`), as
//! headless is: it reads the batch through `&dyn BatchView` and asks for what it wants as
//! `Command`s. A frame is laid out (`settle`), then `model` builds a view model that `draw`
//! renders, reading only.

pub mod act;
pub mod actions;
pub mod answer_target;
pub mod answers;
pub mod asks;
pub mod attempts;
pub mod dashboard;
pub mod details_box;
pub mod diff_view;
pub mod draw;
pub mod editors;
pub mod engine_events;
pub mod frame;
pub mod highlight;
pub mod keyboard;
pub mod keys;
pub mod layout;
pub mod model;
pub mod mouse;
pub mod notify;
pub mod numbers;
pub mod overlay;
pub mod pane;
pub mod prompt;
pub mod queue;
pub mod reads;
pub mod render;
pub mod search;
pub mod settle;
pub mod state;
pub mod status;
pub mod style;
pub mod takeover_keys;
pub mod text_fit;
pub mod tiles;

#[cfg(test)]
mod engine_message_tests;
#[cfg(test)]
mod engine_pane_tests;
#[cfg(test)]
mod engine_tests;
#[cfg(test)]
mod frames;
#[cfg(test)]
mod frames_fixtures;
#[cfg(test)]
mod frames_guard;
#[cfg(test)]
mod frames_structured;

pub use dashboard::run;
