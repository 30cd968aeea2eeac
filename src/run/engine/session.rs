//! The operator's messages to an agent's session once its attempt ended: answers to the
//! questions of a task that `needs_input`, or a follow-up to a finished task. The message is
//! kept in the task (`resume_message`, so a crash does not lose it) and delivered by the task's
//! next attempt, which continues the session with the profile's `resume` command (an ACP
//! agent: its client's `session/load`), or, with no
//! session to continue, starts afresh with the message in its prompt
//! (`Engine::resume_with_message`, the task's side in `Tasks::queue_message`).

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use serde_json::Value;

    use crate::core::task::TaskStatus;
    use crate::run::clock::Now;
    use crate::run::engine::BatchView;
    use crate::run::engine::control_tests::{Fixture, fixture_with_processes};

    /// (Braces are doubled: commands are templates.)
    /// An agent that prints Claude-style events: a session `s-1` whose result echoes the
    /// prompt; resumed, it echoes the session id and the message.
    const PROFILE: &str = r#"
[profiles.echo]
command = ["sh", "-c", "printf '%s\n' '{{\"type\":\"system\",\"subtype\":\"init\",\"session_id\":\"s-1\"}}'; printf '{{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":false,\"result\":\"%s\",\"total_cost_usd\":0.5,\"num_turns\":1}}\n' \"$1\"", "sh", "{rendered_prompt}"]
resume = ["sh", "-c", "printf '{{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":false,\"result\":\"resumed %s: %s\",\"total_cost_usd\":0.25}}\n' \"$1\" \"$2\"", "sh", "{session_id}", "{rendered_prompt}"]
output = "stream-json"
exit_grace_sec = 1
[profiles.fresh]
command = ["sh", "-c", "printf '{{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":false,\"result\":\"%s\"}}\n' \"$1\" | tr '\n' ' '; echo", "sh", "{rendered_prompt}"]
output = "stream-json"
exit_grace_sec = 1
[profiles.acp]
command = ["some-acp-agent"]
protocol = "acp"
"#;

    fn fixture(tasks: &str) -> Fixture {
        fixture_with_processes(tasks, PROFILE)
    }

    impl Fixture {
        fn result(&mut self) -> Value {
            self.engine
                .settle_writes(Now::read(), Duration::from_secs(10))
                .expect("written");
            let text = std::fs::read_to_string(&self.path).expect("read tasks");
            let doc: Value = serde_json::from_str(&text).expect("json");
            doc["tasks"][0]["result"].clone()
        }

        fn first_status(&self) -> TaskStatus {
            self.engine.store().file().tasks()[0].status
        }

        fn run_until_idle(&mut self) {
            let deadline = std::time::Instant::now() + Duration::from_secs(10);
            self.engine.fill_slots(Now::read()).expect("fill");
            while !self.engine.attempts.is_empty() || self.first_status() == TaskStatus::Pending {
                assert!(
                    std::time::Instant::now() < deadline,
                    "the agent did not finish"
                );
                let reports = &mut self.reports;
                let next = self.runtime.block_on(async {
                    tokio::time::timeout(Duration::from_millis(50), reports.recv()).await
                });
                if let Ok(Some(report)) = next {
                    self.engine.on_report(report, Now::read()).expect("report");
                }
                self.engine.on_tick(Now::read()).expect("tick");
            }
        }
    }

    #[test]
    fn a_message_resumes_a_finished_session_and_costs_add_up() {
        let mut f = fixture(
            r#"{"tasks": [{"task_id": "t", "agent": "echo", "completion": "result", "prompt_template": "first prompt"}]}"#,
        );
        f.run_until_idle();
        assert_eq!(f.first_status(), TaskStatus::Completed);
        let first = f.result();
        assert_eq!(first["result_text"], "first prompt");
        assert_eq!(first["session_id"], "s-1");
        assert_eq!(first["total_cost_usd"], 0.5);
        assert_eq!(f.engine.resumable_session(0).as_deref(), Some("s-1"));

        let outcome = f
            .engine
            .resume_with_message(0, "add a test", Now::read())
            .expect("resume");
        assert!(outcome.is_done(), "{outcome:?}");
        assert!(
            outcome.message().contains("resuming session s-1"),
            "{outcome:?}"
        );
        f.run_until_idle();
        assert_eq!(f.first_status(), TaskStatus::Completed);
        let second = f.result();
        assert_eq!(second["result_text"], "resumed s-1: add a test");
        assert_eq!(second["resumed"], true);
        assert_eq!(second["session_id"], "s-1");
        assert_eq!(second["cost_usd"], 0.25);
        assert_eq!(second["total_cost_usd"], 0.75);
        assert_eq!(f.engine.store().file().tasks()[0].attempts, 2);
        assert!(f.engine.store().file().tasks()[0].resume_message.is_none());
    }

    #[test]
    fn without_a_session_the_message_goes_into_a_fresh_prompt() {
        let mut f = fixture(
            r#"{"tasks": [{"task_id": "t", "agent": "fresh", "completion": "result", "prompt_template": "base", "status": "completed", "attempts": 1}]}"#,
        );
        let refused = f
            .engine
            .resume_with_message(0, "  ", Now::read())
            .expect("resume");
        assert!(!refused.is_done());
        let outcome = f
            .engine
            .resume_with_message(0, "more please", Now::read())
            .expect("resume");
        assert!(
            outcome.message().contains("no session to resume"),
            "{outcome:?}"
        );
        f.run_until_idle();
        assert_eq!(f.first_status(), TaskStatus::Completed);
        assert_eq!(
            f.result()["result_text"],
            // The test agent cannot escape newlines in JSON, so it prints them as spaces.
            "base  A message from the operator: more please"
        );
    }

    #[test]
    fn an_acp_agents_finished_session_can_take_a_message() {
        // Its client continues it with session/load: `m` resumes it, not a fresh attempt.
        let f = fixture(
            r#"{"tasks": [{"task_id": "t", "agent": "acp", "prompt_template": "base", "status": "failed", "attempts": 1, "result": {"session_id": "s-9"}}]}"#,
        );
        assert_eq!(f.engine.resumable_session(0).as_deref(), Some("s-9"));
    }
}
