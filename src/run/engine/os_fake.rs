//! A fake `Os` for the engine's tests: no process is spawned. Each agent plays a `Script` --
//! what it prints at its start, and its replies to what it is sent -- and its output, end of
//! file and exit come back through the outbox as a real terminal's would. A signal ends it as
//! it would end a process. Every spawn, write, resize and signal is kept for the tests to read.

use std::sync::{Arc, Mutex, MutexGuard};

use color_eyre::eyre::Result;

use super::os::{AgentProcess, AgentTerminal, Os};
use crate::core::attempt::StopSignal;
use crate::core::classify::ExitStatus;
use crate::run::jobs::Outbox;
use crate::run::launch::LaunchPlan;
use crate::run::pty::PtyEvent;

/// The pid of every fake agent: above any `pid_max`, so no real process group is ever it.
pub(crate) const FAKE_PID: u32 = u32::MAX;

/// Prints what a fake agent prints as it starts, from its launch plan.
type Prints = Arc<dyn Fn(&LaunchPlan) -> String + Send + Sync>;

/// What a fake agent does. `{marker}` in a reply is the attempt's completion marker.
#[derive(Clone)]
pub(crate) struct Script {
    start: Prints,
    /// The agent exits with this code once it has printed its start.
    exit_at_start: Option<i32>,
    /// Each tried in turn on every write.
    replies: Vec<Reply>,
}

/// A fake agent's answer to a write that contains `on`.
#[derive(Debug, Clone)]
struct Reply {
    on: String,
    output: String,
    /// The agent then exits with this code.
    exit: Option<i32>,
}

impl Script {
    /// An agent that prints nothing and runs until it is signalled (`sleep 30`).
    pub(crate) fn idle() -> Script {
        Script {
            start: Arc::new(|_| String::new()),
            exit_at_start: None,
            replies: Vec::new(),
        }
    }

    /// An agent that prints `question`, and on `answer` echoes it (as its terminal would),
    /// prints its marker on the next line and exits with 0.
    pub(crate) fn asks(question: &str, answer: &str) -> Script {
        let question = question.to_string();
        Script {
            start: Arc::new(move |_| question.clone()),
            exit_at_start: None,
            replies: vec![Reply {
                on: answer.to_string(),
                output: format!("{}\r\n{{marker}}\r\n", answer.trim_end()),
                exit: Some(0),
            }],
        }
    }

    /// An agent that prints what `prints` makes of its plan, then exits with `code`.
    pub(crate) fn says(
        code: i32,
        prints: impl Fn(&LaunchPlan) -> String + Send + Sync + 'static,
    ) -> Script {
        Script {
            start: Arc::new(prints),
            exit_at_start: Some(code),
            replies: Vec::new(),
        }
    }
}

impl Default for Script {
    fn default() -> Script {
        Script::idle()
    }
}

/// What one fake agent was started as and was asked to do.
#[derive(Debug, Clone)]
pub(crate) struct Spawned {
    pub(crate) argv: Vec<String>,
    pub(crate) size: (u16, u16),
    pub(crate) writes: Vec<Vec<u8>>,
    pub(crate) resizes: Vec<(u16, u16)>,
    pub(crate) signals: Vec<StopSignal>,
    pub(crate) exited: bool,
}

#[derive(Default)]
struct FakeState {
    script: Script,
    spawned: Vec<Spawned>,
}

/// The fake system; clones share what it saw.
#[derive(Clone, Default)]
pub(crate) struct FakeOs {
    state: Arc<Mutex<FakeState>>,
}

impl FakeOs {
    pub(crate) fn set_script(&self, script: Script) {
        self.lock().script = script;
    }

    /// How many agents were spawned.
    pub(crate) fn spawns(&self) -> usize {
        self.lock().spawned.len()
    }

    /// Agent `index` (in spawn order).
    pub(crate) fn spawned(&self, index: usize) -> Spawned {
        self.lock().spawned[index].clone()
    }

    fn lock(&self) -> MutexGuard<'_, FakeState> {
        // A test that panicked holding it has failed already.
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

impl Os for FakeOs {
    fn spawn(
        &self,
        plan: &LaunchPlan,
        rows: u16,
        cols: u16,
        _key: u64,
        reports: Outbox<PtyEvent>,
    ) -> Result<AgentProcess> {
        let mut state = self.lock();
        let script = state.script.clone();
        state.spawned.push(Spawned {
            argv: plan.argv.clone(),
            size: (rows, cols),
            writes: Vec::new(),
            resizes: Vec::new(),
            signals: Vec::new(),
            exited: false,
        });
        let agent = FakeAgent {
            os: self.clone(),
            index: state.spawned.len() - 1,
            script,
            marker: plan.marker.clone(),
            reports,
        };
        drop(state);
        agent.print(&(agent.script.start)(plan));
        if let Some(code) = agent.script.exit_at_start {
            agent.exit(ExitStatus {
                code: Some(code),
                signal: None,
            });
        }
        Ok(AgentProcess::new(FAKE_PID, None, Box::new(agent)))
    }
}

/// One fake agent's terminal.
struct FakeAgent {
    os: FakeOs,
    index: usize,
    script: Script,
    marker: String,
    reports: Outbox<PtyEvent>,
}

impl FakeAgent {
    fn print(&self, text: &str) {
        if !text.is_empty() {
            let bytes = text.replace("{marker}", &self.marker).into_bytes();
            let _ = self.reports.try_send(PtyEvent::Output { bytes });
        }
    }

