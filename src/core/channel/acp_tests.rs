//! herd's ACP client's record keeps who gave each of the operator's answers.

use std::time::Duration;

use super::with_api_answers;
use crate::core::approval::{AnsweredBy, Approval, Channel};

fn answer(by: AnsweredBy, channel: Channel) -> Approval {
    Approval {
        at: Duration::ZERO,
        by,
        channel,
        rule: "acp".into(),
        keys: String::new(),
        request: None,
        decision: None,
        option: None,
        title: None,
    }
}

#[test]
fn the_clients_operator_answers_keep_who_gave_them() {
    use AnsweredBy::{Api, Herd, Operator};
    let screen = [
        answer(Api, Channel::Screen),
        answer(Operator, Channel::Screen),
    ];
    let client = [
        answer(Herd, Channel::Acp),
        answer(Operator, Channel::Acp),
        answer(Operator, Channel::Acp),
        answer(Operator, Channel::Acp),
    ];
    let by: Vec<AnsweredBy> = with_api_answers(&client, &screen)
        .iter()
        .map(|a| a.by)
        .collect();
    assert_eq!(by, [Herd, Api, Operator, Operator]);
}
