//! The steps that wait for the user: dialogs, one-key questions, the idle prompt. Unknown keys
//! are ignored, as the real CLIs do.

use std::io::{self, Write};
use std::time::{Duration, Instant};

use super::draw::{self, claude, codex};
use super::keys::{InputEvent, Key};
use super::player::{Ending, Flow, Player};
use super::scenario::{Dialog, Idle, OnReject, Press, Repeat, Spinner, Style};

/// How long `Press Ctrl-C again to exit` waits for the second Ctrl-C.
const CTRL_C_WINDOW: Duration = Duration::from_secs(2);
/// Commands at the idle prompt that end the session.
const EXIT_COMMANDS: &[&str] = &["/exit", "/quit"];

/// The choice made in a permission dialog.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Answer {
    Yes,
    YesDontAskAgain,
    No,
}

/// The answer a key gives in a dialog of this style, if any.
pub(super) fn answer_for(style: Style, key: Key) -> Option<Answer> {
    match (style, key) {
        (_, Key::Char('1') | Key::Enter) => Some(Answer::Yes),
        (Style::Codex, Key::Char('y')) => Some(Answer::Yes),
        (_, Key::Char('2' | 'p')) => Some(Answer::YesDontAskAgain),
        (_, Key::Char('3') | Key::Escape) => Some(Answer::No),
        _ => None,
    }
}

fn stdin_closed(what: &str) -> Flow {
    Flow::End(Ending::Failed {
        code: 1,
        message: format!("error: stdin closed while {what} was waiting for a key"),
    })
}

impl<W: Write> Player<W> {
    /// A permission dialog, shown again after each answer when it repeats.
    pub(super) fn dialog(&mut self, dialog: &Dialog) -> io::Result<Flow> {
        let command = self.fill(&dialog.command);
        let description = self.fill(&dialog.description);
        let dont_ask = dialog.dont_ask.as_deref().map_or_else(
            || self.fill("Yes, and always allow access to {dir}/ from this project"),
            |text| self.fill(text),
        );
        let mut appearances = 0u32;
        loop {
            appearances += 1;
            self.input.drop_early_keys();
            let width = self.terminal.width();
            let region = match dialog.style {
                Style::Codex => codex::dialog(width, &command, &description),
                Style::Claude | Style::Plain => {
                    claude::dialog(width, &dialog.tool, &command, &description, &dont_ask)
                }
            };
            self.terminal.show(region)?;
            let answer = loop {
                match self.input.next_event(None) {
                    Some(InputEvent::Key(key)) => {
                        if let Some(answer) = answer_for(dialog.style, key) {
                            break answer;
                        }
                    }
                    Some(InputEvent::Closed) => return Ok(stdin_closed("a permission dialog")),
                    _ => {}
                }
            };
            self.terminal.clear()?;
            let accepted = answer != Answer::No;
            let rows = match dialog.style {
                Style::Codex => {
                    codex::answered(&command, accepted, answer == Answer::YesDontAskAgain)
                }
                Style::Claude | Style::Plain => claude::answered(&dialog.tool, &command, accepted),
            };
            self.commit_block(dialog.style, rows)?;
            if !accepted {
                return Ok(match dialog.on_reject {
                    OnReject::Continue => Flow::Next,
                    OnReject::Idle => Flow::SkipToIdle,
                    OnReject::Exit => Flow::End(Ending::Exit(dialog.reject_exit_code)),
                });
            }
            let comes_back = match dialog.repeat {
                None => false,
                Some(Repeat::Times(times)) => appearances < times,
                Some(Repeat::Forever) => true,
            };
            if !comes_back {
                return Ok(Flow::Next);
            }
            self.spin(&Spinner {
                text: "Working…".to_string(),
                seconds: Some(dialog.gap),
                style: dialog.style,
                done: None,
            })?;
        }
    }

    /// A one-line question that only one key answers.
    pub(super) fn press(&mut self, press: &Press) -> io::Result<Flow> {
        self.input.drop_early_keys();
        self.terminal
            .show(draw::press_line(&self.fill(&press.text)))?;
        loop {
            match self.input.next_event(None) {
                Some(InputEvent::Key(Key::Char(ch))) if ch == press.key => break,
                Some(InputEvent::Closed) => return Ok(stdin_closed("a question")),
                _ => {}
            }
        }
        self.terminal.clear()?;
        Ok(Flow::Next)
    }

