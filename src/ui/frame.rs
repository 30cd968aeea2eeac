//! One frame of the dashboard, in the order that keeps drawing read-only: settle and lay out,
//! the loop carries out what the layout asks, then draw with `&` only.

use std::collections::HashSet;
use std::time::Instant;

use color_eyre::eyre::{Result, eyre};
use ratatui::Terminal;
use ratatui::backend::Backend;
use ratatui::layout::Rect;

use super::render;
use super::settle::{FrameLayout, settle};
use super::state::UiState;
use crate::run::engine::BatchView;

/// Settles the state and lays the frame out; its commands are for the loop to carry out before
/// drawing.
pub fn lay_out<B: Backend>(
    terminal: &Terminal<B>,
    batch: &dyn BatchView,
    state: &mut UiState,
    now: Instant,
) -> Result<FrameLayout>
where
    B::Error: std::error::Error + Send + Sync + 'static,
{
    let size = terminal
        .size()
        .map_err(|e| eyre!("cannot read the terminal size: {e}"))?;
    Ok(settle(
        batch,
        state,
        Rect::new(0, 0, size.width, size.height),
        now,
    ))
}

/// Draws a laid-out frame. Returns the tasks whose panes show (none under a replay).
pub fn draw<B: Backend>(
    terminal: &mut Terminal<B>,
    batch: &dyn BatchView,
    state: &mut UiState,
    layout: &FrameLayout,
    now: Instant,
) -> Result<HashSet<usize>>
where
    B::Error: std::error::Error + Send + Sync + 'static,
{
    render::draw_frame(terminal, batch, state, layout, now)?;
    match state.replay.as_mut() {
        Some(replay) => {
            replay.view.mark_drawn(now);
            Ok(HashSet::new())
        }
        None => Ok(layout.visible.iter().copied().collect()),
    }
}
