//! The frontends' floor: a batch served to its end (`run`: the engine, the control socket, the
//! face), the one event loop every face runs (`driver`), and the faces that are not the
//! dashboard: headless (`headless`) and the summary tables a run ends with (`summary`). A face
//! sends `Command`s and reads the engine's view; it never reaches into the engine otherwise.

pub mod background;
pub mod control;
pub mod driver;
pub mod explain;
pub mod headless;
pub mod mcp;
pub mod run;
pub mod summary;
pub mod web;
