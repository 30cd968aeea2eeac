//! Where everything goes on the dashboard, as pure functions of the terminal size. The event
//! loop and `draw` call the same functions, so a pane's PTY gets the size it is drawn at.

use ratatui::layout::Rect;

use super::tiles::split_rows;
pub use super::tiles::{MIN_FOCUS_ROWS, MIN_TILE_COLS, MIN_TILE_ROWS, PanePlan, grid, panes};

/// Below this width the queue goes above the panes instead of beside them.
pub const WIDE_MIN_COLS: u16 = 100;
/// Rows of the selected task's details under the queue (wide layout).
pub const DETAIL_ROWS: u16 = 8;

/// The dashboard's regions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Regions {
    pub queue: Option<Rect>,
    pub detail: Option<Rect>,
    pub panes: Rect,
    pub status: Rect,
}

/// Splits the screen. Zoomed, the panes region takes everything but the status bar.
pub fn regions(area: Rect, zoomed: bool) -> Regions {
    regions_with_detail(area, zoomed, DETAIL_ROWS)
}

/// The width of the column that holds the queue and the details, in the wide layout.
pub fn side_width(area: Rect) -> Option<u16> {
    (area.width >= WIDE_MIN_COLS).then(|| (area.width * 35 / 100).clamp(34, 60))
}

/// `regions`, with the details under the queue `detail_rows` high: at least `DETAIL_ROWS`, at
/// most half the column.
pub fn regions_with_detail(area: Rect, zoomed: bool, detail_rows: u16) -> Regions {
    let status_rows = if area.height >= 8 { 2 } else { 1 }.min(area.height);
    let body = Rect {
        height: area.height - status_rows,
        ..area
    };
    let status = Rect {
        y: area.y + body.height,
        height: status_rows,
        ..area
    };
    if zoomed {
        return Regions {
            queue: None,
            detail: None,
            panes: body,
            status,
        };
    }
    if let Some(queue_cols) = side_width(area) {
        let left = Rect {
            width: queue_cols,
            ..body
        };
        let panes = Rect {
            x: body.x + queue_cols,
            width: body.width - queue_cols,
            ..body
        };
        let (queue, detail) = if left.height >= DETAIL_ROWS + 8 {
            let rows = detail_rows.clamp(DETAIL_ROWS, (left.height / 2).max(DETAIL_ROWS));
            let (q, d) = split_rows(left, left.height - rows);
            (q, Some(d))
        } else {
            (left, None)
        };
        Regions {
            queue: Some(queue),
            detail,
            panes,
            status,
        }
    } else {
        let queue_rows = (body.height / 3).clamp(5.min(body.height), 12);
        let (queue, panes) = split_rows(body, queue_rows);
        Regions {
            queue: Some(queue),
            detail: None,
            panes,
            status,
        }
    }
}

/// A pane's drawable inside (its border removed): the size its PTY gets, as (rows, cols).
pub fn inner_size(slot: Rect) -> (u16, u16) {
    (
        slot.height.saturating_sub(2).max(1),
        slot.width.saturating_sub(2).max(1),
    )
}

/// The smallest terminal an agent gets, however small its pane is drawn. Agents wrap their own
/// output to the terminal's width, and a completion marker or a permission dialog broken over
/// rows is not recognised; a small tile shows the part of the screen around the cursor instead.
pub const MIN_PTY_ROWS: u16 = 24;
pub const MIN_PTY_COLS: u16 = 72;

/// The PTY size (rows, cols) behind a pane drawn in `slot`, at least the minimum.
pub fn pty_size(slot: Rect) -> (u16, u16) {
    let (rows, cols) = inner_size(slot);
    (rows.max(MIN_PTY_ROWS), cols.max(MIN_PTY_COLS))
}

/// The PTY size an agent starts at so its first screen fits its pane: the last slot when `panes`
/// agents run; the smallest size for a pane that would be hidden.
pub fn launch_size(area: Rect, zoomed: bool, panes: usize) -> (u16, u16) {
    let panes = panes.max(1);
    slot_pty_size(area, zoomed, panes, panes - 1)
}

/// The PTY size of pane `slot` (0: the focused one) when `panes` agents run.
pub fn slot_pty_size(area: Rect, zoomed: bool, panes: usize, slot: usize) -> (u16, u16) {
    let plan = self::panes(regions(area, zoomed).panes, panes, zoomed);
    plan.slots
        .get(slot)
        .map_or((MIN_PTY_ROWS, MIN_PTY_COLS), |slot| pty_size(*slot))
}

/// How many panes there are once the next agent started.
pub fn panes_after_next_start(running: usize, concurrency: usize) -> usize {
    (running + 1).min(concurrency).max(1)
}

/// The sizes the next agents start at, entry `k` when `k` run (`set_launch_sizes`).
pub fn launch_sizes(area: Rect, zoomed: bool, max: usize) -> Vec<(u16, u16)> {
    (0..max)
        .map(|running| launch_size(area, zoomed, panes_after_next_start(running, max)))
        .collect()
}

