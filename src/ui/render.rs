//! Draws one frame from the batch's view and the settled state, with an open replay on top.
//! Takes `&` only.

use std::time::Instant;

use color_eyre::eyre::{Result, eyre};
use ratatui::Terminal;
use ratatui::backend::Backend;

use super::draw::{self, draw};
use super::model;
use super::settle::FrameLayout;
use super::state::UiState;
use crate::run::engine::BatchView;

/// Draws the dashboard laid out as `layout`.
pub fn draw_frame<B: Backend>(
    terminal: &mut Terminal<B>,
    batch: &dyn BatchView,
    state: &UiState,
    layout: &FrameLayout,
    now: Instant,
) -> Result<()>
where
    B::Error: std::error::Error + Send + Sync + 'static,
{
    let mut view = model::dashboard(batch, state, layout.area, now, &layout.panes);
    let replay = state.replay.as_deref();
    if replay.is_some() {
        view.status.keys = replay_keys();
    }
    terminal
        .draw(|f| {
            draw(f, &view);
            if let Some(replay) = replay {
                draw::replay(f, state.zoomed, &replay.view, now);
            }
            if state.no_color {
                draw::without_colours(f.buffer_mut());
            }
        })
        .map(|_| ())
        .map_err(|e| eyre!("cannot draw the dashboard: {e}"))
}

/// The status bar's keys while a replay is open (the player shows its own under the timeline).
pub fn replay_keys() -> Vec<(String, String)> {
    [
        ("q Esc", "back to the dashboard"),
        ("", "the run goes on meanwhile"),
    ]
    .iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect()
}
