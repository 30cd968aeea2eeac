//! Tests of the one entry point (`command`): each command's outcome in words, and what it
//! changed in the engine, the socket's and the dashboard's commands alike.

use crate::core::task::TaskStatus;
use crate::run::clock::Now;
use crate::run::engine::BatchView;
use crate::run::engine::api::ApiAnswer;
use crate::run::engine::command::Command;
use crate::run::engine::control::ControlOutcome;
use crate::run::engine::control_tests::{Fixture, fixture_with};

fn fixture() -> Fixture {
    fixture_with(
        r#"{"tasks": [{"task_id": "t", "agent": "quiet", "prompt_template": "p"}]}"#,
        "[profiles.quiet]\ncommand = [\"sh\", \"-c\", \"sleep 5\"]\n",
    )
}

#[test]
fn each_command_says_what_it_did_in_order() {
    let mut f = fixture();
    let done = |m: &str| ControlOutcome::Done(m.to_string());
    let refused = |m: &str| ControlOutcome::Refused(m.to_string());
    // Paused first: nothing the table does starts an agent.
    let table = [
        (
            Command::Pause,
            done("queue paused: running agents go on, nothing new starts"),
        ),
        (Command::SetConcurrency(0), done("1 agent at once")),
        (Command::SetConcurrency(100_000), done("256 agents at once")),
        (
            Command::SetPromptTemplate {
                task: 0,
                text: "new prompt".into(),
            },
            done("t: prompt saved for its next attempt"),
        ),
        (
            Command::SendMessage {
                task: 0,
                text: "hello".into(),
            },
            refused("t is not running"),
        ),
        (
            Command::TypeKeys {
                task: 0,
                bytes: b"y".to_vec(),
            },
            refused("t is not running"),
        ),
        (
            Command::ResizePane {
                task: 3,
                rows: 10,
                cols: 40,
            },
            refused("no such task"),
        ),
        (Command::Cancel { task: 0 }, done("t cancelled")),
        (Command::Cancel { task: 7 }, refused("no such task")),
        (
            Command::RetryNow { task: 0 },
            done(
                "t: cancelled after 0 attempts; pending again, with max_retries counted from \
                 attempt 1; the queue is paused",
            ),
        ),
        (
            Command::AnswerPrompt {
                prompt_id: "p-gone".into(),
                answer: ApiAnswer::Approve,
                by: crate::core::approval::AnsweredBy::Api,
            },
            ControlOutcome::Stale(
                "no prompt p-gone waits: it was answered or went away (prompts.list shows what \
                 waits now)"
                    .into(),
            ),
        ),
        (Command::Resume, done("queue resumed")),
    ];
    for (command, expected) in table {
        let said = f.engine.apply(command.clone(), Now::read()).expect("apply");
        assert_eq!(said, expected, "{command:?}");
    }
    assert!(!f.engine.is_paused());
    assert_eq!(f.engine.concurrency(), super::Engine::MAX_CONCURRENCY);
    let task = &f.engine.store().file().tasks()[0];
    assert_eq!(task.prompt_template.as_deref(), Some("new prompt"));
    assert_eq!(task.status, TaskStatus::Pending);
}

#[test]
fn a_stale_answer_is_neither_done_nor_refused_but_says_why() {
    let stale = ControlOutcome::Stale("no prompt p-1 waits".into());
    assert!(!stale.is_done());
    assert_eq!(stale.message(), "no prompt p-1 waits");
}
