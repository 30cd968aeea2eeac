//! What the engine sends out: the events the frontends drain, and the outbox its workers report
//! into (`inbox`).

use super::event::EngineEvent;
use super::inbox::EngineInbox;
use crate::run::jobs::Outbox;

pub(super) struct Outgoing {
    /// Where the workers' reports go (`inbox`).
    pub(super) inbox: Outbox<EngineInbox>,
    pub(super) events: Vec<EngineEvent>,
}

impl Outgoing {
    pub(super) fn new(inbox: Outbox<EngineInbox>) -> Outgoing {
        Outgoing {
            inbox,
            events: Vec::new(),
        }
    }

    /// An outbox for a worker of attempt `key` whose reports `tag` turns into inbox reports.
    pub(super) fn outbox_of<T: 'static>(
        &self,
        key: u64,
        tag: fn(u64, T) -> EngineInbox,
    ) -> Outbox<T> {
        self.inbox.map(move |report| tag(key, report))
    }
}
