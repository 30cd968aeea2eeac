//! What the floor finds wrong with a request: a refusal or a doubt, each with a reason.

/// What the floor found wrong with a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Finding {
    /// Dangerous: never answered automatically.
    Refuse(String),
    /// Cannot be judged (unparsable, dynamic): the operator decides.
    Doubt(String),
}
