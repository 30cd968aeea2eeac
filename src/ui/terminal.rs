//! The user's terminal while the dashboard owns it: raw mode, the alternate screen and bracketed
//! paste on entry; all of it undone on exit, on error and on panic. Also the bell and desktop
//! notifications, and the log file (logs never go to the screen).

use std::io::{self, Write};
use std::path::Path;

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

/// Rings the bell and asks for a desktop notification (OSC 9 and OSC 777; terminals that know
/// neither ignore them).
pub fn notify(out: &mut impl Write, title: &str, body: &str) -> io::Result<()> {
    let clean = |s: &str| -> String {
        s.chars()
            .filter(|c| !c.is_control() && *c != ';')
            .take(200)
            .collect()
    };
    let (title, body) = (clean(title), clean(body));
    write!(
        out,
        "\x07\x1b]9;{title}: {body}\x07\x1b]777;notify;{title};{body}\x07"
    )?;
    out.flush()
}

/// Sends the log to `<dir>/herd.log`; the guard flushes it when dropped. `HERD_LOG` sets the
/// filter (default `info`).
pub fn log_to_file(dir: &Path) -> Option<tracing_appender::non_blocking::WorkerGuard> {
    crate::run::logging::init(dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notifications_cannot_inject_escape_sequences() {
        let mut out = Vec::new();
        notify(&mut out, "herd", "task\x1b]0;x\x07 waits; now").expect("write");
        let text = String::from_utf8(out).expect("utf8");
        assert_eq!(
            text,
            "\x07\x1b]9;herd: task]0x waits now\x07\x1b]777;notify;herd;task]0x waits now\x07"
        );
    }
}
