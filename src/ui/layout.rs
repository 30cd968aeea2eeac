//! Where everything goes on the dashboard, as pure functions of the terminal size: the queue, the
//! selected task's details, the agent panes (one focused pane large, the others tiled below it),
//! and the status bar. The event loop and `draw` call the same functions, so a pane's PTY gets the
//! size the pane is drawn at (never less than `MIN_PTY_COLS` x `MIN_PTY_ROWS`).

use ratatui::layout::Rect;

/// Below this width the queue goes above the panes instead of beside them.
pub const WIDE_MIN_COLS: u16 = 100;
/// A tiled pane smaller than this (borders included) is not drawn; it is counted as hidden.
pub const MIN_TILE_COLS: u16 = 24;
pub const MIN_TILE_ROWS: u16 = 6;
/// The focused pane keeps at least this many rows before any tile is drawn below it.
pub const MIN_FOCUS_ROWS: u16 = 10;
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

/// `regions`, with the details under the queue (wide layout) `detail_rows` high, borders
/// included: never less than `DETAIL_ROWS`, never more than half the column. The panes do not
/// depend on it.
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

/// The pane rectangles: `slots[0]` is the focused pane, the rest are tiles in order; `hidden`
/// panes did not fit.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PanePlan {
    pub slots: Vec<Rect>,
    pub hidden: usize,
}

/// Lays out `count` panes in `area`: the focused one on top, the others tiled in a grid below
/// it. Zoomed, only the focused pane is drawn.
pub fn panes(area: Rect, count: usize, zoomed: bool) -> PanePlan {
    if count == 0 || area.width == 0 || area.height == 0 {
        return PanePlan {
            slots: Vec::new(),
            hidden: count,
        };
    }
    let others = count - 1;
    if others == 0 || zoomed || area.height < MIN_FOCUS_ROWS + MIN_TILE_ROWS {
        return PanePlan {
            slots: vec![area],
            hidden: others,
        };
    }
    let share = if others <= 3 { 35 } else { 45 };
    let tile_rows = (area.height * share / 100)
        .max(MIN_TILE_ROWS)
        .min(area.height - MIN_FOCUS_ROWS);
    let (focus, tiles) = split_rows(area, area.height - tile_rows);
    let (rows, cols) = grid(tiles.width, tiles.height, others);
    let capacity = usize::from(rows) * usize::from(cols);
    let shown = others.min(capacity);
    let mut slots = Vec::with_capacity(shown + 1);
    slots.push(focus);
    // Rows actually used: a grid with spare cells gives the tiles the full height.
    let used_rows = shown.div_ceil(usize::from(cols.max(1))) as u16;
    let row_spans = spans(tiles.y, tiles.height, used_rows.max(1));
    for (index, (y, height)) in row_spans.into_iter().enumerate() {
        let first = index * usize::from(cols);
        let in_row = shown.saturating_sub(first).min(usize::from(cols)) as u16;
        if in_row == 0 {
            break;
        }
        for (x, width) in spans(tiles.x, tiles.width, in_row) {
            slots.push(Rect::new(x, y, width, height));
        }
    }
    PanePlan {
        slots,
        hidden: others - shown,
    }
}

/// The grid (rows, cols) for `count` tiles in `width` x `height`: every tile at least the
/// minimum size, the shape whose tiles are the largest (a cell is about twice as tall as wide).
/// When not all fit, the densest grid the minimum size allows.
pub fn grid(width: u16, height: u16, count: usize) -> (u16, u16) {
    let max_rows = (height / MIN_TILE_ROWS).max(1);
    let max_cols = (width / MIN_TILE_COLS).max(1);
    let mut best: Option<(u16, (u16, u16))> = None;
    for rows in 1..=max_rows {
        let cols = count.div_ceil(usize::from(rows)).max(1);
        let Ok(cols) = u16::try_from(cols) else {
            continue;
        };
        if cols > max_cols {
            continue;
        }
        let score = (width / cols / 2).min(height / rows);
        if best.is_none_or(|(s, _)| score > s) {
            best = Some((score, (rows, cols)));
        }
    }
    best.map_or((max_rows, max_cols), |(_, shape)| shape)
}

/// `count` consecutive spans covering `len` cells from `start`, the first ones one cell larger
/// when it does not divide evenly.
fn spans(start: u16, len: u16, count: u16) -> Vec<(u16, u16)> {
    let count = count.max(1);
    let (base, extra) = (len / count, len % count);
    let mut at = start;
    (0..count)
        .map(|i| {
            let size = base + u16::from(i < extra);
            let span = (at, size);
            at += size;
            span
        })
        .collect()
}