/// The sizes the first `panes` agents start at when they start together.
pub fn first_launch_sizes(area: Rect, zoomed: bool, panes: usize) -> Vec<(u16, u16)> {
    (0..panes)
        .map(|slot| slot_pty_size(area, zoomed, panes, slot))
        .collect()
}

/// A box of at most `width` x `height` centred in `area`.
pub fn centered(area: Rect, width: u16, height: u16) -> Rect {
    let width = width.min(area.width);
    let height = height.min(area.height);
    Rect::new(
        area.x + (area.width - width) / 2,
        area.y + (area.height - height) / 2,
        width,
        height,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn area(w: u16, h: u16) -> Rect {
        Rect::new(0, 0, w, h)
    }

    #[test]
    fn wide_screens_put_the_queue_beside_the_panes() {
        let r = regions(area(120, 40), false);
        assert_eq!(r.status, Rect::new(0, 38, 120, 2));
        assert_eq!(r.queue, Some(Rect::new(0, 0, 42, 30)));
        assert_eq!(r.detail, Some(Rect::new(0, 30, 42, 8)));
        assert_eq!(r.panes, Rect::new(42, 0, 78, 38));
    }

    #[test]
    fn the_details_grow_to_half_the_column_and_leave_the_panes_alone() {
        let plain = regions(area(120, 40), false);
        let grown = regions_with_detail(area(120, 40), false, 14);
        assert_eq!(grown.queue, Some(Rect::new(0, 0, 42, 24)));
        assert_eq!(grown.detail, Some(Rect::new(0, 24, 42, 14)));
        assert_eq!(grown.panes, plain.panes);
        let capped = regions_with_detail(area(120, 40), false, 100);
        assert_eq!(capped.detail, Some(Rect::new(0, 19, 42, 19)));
        let small = regions_with_detail(area(120, 40), false, 3);
        assert_eq!(small, plain);
        assert_eq!(side_width(area(120, 40)), Some(42));
        assert_eq!(side_width(area(80, 24)), None);
    }

    #[test]
    fn narrow_screens_put_the_queue_above_the_panes() {
        let r = regions(area(80, 24), false);
        assert_eq!(r.queue, Some(Rect::new(0, 0, 80, 7)));
        assert_eq!(r.detail, None);
        assert_eq!(r.panes, Rect::new(0, 7, 80, 15));
        assert_eq!(r.status, Rect::new(0, 22, 80, 2));
    }

    #[test]
    fn zoom_gives_the_panes_everything_but_the_status_bar() {
        let r = regions(area(80, 24), true);
        assert_eq!((r.queue, r.detail), (None, None));
        assert_eq!(r.panes, Rect::new(0, 0, 80, 22));
        let plan = panes(r.panes, 5, true);
        assert_eq!(plan.slots, vec![r.panes]);
        assert_eq!(plan.hidden, 4);
    }

    #[test]
    fn agents_get_their_pane_size_but_never_less_than_a_small_terminal() {
        assert_eq!(pty_size(Rect::new(0, 0, 120, 40)), (38, 118));
        assert_eq!(pty_size(Rect::new(0, 0, 30, 8)), (24, 72));
    }

    #[test]
    fn agents_start_at_the_size_of_the_pane_they_get() {
        let screen = area(120, 40);
        // Alone: the whole panes region (78x38) without its border.
        assert_eq!(launch_size(screen, false, 1), (36, 76));
        let plan = panes(regions(screen, false).panes, 4, false);
        assert_eq!(launch_size(screen, false, 4), pty_size(plan.slots[3]));
        assert_eq!(launch_size(screen, false, 4), (MIN_PTY_ROWS, MIN_PTY_COLS));
        // Zoomed, a second agent is hidden: the smallest size.
        assert_eq!(launch_size(screen, true, 1), (36, 118));
        assert_eq!(launch_size(screen, true, 2), (MIN_PTY_ROWS, MIN_PTY_COLS));
        assert_eq!(panes_after_next_start(0, 4), 1);
        assert_eq!(panes_after_next_start(2, 4), 3);
        assert_eq!(panes_after_next_start(4, 4), 4, "it replaces one that ends");
        assert_eq!(panes_after_next_start(5, 2), 2, "after three ended");
        let sizes = launch_sizes(screen, false, 4);
        assert_eq!(sizes.len(), 4);
        assert_eq!(
            sizes[0],
            launch_size(screen, false, 1),
            "the first one alone"
        );
        assert_eq!(
            sizes[3],
            launch_size(screen, false, 4),
            "a fourth joins three"
        );
        // Starting together, the first gets the focused pane of the layout they share.
        let first = first_launch_sizes(screen, false, 4);
        assert_eq!(first[0], pty_size(plan.slots[0]));
        assert_eq!(first[1], pty_size(plan.slots[1]));
        assert_eq!(first.len(), 4);
    }

    #[test]
    fn tiny_terminals_do_not_panic() {
        for (w, h) in [(1, 1), (10, 3), (20, 7), (0, 0), (99, 9)] {
            let r = regions(area(w, h), false);
            let _ = panes(r.panes, 3, false);
            let _ = regions(area(w, h), true);
            let _ = centered(area(w, h), 60, 20);
        }
    }
}
