//! `herd replay`: recorded attempts played back. A streaming asciicast reader (`cast`), the
//! replayed terminal and its snapshots (`term`), an index of checkpoints for seeking in files of
//! any size (`seek`), the timeline of markers and idle gaps (`timeline`), the player's pure state
//! machine (`player`), the embeddable view and its drawing (`view`, `draw`), `--print` (`print`)
//! and the command itself (`cli`); `synth` writes synthetic recordings for tests and benchmarks.
//!
//! Everything but `cli` is free of terminals and clocks; only `seek` and `print` read files.

pub mod cast;
pub mod cli;
pub mod draw;
pub mod explain;
pub mod player;
pub mod print;
pub mod seek;
pub mod synth;
pub mod term;
pub mod timeline;
pub mod view;

pub use cli::replay;
pub use print::{resolve_cast, screen_at};
pub use view::{Handled, ReplayOptions, ReplayView};
