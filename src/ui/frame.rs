//! One frame of the dashboard, in the order that keeps drawing read-only: settle the view state
//! and lay it out (`settle`), send the engine what the layout asks of it (running agents'
//! PTY sizes, the size the next agents start at), then draw with `&` only (`render`).

use std::collections::HashSet;
use std::time::Instant;

use color_eyre::eyre::{Result, eyre};
use ratatui::Terminal;
use ratatui::backend::Backend;
use ratatui::layout::Rect;

use super::render;
use super::settle::{FrameLayout, settle};
use super::state::UiState;
use crate::run::clock::Now;
use crate::run::engine::command::Command;
use crate::run::engine::{BatchView, Engine};

/// Lays out and draws a frame; returns the tasks whose panes are visible (their output
/// redraws).
pub fn frame<B: Backend>(
    terminal: &mut Terminal<B>,
    engine: &mut Engine,
    state: &mut UiState,
    now: Now,
) -> Result<HashSet<usize>>
where
    B::Error: std::error::Error + Send + Sync + 'static,
{
    let layout = lay_out(terminal, engine, state, now)?;
    draw(terminal, engine, state, &layout, now.at)
}

/// Settles the state for the terminal's size and sends the engine the layout's commands.
pub fn lay_out<B: Backend>(
    terminal: &Terminal<B>,
    engine: &mut Engine,
    state: &mut UiState,
    now: Now,
) -> Result<FrameLayout>
where
    B::Error: std::error::Error + Send + Sync + 'static,
{
    let size = terminal
        .size()
        .map_err(|e| eyre!("cannot read the terminal size: {e}"))?;
    let layout = settle(
        engine,
        state,
        Rect::new(0, 0, size.width, size.height),
        now.at,
    );
    apply(engine, &layout, now)?;
    Ok(layout)
}

/// Draws a laid-out frame; the replay open over it is marked drawn. Returns the tasks whose
/// panes show (none under a replay: their output changes nothing on screen).
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

/// Carries out what the layout asks of the engine: agents resized to their panes, the sizes
/// the next agents start at.
pub fn apply(engine: &mut Engine, layout: &FrameLayout, now: Now) -> Result<()> {
    for resize in &layout.resizes {
        let (task, rows, cols) = (resize.task, resize.rows, resize.cols);
        tracing::debug!(task, rows, cols, "pane resized");
        engine.apply(Command::ResizePane { task, rows, cols }, now)?;
    }
    if let Some(sizes) = &layout.launch_sizes {
        engine.apply(Command::SetLaunchSizes(sizes.clone()), now)?;
    }
    Ok(())
}