    /// Waits at the input prompt: `/exit`, Ctrl-C twice, Ctrl-D or stdin closing end the session
    /// with 0; another message gets a short reply.
    pub(super) fn idle(&mut self, idle: &Idle) -> io::Result<Flow> {
        let notice = idle.notice.as_deref().map(|notice| self.fill(notice));
        let hint_text = match idle.style {
            Style::Codex => "ctrl + c again to quit",
            Style::Claude | Style::Plain => "Press Ctrl-C again to exit",
        };
        let mut typed = String::new();
        let mut second_ctrl_c_until: Option<Instant> = None;
        loop {
            let width = self.terminal.width();
            let hint = second_ctrl_c_until.map(|_| hint_text);
            let region = match idle.style {
                Style::Claude => claude::idle(width, &typed, hint, notice.as_deref()),
                Style::Codex => codex::idle(width, &typed, hint),
                Style::Plain => draw::plain_idle(width, &typed, hint),
            };
            self.terminal.show(region)?;
            let Some(event) = self.input.next_event(second_ctrl_c_until) else {
                second_ctrl_c_until = None;
                continue;
            };
            match event {
                InputEvent::Closed | InputEvent::Key(Key::CtrlD) => {
                    return Ok(Flow::End(Ending::Exit(0)));
                }
                InputEvent::Key(Key::CtrlC) if typed.is_empty() => {
                    if second_ctrl_c_until.is_some() {
                        return Ok(Flow::End(Ending::Exit(0)));
                    }
                    second_ctrl_c_until = Some(Instant::now() + CTRL_C_WINDOW);
                }
                InputEvent::Key(Key::CtrlC) => typed.clear(),
                InputEvent::Key(Key::Char(ch)) => {
                    typed.push(ch);
                    second_ctrl_c_until = None;
                }
                InputEvent::Key(Key::Backspace) => {
                    typed.pop();
                }
                InputEvent::Key(Key::Enter) => {
                    let message = std::mem::take(&mut typed);
                    if EXIT_COMMANDS.contains(&message.trim()) {
                        return Ok(Flow::End(Ending::Exit(0)));
                    }
                    if !message.trim().is_empty() {
                        self.reply_to(idle.style, message.trim())?;
                    }
                }
                _ => {}
            }
        }
    }

    /// A message typed at the idle prompt: echoed, answered with one line.
    fn reply_to(&mut self, style: Style, message: &str) -> io::Result<()> {
        let width = self.terminal.width();
        let reply = "This simulated session has nothing more to do. Type /exit to leave.";
        let (echo, answer) = match style {
            Style::Claude => (
                claude::echo(width, message, None),
                claude::say(width, reply, 231),
            ),
            Style::Codex => (codex::echo(width, message, None), codex::say(width, reply)),
            Style::Plain => (vec![format!("> {message}")], vec![reply.to_string()]),
        };
        self.commit_block(style, echo)?;
        self.commit_block(style, answer)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dialog_keys_follow_each_cli() {
        let cases = [
            (Style::Claude, Key::Char('1'), Some(Answer::Yes)),
            (Style::Claude, Key::Enter, Some(Answer::Yes)),
            (Style::Claude, Key::Char('p'), Some(Answer::YesDontAskAgain)),
            (Style::Claude, Key::Char('2'), Some(Answer::YesDontAskAgain)),
            (Style::Claude, Key::Escape, Some(Answer::No)),
            (Style::Claude, Key::Char('3'), Some(Answer::No)),
            (Style::Claude, Key::Char('y'), None),
            (Style::Claude, Key::CtrlC, None),
            (Style::Codex, Key::Char('y'), Some(Answer::Yes)),
            (Style::Codex, Key::Enter, Some(Answer::Yes)),
            (Style::Codex, Key::Char('p'), Some(Answer::YesDontAskAgain)),
            (Style::Codex, Key::Escape, Some(Answer::No)),
            (Style::Codex, Key::Char('x'), None),
        ];
        for (style, key, expected) in cases {
            assert_eq!(answer_for(style, key), expected, "{style:?} {key:?}");
        }
    }
}
