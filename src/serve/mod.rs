//! The frontends' floor: the one event loop every face of a batch runs (`driver`), and the
//! faces that are not the dashboard: headless (`headless`) and the summary tables a run ends
//! with (`summary`). A face sends `Command`s and reads the engine's view; it never reaches into
//! the engine otherwise.

pub mod driver;
pub mod headless;
pub mod summary;
