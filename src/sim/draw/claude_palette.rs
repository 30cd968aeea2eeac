//! Claude Code's colours (xterm-256 indexes, from the captures).

pub(super) const ORANGE: u8 = 174;
pub(super) const GREY: u8 = 246;
pub(super) const RULE_GREY: u8 = 244;
pub(super) const DIALOG_BLUE: u8 = 153;
pub(super) const ERROR_PINK: u8 = 211;
pub(super) const WHITE: u8 = 231;
pub(super) const DONE_GREEN: u8 = 114;
pub(super) const ECHO_BACKGROUND: u8 = 237;
pub(super) const ECHO_PROMPT: u8 = 239;
