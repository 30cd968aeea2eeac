//! How the agent panes share the panes region: the focused pane large on top, the others tiled
//! in a grid below it. Pure geometry.

use ratatui::layout::Rect;

/// A tiled pane smaller than this (borders included) is not drawn; it is counted as hidden.
pub const MIN_TILE_COLS: u16 = 24;
pub const MIN_TILE_ROWS: u16 = 6;
/// The focused pane keeps at least this many rows before any tile is drawn below it.
pub const MIN_FOCUS_ROWS: u16 = 10;
/// The pane rectangles: `slots[0]` is the focused pane; `hidden` panes did not fit.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PanePlan {
    pub slots: Vec<Rect>,
    pub hidden: usize,
}

/// Lays out `count` panes in `area`. Zoomed, only the focused pane is drawn.
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

/// The grid (rows, cols) for `count` tiles in `width` x `height` whose tiles are the largest (a
/// cell is about twice as tall as wide); when not all fit, the densest the minimum size allows.
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

/// `count` consecutive spans covering `len` cells from `start`, the first ones one larger when
/// it does not divide evenly.
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

/// Splits `area` into its top `top_rows` rows and the rest.
pub(super) fn split_rows(area: Rect, top_rows: u16) -> (Rect, Rect) {
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
        // The panes region of a 200x60 screen.
        let within = Rect::new(60, 0, 140, 58);
        let plan = panes(within, 16, false);
        assert_eq!(plan.hidden, 0);
        assert_eq!(plan.slots.len(), 16);
        covers_without_overlap(&plan, within);
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
}
