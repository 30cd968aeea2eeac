//! Operator actions on the engine: what the dashboard's keys do to tasks and agents.
