//! The stages of an attempt's end, as tables: each row is a sequence of inputs (seconds after
//! the start, input) and the steps the shell is told to take, then the stage it ends in.

use std::time::{Duration, Instant};

use super::end::{AfterHost, AttemptEnd, DRAIN_AFTER_EXIT, EndInput, EndStage, EndStep};
use crate::core::classify::ExitStatus;

fn exited() -> EndInput {
    EndInput::Exited(ExitStatus {
        code: Some(0),
        signal: None,
    })
}

fn check(lost: Option<&str>) -> Option<EndStep> {
    Some(EndStep::CheckHost {
        lost: lost.map(str::to_string),
    })
}

fn not_by_host() -> EndInput {
    EndInput::HostChecked { by_host: false }
}

/// Runs `inputs` (at seconds after `t0`) through a new end; the steps and the final stage.
fn run(watches_files: bool, inputs: Vec<(f64, EndInput)>, t0: Instant) -> (Vec<EndStep>, EndStage) {
    let mut end = AttemptEnd::new(watches_files);
    let steps = inputs
        .into_iter()
        .filter_map(|(at, input)| end.handle(input, t0 + Duration::from_secs_f64(at)))
        .collect();
    (steps, end.stage().clone())
}

#[test]
fn stages_from_exit_to_durable_write() {
    let t0 = Instant::now();
    let drain = DRAIN_AFTER_EXIT.as_secs_f64();
    type Row = (
        &'static str,
        bool,
        Vec<(f64, EndInput)>,
        Vec<Option<EndStep>>,
        EndStage,
    );
    let rows: Vec<Row> = vec![
        (
            "exit, sweep, close: gathered and written",
            false,
            vec![
                (1.0, exited()),
                (1.1, EndInput::Swept),
                (1.2, EndInput::TerminalClosed),
                (1.2, not_by_host()),
                (1.3, EndInput::Gathered),
                (1.3, EndInput::Concluded { generation: 4 }),
                (1.4, EndInput::WriteDurable { generation: 3 }),
            ],
            vec![
                Some(EndStep::Sweep),
                check(None),
                Some(EndStep::Gather),
                Some(EndStep::Conclude),
            ],
            EndStage::Writing { generation: 4 },
        ),
        (
            "the write that carries the conclusion makes it done",
            false,
            vec![
                (1.0, exited()),
                (1.0, EndInput::TerminalClosed),
                (1.1, EndInput::Swept),
                (1.1, not_by_host()),
                (1.2, EndInput::Gathered),
                (1.2, EndInput::Concluded { generation: 4 }),
                (1.3, EndInput::WriteDurable { generation: 5 }),
            ],
            vec![
                Some(EndStep::Sweep),
                check(None),
                Some(EndStep::Gather),
                Some(EndStep::Conclude),
            ],
            EndStage::Done,
        ),
        (
            "terminal closed before the exit came in",
            false,
            vec![
                (0.5, EndInput::TerminalClosed),
                (1.0, exited()),
                (1.1, EndInput::Swept),
            ],
            vec![Some(EndStep::Sweep), check(None)],
            EndStage::CheckingHost {
                next: AfterHost::Gather,
            },
        ),
        (
            "swept but the terminal stays open: waits for the drain",
            false,
            vec![
                (1.0, exited()),
                (1.1, EndInput::Swept),
                (1.5, EndInput::Tick),
            ],
            vec![Some(EndStep::Sweep)],
            EndStage::Draining {
                exited_at: t0 + Duration::from_secs(1),
            },
        ),
        (
            "the drain's deadline ends the wait",
            false,
            vec![
                (1.0, exited()),
                (1.1, EndInput::Swept),
                (1.0 + drain, EndInput::Tick),
            ],
            vec![Some(EndStep::Sweep), check(None)],
            EndStage::CheckingHost {
                next: AfterHost::Gather,
            },
        ),
        (
            "a sweep slower than the drain: drained when it comes in",
            false,
            vec![(1.0, exited()), (2.0 + drain, EndInput::Swept)],
            vec![Some(EndStep::Sweep), check(None)],
            EndStage::CheckingHost {
                next: AfterHost::Gather,
            },
        ),
        (
            "no sweep yet: neither a close nor time ends it",
            false,
            vec![
                (1.0, exited()),
                (1.1, EndInput::TerminalClosed),
                (9.0, EndInput::Tick),
            ],
            vec![Some(EndStep::Sweep)],
            EndStage::Sweeping {
                exited_at: t0 + Duration::from_secs(1),
                closed: true,
            },
        ),
        (
            "ended through its host: set aside, nothing gathered",
            false,
            vec![
                (1.0, exited()),
                (1.0, EndInput::TerminalClosed),
                (1.1, EndInput::Swept),
                (1.1, EndInput::HostChecked { by_host: true }),
                (1.2, EndInput::Gathered),
            ],
            vec![Some(EndStep::Sweep), check(None)],
            EndStage::Done,
        ),
        (
            "files watched: the last read, checked again, then gathered",
            true,
            vec![
                (1.0, exited()),
                (1.0, EndInput::TerminalClosed),
                (1.1, EndInput::Swept),
                (1.1, not_by_host()),
                (1.3, EndInput::LastFilesRead { lost: None }),
                (1.3, not_by_host()),
            ],
            vec![
                Some(EndStep::Sweep),
                check(None),
                Some(EndStep::ReadLastFiles),
                check(None),
                Some(EndStep::Gather),
            ],
            EndStage::Gathering,
        ),
        (
            "the host could not be read at the end: checked with why",
            true,
            vec![
                (1.0, exited()),
                (1.0, EndInput::TerminalClosed),
                (1.1, EndInput::Swept),
                (1.1, not_by_host()),
                (
                    1.3,
                    EndInput::LastFilesRead {
                        lost: Some("timed out".into()),
                    },
                ),
                (1.3, EndInput::HostChecked { by_host: true }),
            ],
            vec![
                Some(EndStep::Sweep),
                check(None),
                Some(EndStep::ReadLastFiles),
                check(Some("timed out")),
            ],
            EndStage::Done,
        ),
        (
            "its file worker is gone: gathered without the last read",
            true,
            vec![
                (1.0, exited()),
                (1.0, EndInput::TerminalClosed),
                (1.1, EndInput::Swept),
                (1.1, not_by_host()),
                (1.1, EndInput::LastFilesUnavailable),
            ],
            vec![
                Some(EndStep::Sweep),
                check(None),
                Some(EndStep::ReadLastFiles),
                Some(EndStep::Gather),
            ],
            EndStage::Gathering,
        ),
        (
            "reports that come twice or late change nothing",
            false,
            vec![
                (1.0, exited()),
                (1.1, exited()),
                (1.2, EndInput::Gathered),
                (1.3, EndInput::WriteDurable { generation: 9 }),
            ],
            vec![Some(EndStep::Sweep)],
            EndStage::Sweeping {
                exited_at: t0 + Duration::from_secs(1),
                closed: false,
            },
        ),
    ];
    for (name, watches_files, inputs, steps, stage) in rows {
        let (got_steps, got_stage) = run(watches_files, inputs, t0);
        let steps: Vec<EndStep> = steps.into_iter().flatten().collect();
        assert_eq!(got_steps, steps, "{name}: steps");
        assert_eq!(got_stage, stage, "{name}: stage");
    }
}

#[test]
fn the_exit_status_is_kept_and_only_the_drain_has_a_deadline() {
    let t0 = Instant::now();
    let mut end = AttemptEnd::new(false);
    assert_eq!(end.deadline(), None);
    assert_eq!(end.exit(), None);
    end.handle(exited(), t0);
    assert_eq!(end.exit().and_then(|e| e.code), Some(0));
    assert_eq!(
        end.deadline(),
        None,
        "sweeping: the sweep's report moves it on"
    );
    end.handle(EndInput::Swept, t0);
    assert_eq!(end.deadline(), Some(t0 + DRAIN_AFTER_EXIT));
}
