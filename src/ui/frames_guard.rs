//! The dashboard with a dialog the guard refused: the attempt (the real sim profile, the real
//! guard) holds it, the banner names the request and the reason, the details list them.
//! Snapshot at 120x40: the screen capture of a refused dialog.

use std::time::Duration;

use super::frames::frame;
use super::frames_fixtures::{dashboard, pane};
use super::model::DetailView;
use crate::core::approval::GuardSetup;
use crate::core::attempt::{Attempt, AttemptSetup, Event};
use crate::core::guard::GuardContext;
use crate::core::profile::ProfileSet;
use crate::core::task::Completion;

const DANGEROUS: &str = "\x1b[2J\x1b[H\x1b[1m● Bash\x1b[0m(rm -rf ~)\r\n  ⎿  Waiting…\r\n\r\n\x1b[38;5;153m Bash command\x1b[0m\r\n\r\n   rm -rf ~\r\n   \x1b[38;5;246mFree some disk space\x1b[0m\r\n\r\n Do you want to proceed?\r\n\x1b[36m ❯ 1. Yes\x1b[0m\r\n   2. Yes, and don't ask again for rm commands (p)\r\n   3. No\r\n\r\n Esc to cancel";

fn held_attempt() -> Attempt {
    let profile = ProfileSet::build(&crate::assets::built_in_profile_texts(), None)
        .expect("profiles")
        .get("sim")
        .expect("sim")
        .clone();
    let auto_rules = vec![true; profile.prompts.len()];
    let mut attempt = Attempt::new(AttemptSetup {
        profile,
        marker: "TASK_COMPLETE:fix-issue-142".into(),
        prompt: "Fix issue #142".into(),
        rows: 24,
        cols: 80,
        timeout: Duration::from_secs(600),
        idle: Duration::from_secs(60),
        permission_wait: None,
        auto_rules,
        answer_cap: 5,
        completion: Completion::Marker,
        marker_required: true,
        guard: GuardSetup {
            rules: Default::default(),
            context: GuardContext {
                task_dir: "/home/dev/proj".into(),
                home: "/home/dev".into(),
                ..GuardContext::default()
            },
        },
    });
    attempt.handle(Event::Output(DANGEROUS.as_bytes()), Duration::from_secs(3));
    attempt
}

#[test]
fn a_refused_dialog_waits_with_the_request_and_the_reason_120x40() {
    let attempt = held_attempt();
    let waiting = attempt.waiting().expect("the guard holds the dialog");
    let note = waiting.guard_note();
    assert!(note.starts_with("Bash(rm -rf ~) — refuse:"), "{note}");
    let prompt = crate::ui::prompt::view(&attempt).expect("a prompt view");
    assert_eq!(prompt.guard.as_deref(), Some(note.as_str()));
    let mut view = dashboard(
        vec![pane("fix-issue-142", attempt.screen(), true, Some(prompt))],
        None,
        &[
            ("1/Enter", "Yes"),
            ("2/p", "Yes, don't ask again"),
            ("3/n", "No"),
        ],
    );
    view.detail = Some(DetailView {
        task_id: "fix-issue-142".into(),
        questions: Vec::new(),
        lines: vec![
            ("status".into(), "waiting".into()),
            ("policy".into(), "auto_press_1, auto_press_p".into()),
            ("guard".into(), note.clone()),
        ],
    });
    let terminal = frame(120, 40, &view);
    let text = format!("{:?}", terminal.backend());
    assert!(text.contains("Bash(rm -rf ~)"), "{text}");
    insta::assert_snapshot!(terminal.backend());
}

#[test]
fn the_guard_s_doubt_is_read_whole_in_rows_of_its_own_at_160_and_80_columns() {
    let attempt = held_attempt();
    let mut prompt = crate::ui::prompt::view(&attempt).expect("a prompt view");
    let doubt = "Bash(touch created_by_agent.txt) — ask: no rule allows it, and the task's \
                 auto_press_1 switch is off; the operator decides";
    prompt.guard_objects = false;
    prompt.guard = Some(doubt.into());
    for (cols, rows) in [(160, 45), (80, 24)] {
        let view = dashboard(
            vec![pane(
                "fix-issue-142",
                attempt.screen(),
                true,
                Some(prompt.clone()),
            )],
            None,
            &[("1", "Yes"), ("Esc", "No")],
        );
        let terminal = frame(cols, rows, &view);
        let buffer = terminal.backend().buffer();
        let lines: Vec<String> = (0..rows)
            .map(|y| {
                (0..cols)
                    .map(|x| buffer[(x, y)].symbol().to_string())
                    .collect::<String>()
            })
            .collect();
        // The pane's inside, its rows joined: the whole doubt is there, nothing cut.
        let joined: String = lines
            .iter()
            .filter_map(|l| l.split('│').nth(3).or_else(|| l.split('│').nth(1)))
            .map(str::trim)
            .collect::<Vec<_>>()
            .join(" ");
        assert!(
            joined.contains("ask: no rule allows it, and the task's auto_press_1 switch is off; the operator decides"),
            "{cols}x{rows}:\n{}",
            lines.join("\n")
        );
        let banner = lines.iter().find(|l| l.contains("] Yes")).expect("banner");
        assert!(!banner.contains("no rule allows"), "{banner}");
    }
}