fn split_rows(area: Rect, top_rows: u16) -> (Rect, Rect) {
    let top_rows = top_rows.min(area.height);
    let top = Rect {
        height: top_rows,
        ..area
    };
    let bottom = Rect {
        y: area.y + top_rows,
        height: area.height - top_rows,
        ..area
    };
    (top, bottom)
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

/// The size (rows, cols) of the PTY behind a pane drawn in `slot`: its inside, at least
/// `MIN_PTY_ROWS` x `MIN_PTY_COLS`.
pub fn pty_size(slot: Rect) -> (u16, u16) {
    let (rows, cols) = inner_size(slot);
    (rows.max(MIN_PTY_ROWS), cols.max(MIN_PTY_COLS))
}

/// The PTY size (rows, cols) an agent starts at so that it draws its first screen at the size
/// of its pane: the last slot when `panes` agents run (it among them; the panes go in start
/// order), at least `MIN_PTY_ROWS` x `MIN_PTY_COLS`. A pane that would be hidden gets the
/// smallest size, which is about what a tile gets when it shows up.
pub fn launch_size(area: Rect, zoomed: bool, panes: usize) -> (u16, u16) {
    let panes = panes.max(1);
    slot_pty_size(area, zoomed, panes, panes - 1)
}

/// The PTY size of pane `slot` (0: the focused one) when `panes` agents run; the smallest size
/// when that pane is hidden.
pub fn slot_pty_size(area: Rect, zoomed: bool, panes: usize, slot: usize) -> (u16, u16) {
    let plan = self::panes(regions(area, zoomed).panes, panes, zoomed);
    plan.slots
        .get(slot)
        .map_or((MIN_PTY_ROWS, MIN_PTY_COLS), |slot| pty_size(*slot))
}

/// How many panes there are once the next agent started: it joins the `running` ones while
/// there is room, else it takes the place of one that ends.
pub fn panes_after_next_start(running: usize, concurrency: usize) -> usize {
    (running + 1).min(concurrency).max(1)
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

    fn covers_without_overlap(plan: &PanePlan, within: Rect) {
        for (i, a) in plan.slots.iter().enumerate() {
            assert!(within.contains(a.as_position()), "{a:?} outside {within:?}");
            assert!(
                a.right() <= within.right() && a.bottom() <= within.bottom(),
                "{a:?}"
            );
            for b in &plan.slots[i + 1..] {
                assert!(!a.intersects(*b), "{a:?} overlaps {b:?}");
            }
        }
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
    fn one_pane_fills_the_region() {
        let plan = panes(area(82, 38), 1, false);
        assert_eq!(
            plan,
            PanePlan {
                slots: vec![area(82, 38)],
                hidden: 0
            }
        );
        assert_eq!(panes(area(82, 38), 0, false).slots, Vec::<Rect>::new());
    }

    #[test]
    fn the_focused_pane_is_large_and_the_others_are_tiled_below() {
        let within = area(78, 38);
        let plan = panes(within, 4, false);
        assert_eq!(plan.hidden, 0);
        assert_eq!(plan.slots[0], Rect::new(0, 0, 78, 25));
        assert_eq!(
            &plan.slots[1..],
            &[
                Rect::new(0, 25, 26, 13),
                Rect::new(26, 25, 26, 13),
                Rect::new(52, 25, 26, 13),
            ]
        );
        covers_without_overlap(&plan, within);
    }

    #[test]
    fn sixteen_agents_fit_on_a_large_screen() {
        let r = regions(area(200, 60), false);
        let plan = panes(r.panes, 16, false);
        assert_eq!(plan.hidden, 0);
        assert_eq!(plan.slots.len(), 16);
        covers_without_overlap(&plan, r.panes);
        for tile in &plan.slots[1..] {
            assert!(
                tile.width >= MIN_TILE_COLS && tile.height >= MIN_TILE_ROWS,
                "{tile:?}"
            );
        }
    }

    #[test]
    fn panes_that_do_not_fit_are_counted_as_hidden() {
        let plan = panes(area(80, 15), 6, false);
        assert_eq!(plan.slots.len(), 1, "too low for tiles");
        assert_eq!(plan.hidden, 5);
        let plan = panes(area(60, 30), 12, false);
        assert_eq!(plan.slots.len() + plan.hidden, 12);
        assert!(plan.hidden > 0);
        covers_without_overlap(&plan, area(60, 30));
    }

    #[test]
    fn grids_prefer_readable_tiles() {
        assert_eq!(grid(150, 24, 15), (3, 5));
        assert_eq!(grid(82, 13, 3), (1, 3));
        assert_eq!(grid(30, 6, 9), (1, 1), "only one fits");
    }

    #[test]
    fn spans_cover_the_length_exactly() {
        assert_eq!(spans(10, 82, 3), vec![(10, 28), (38, 27), (65, 27)]);
        assert_eq!(spans(0, 5, 5), vec![(0, 1), (1, 1), (2, 1), (3, 1), (4, 1)]);
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
