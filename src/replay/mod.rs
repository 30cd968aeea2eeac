//! `herd replay`: recorded attempts played back: the asciicast reader (`cast`), the replayed
//! terminal (`term`), seeking (`seek`), the timeline (`timeline`), the player's state machine
//! (`player`), the embeddable view (`view`, `draw`) and `--print`. Only `seek`, `print` and
//! `view::open` read files; the full-screen command is `cli::replay`.

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
