//! The end of one attempt, from its agent's exit to the write that records its status, as
//! explicit stages: the agent exits, what it left running is swept, its terminal drains, its
//! launcher's end is told apart from its agent's (an attempt on a host), its signal file and
//! log are read one last time, its end is gathered (git, transcript, worktree) and concluded,
//! and the conclusion is written. Each stage says what it waits for; each input moves it on
//! and returns what the shell does next.

use std::time::{Duration, Instant};

use crate::core::classify::ExitStatus;

/// How long to wait for the terminal to close after the agent exited (its process group is
/// killed at exit, so only a process that left the group can hold it longer).
pub const DRAIN_AFTER_EXIT: Duration = Duration::from_secs(2);

/// Where an attempt's end is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EndStage {
    /// The agent runs. `closed`: its terminal closed already (before its exit came in).
    Running { closed: bool },
    /// The agent exited at `exited_at`; its leftovers are being swept on a worker.
    Sweeping { exited_at: Instant, closed: bool },
    /// Swept; its terminal has until `exited_at + DRAIN_AFTER_EXIT` to close.
    Draining { exited_at: Instant },
    /// Drained: the shell tells whether it ended through its host (launcher), then `next`.
    CheckingHost { next: AfterHost },
    /// The last read of its signal file and agent log is on a worker.
    ReadingLastFiles,
    /// Its end is gathered on a worker.
    Gathering,
    /// Concluded in the document, which generation `generation` carries to the disk.
    Writing { generation: u64 },
    /// Its status is durable, or it ended through its host: nothing is left to do.
    Done,
}

/// What follows the host check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AfterHost {
    /// The last read of its files.
    ReadFiles,
    /// Gathering its end.
    Gather,
}

/// What happened to the attempt.
#[derive(Debug, Clone, PartialEq)]
pub enum EndInput {
    /// Its agent exited.
    Exited(ExitStatus),
    /// Its leftover processes were ended.
    Swept,
    /// Its terminal closed.
    TerminalClosed,
    /// Time passed (the drain's deadline).
    Tick,
    /// Whether it ended through its host rather than its agent; the shell set such an attempt
    /// aside when it did.
    HostChecked { by_host: bool },
    /// The last read of its files came in. `lost`: its host could not be read, and its signal
    /// file decides its verdict.
    LastFilesRead { lost: Option<String> },
    /// The last read could not be asked for (its worker is gone).
    LastFilesUnavailable,
    /// Its end was gathered.
    Gathered,
    /// The shell concluded it into the document, carried by write `generation`.
    Concluded { generation: u64 },
    /// Write `generation` is on disk.
    WriteDurable { generation: u64 },
}

/// What the shell does next for the attempt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EndStep {
    /// Kill its process group and sweep what left it, on a worker (`Swept` follows).
    Sweep,
    /// Tell whether it ended through its host (`lost`: why its host could not be read), set it
    /// aside if so (`HostChecked` follows).
    CheckHost { lost: Option<String> },
    /// Ask its worker for the last read of its files (`LastFilesRead` or
    /// `LastFilesUnavailable` follows).
    ReadLastFiles,
    /// Give it its verdict and gather its end on a worker (`Gathered` follows).
    Gather,
    /// Conclude it: its status, result and retry into the document (`Concluded` follows).
    Conclude,
}

/// One attempt's end.
#[derive(Debug, Clone, PartialEq)]
pub struct AttemptEnd {
    stage: EndStage,
    /// The agent's exit, once it came.
    exit: Option<ExitStatus>,
    /// It has a worker that reads its signal file and agent log.
    watches_files: bool,
}

impl AttemptEnd {
    /// An attempt whose agent was just launched.
    pub fn new(watches_files: bool) -> AttemptEnd {
        AttemptEnd {
            stage: EndStage::Running { closed: false },
            exit: None,
            watches_files,
        }
    }

    pub fn stage(&self) -> &EndStage {
        &self.stage
    }

    pub fn exit(&self) -> Option<&ExitStatus> {
        self.exit.as_ref()
    }

    /// Nothing is left to do.
    pub fn is_done(&self) -> bool {
        self.stage == EndStage::Done
    }

    /// When a `Tick` moves it on (the drain's deadline), if ever.
    pub fn deadline(&self) -> Option<Instant> {
        match self.stage {
            EndStage::Draining { exited_at } => Some(exited_at + DRAIN_AFTER_EXIT),
            _ => None,
        }
    }

    /// Moves the end on by `input` at `now`; what the shell does next.
    pub fn handle(&mut self, input: EndInput, now: Instant) -> Option<EndStep> {
        use EndStage as S;
        let (stage, step) = match (&self.stage, input) {
            (S::Running { closed }, EndInput::Exited(status)) => {
                self.exit = Some(status);
                let stage = S::Sweeping {
                    exited_at: now,
                    closed: *closed,
                };
                (stage, Some(EndStep::Sweep))
            }
            (S::Running { .. }, EndInput::TerminalClosed) => (S::Running { closed: true }, None),
            (S::Sweeping { exited_at, .. }, EndInput::TerminalClosed) => {
                let exited_at = *exited_at;
                let closed = true;
                (S::Sweeping { exited_at, closed }, None)
            }
            (S::Sweeping { closed: true, .. }, EndInput::Swept) => self.drained(),
            (S::Sweeping { exited_at, .. }, EndInput::Swept) => {
                let stage = S::Draining {
                    exited_at: *exited_at,
                };
                // The drain may be over already (a slow sweep).
                if now >= *exited_at + DRAIN_AFTER_EXIT {
                    self.drained()
                } else {
                    (stage, None)
                }
            }
            (S::Draining { .. }, EndInput::TerminalClosed) => self.drained(),
            (S::Draining { exited_at }, EndInput::Tick) if now >= *exited_at + DRAIN_AFTER_EXIT => {
                self.drained()
            }
            (S::CheckingHost { .. }, EndInput::HostChecked { by_host: true }) => (S::Done, None),
            (S::CheckingHost { next }, EndInput::HostChecked { by_host: false }) => match next {
                AfterHost::ReadFiles => (S::ReadingLastFiles, Some(EndStep::ReadLastFiles)),
                AfterHost::Gather => (S::Gathering, Some(EndStep::Gather)),
            },
            (S::ReadingLastFiles, EndInput::LastFilesRead { lost }) => {
                // What the agent wrote last may have ended its launcher's answer: checked again.
                let next = AfterHost::Gather;
                (S::CheckingHost { next }, Some(EndStep::CheckHost { lost }))
            }
            (S::ReadingLastFiles, EndInput::LastFilesUnavailable) => {
                (S::Gathering, Some(EndStep::Gather))
            }
            (S::Gathering, EndInput::Gathered) => (S::Gathering, Some(EndStep::Conclude)),
            (S::Gathering, EndInput::Concluded { generation }) => (S::Writing { generation }, None),
            (
                S::Writing { generation },
                EndInput::WriteDurable {
                    generation: durable,
                },
            ) if durable >= *generation => (S::Done, None),
            // Anything else changes nothing: a report that came late or twice.
            (stage, _) => (stage.clone(), None),
        };
        self.stage = stage;
        step
    }

    /// The agent exited, was swept and its terminal drained: its launcher is checked first.
    fn drained(&self) -> (EndStage, Option<EndStep>) {
        let next = if self.watches_files {
            AfterHost::ReadFiles
        } else {
            AfterHost::Gather
        };
        (
            EndStage::CheckingHost { next },
            Some(EndStep::CheckHost { lost: None }),
        )
    }
}
