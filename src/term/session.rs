//! The user's terminal while herd owns it: raw mode, the alternate screen and bracketed paste,
//! undone on exit, on error and on panic.

use std::io;

use color_eyre::eyre::{Result, WrapErr};
use crossterm::cursor::Show;
use crossterm::event::{
    DisableBracketedPaste, DisableMouseCapture, EnableBracketedPaste, EnableMouseCapture,
};
use crossterm::execute;
use ratatui::DefaultTerminal;

/// The terminal in dashboard mode; dropping it gives the terminal back as it was.
pub struct Session {
    pub terminal: DefaultTerminal,
    restored: bool,
}

impl Session {
    /// `mouse`: report clicks and the wheel to the dashboard.
    pub fn enter(mouse: bool) -> Result<Session> {
        // ratatui restores raw mode and the main screen on panic; this hook adds the rest.
        let terminal = ratatui::try_init().wrap_err("cannot set up the terminal")?;
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            undo_modes();
            previous(info);
        }));
        execute!(io::stdout(), EnableBracketedPaste).wrap_err("cannot set up the terminal")?;
        if mouse {
            execute!(io::stdout(), EnableMouseCapture).wrap_err("cannot set up the terminal")?;
        }
        Ok(Session {
            terminal,
            restored: false,
        })
    }

    pub fn restore(&mut self) {
        if !self.restored {
            self.restored = true;
            undo_modes();
            // Not `ratatui::restore`: it prints its error, and a hung-up terminal cannot take it.
            let _ = ratatui::try_restore();
        }
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        self.restore();
    }
}

fn undo_modes() {
    // Best effort: there is nothing better to do with an error while giving the terminal back.
    let _ = execute!(
        io::stdout(),
        DisableMouseCapture,
        DisableBracketedPaste,
        Show
    );
}
