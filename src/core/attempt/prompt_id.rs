//! The ids of the prompts that wait for the operator, `<task_id>/<attempt>/<n>`, so an answer
//! from afar can never land on another dialog: each new wait (another dialog, the same one drawn
//! or held again) gets the next number, never given twice.

use std::time::Duration;

use crate::core::attempt::WaitingPrompt;

/// The waits of one attempt and the id of the one waiting now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptIds {
    prefix: String,
    /// How many waits this attempt had.
    count: u32,
    current: Option<Current>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Current {
    id: String,
    wait: WaitKey,
}

/// What tells one wait from the next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct WaitKey {
    rule: usize,
    since: Duration,
    appearance: u64,
}

impl WaitKey {
    fn of(waiting: &WaitingPrompt) -> WaitKey {
        WaitKey {
            rule: waiting.rule,
            since: waiting.since,
            appearance: waiting.sighting.appearance,
        }
    }
}

impl PromptIds {
    /// The ids of attempt `attempt` of task `task_id`.
    pub fn new(task_id: &str, attempt: u32) -> PromptIds {
        PromptIds {
            prefix: format!("{task_id}/{attempt}"),
            count: 0,
            current: None,
        }
    }

    /// Follows the attempt's wait after an event: a new wait gets the next id (returned).
    pub fn sync(&mut self, waiting: Option<&WaitingPrompt>) -> Option<&str> {
        let Some(waiting) = waiting else {
            self.current = None;
            return None;
        };
        let wait = WaitKey::of(waiting);
        if self.current.as_ref().is_some_and(|c| c.wait == wait) {
            return None;
        }
        self.count += 1;
        self.current = Some(Current {
            id: format!("{}/{}", self.prefix, self.count),
            wait,
        });
        self.current.as_ref().map(|c| c.id.as_str())
    }

    /// The id of the prompt waiting now.
    pub fn current(&self) -> Option<&str> {
        self.current.as_ref().map(|c| c.id.as_str())
    }

    /// Whether `id` names the prompt waiting now (an id of an answered or gone dialog does not).
    pub fn is_current(&self, id: &str) -> bool {
        self.current() == Some(id)
    }
}

/// The task an id names (everything before its last two parts), when it is shaped like one.
pub fn task_of(id: &str) -> Option<&str> {
    let (rest, n) = id.rsplit_once('/')?;
    let (task, attempt) = rest.rsplit_once('/')?;
    let numeric = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    (numeric(n) && numeric(attempt) && !task.is_empty()).then_some(task)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::screen::detect::PromptSighting;

    fn wait(rule: usize, since: u64, appearance: u64) -> WaitingPrompt {
        WaitingPrompt {
            rule,
            since: Duration::from_secs(since),
            sighting: PromptSighting {
                rule,
                appearance,
                rows: (0, 0),
                text: "Allow?".into(),
            },
            request: None,
            decision: None,
        }
    }

    #[test]
    fn each_wait_gets_the_next_id_and_none_is_given_twice() {
        let mut ids = PromptIds::new("fix-1", 2);
        // (the wait after the event, the id it gives, the id current after it)
        let steps: Vec<(Option<WaitingPrompt>, Option<&str>, Option<&str>)> = vec![
            (None, None, None),
            (Some(wait(0, 1, 0)), Some("fix-1/2/1"), Some("fix-1/2/1")),
            // The same wait seen again: same id.
            (Some(wait(0, 1, 0)), None, Some("fix-1/2/1")),
            // Answered: the id goes.
            (None, None, None),
            // The same dialog held again later: a new id.
            (Some(wait(0, 5, 0)), Some("fix-1/2/2"), Some("fix-1/2/2")),
            // Another dialog replaces it at once: a new id.
            (Some(wait(1, 5, 0)), Some("fix-1/2/3"), Some("fix-1/2/3")),
            // The same rule's next question (another appearance): a new id.
            (Some(wait(1, 5, 7)), Some("fix-1/2/4"), Some("fix-1/2/4")),
        ];
        for (i, (waiting, given, current)) in steps.into_iter().enumerate() {
            assert_eq!(ids.sync(waiting.as_ref()), given, "step {i}");
            assert_eq!(ids.current(), current, "step {i}");
        }
        assert!(ids.is_current("fix-1/2/4"));
        assert!(!ids.is_current("fix-1/2/3"));
    }

    #[test]
    fn the_task_of_an_id() {
        assert_eq!(task_of("fix-1/2/3"), Some("fix-1"));
        assert_eq!(task_of("a/b/1/1"), Some("a/b"));
        for bad in ["fix-1/2", "fix-1/x/3", "/1/1", "fix-1/2/", ""] {
            assert_eq!(task_of(bad), None, "{bad}");
        }
    }
}
