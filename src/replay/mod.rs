//! `herd replay`: recorded attempts played back. A streaming asciicast reader (`cast`), the
//! replayed terminal and its snapshots (`term`), an index of checkpoints for seeking in files of
//! any size (`seek`), the timeline of markers and idle gaps (`timeline`), the player's pure state
//! machine (`player`), the embeddable view and its drawing (`view`, `draw`), `--print` (`print`);
//! `synth` writes synthetic recordings for tests and benchmarks.
//!
//! Never owns the user's terminal (the command that runs the player full-screen is
//! `cli::replay`);
//! only `seek`, `print` and `view::open` read files.

pub mod cast;
pub mod draw;
pub mod explain;
pub mod explain_acp;
pub mod player;
pub mod print;
pub mod seek;
pub mod synth;
pub mod term;
pub mod timeline;
pub mod view;

pub use print::{resolve_cast, screen_at};
pub use view::{Handled, ReplayOptions, ReplayView};