    /// Closes the terminal and reports the exit, once.
    fn exit(&self, status: ExitStatus) {
        let first = {
            let mut state = self.os.lock();
            let spawned = &mut state.spawned[self.index];
            !std::mem::replace(&mut spawned.exited, true)
        };
        if first {
            let _ = self.reports.try_send(PtyEvent::Closed);
            let _ = self.reports.try_send(PtyEvent::Exited { status });
        }
    }

    fn with_record(&self, record: impl FnOnce(&mut Spawned)) {
        record(&mut self.os.lock().spawned[self.index]);
    }
}

impl AgentTerminal for FakeAgent {
    fn write(&self, bytes: Vec<u8>) {
        let text = String::from_utf8_lossy(&bytes).into_owned();
        self.with_record(|s| s.writes.push(bytes));
        let reply = self.script.replies.iter().find(|r| text.contains(&r.on));
        if let Some(reply) = reply {
            self.print(&reply.output);
            if let Some(code) = reply.exit {
                self.exit(ExitStatus {
                    code: Some(code),
                    signal: None,
                });
            }
        }
    }

    fn resize(&self, rows: u16, cols: u16) -> Result<()> {
        self.with_record(|s| s.resizes.push((rows, cols)));
        Ok(())
    }

    fn signal(&self, signal: StopSignal) {
        self.with_record(|s| s.signals.push(signal));
        let name = match signal {
            StopSignal::Term => "Terminated",
            StopSignal::Kill => "Killed",
        };
        self.exit(ExitStatus {
            code: None,
            signal: Some(name.to_string()),
        });
    }
}

/// The proof that the engine's tests spawn nothing: their fixture's agents go to the fake, and
/// no test file reaches for the real system.
mod tests {
    use std::time::Duration;

    use super::{FAKE_PID, Script};
    use crate::run::clock::Now;
    use crate::run::engine::control_tests::fixture_with;

    /// The engine's test files, as compiled.
    const TEST_FILES: [(&str, &str); 6] = [
        ("api_tests.rs", include_str!("api_tests.rs")),
        ("command_tests.rs", include_str!("command_tests.rs")),
        ("commit_tests.rs", include_str!("commit_tests.rs")),
        ("control_tests.rs", include_str!("control_tests.rs")),
        ("edits_tests.rs", include_str!("edits_tests.rs")),
        ("view_tests.rs", include_str!("view_tests.rs")),
    ];

    #[test]
    fn a_fixture_agent_is_a_fake_and_no_test_file_reaches_the_real_system() {
        let mut f = fixture_with(
            r#"{"tasks": [{"task_id": "t", "agent": "idle", "prompt_template": "p"}]}"#,
            "[profiles.idle]\ncommand = [\"sleep\", \"30\"]\n",
        );
        f.os.set_script(Script::idle());
        f.engine.fill_slots(Now::read()).expect("fill");
        f.engine
            .settle_writes(Now::read(), Duration::from_secs(10))
            .expect("written");
        let live = f.engine.live_for_task(0).expect("started");
        assert_eq!(live.process.pid, FAKE_PID, "the agent is the fake's");
        assert_eq!(f.os.spawns(), 1);
        let argv = f.os.spawned(0).argv;
        assert!(argv[0].ends_with("sleep") && argv[1] == "30", "{argv:?}");
        f.engine.kill_all();
        assert!(f.os.spawned(0).exited, "a signal ends a fake agent");
        for (name, text) in TEST_FILES {
            for real in [
                "Engine::new(",
                "pty::",
                "AgentProcess::spawn",
                "spawn_in_terminal",
            ] {
                assert!(!text.contains(real), "{name} reaches the system: {real}");
            }
            // The one process a test starts is git, making a repository for a worktree.
            let processes = text.matches("std::process").count();
            let git = text.matches("std::process::Command::new(\"git\")").count();
            assert_eq!(processes, git, "{name} starts a process");
            // Real agents are only for the session tests, outside these files.
            let real_fixtures = text.matches("fixture_with_processes(").count();
            let defined = usize::from(name == "control_tests.rs");
            assert_eq!(real_fixtures, defined, "{name} spawns real agents");
        }
    }
}
