use proptest::prelude::*;

use super::*;

fn key(n: u8) -> LinkKey {
    LinkKey::new([n; 64])
}

fn action(expires: i64) -> Action {
    Action {
        prompt_id: "build/2/3".into(),
        answer: "approve".into(),
        expires,
    }
}

#[test]
fn a_signed_link_opens_to_its_action_until_it_expires() {
    let token = key(1).sign(&action(100));
    assert_eq!(key(1).open(&token, 99), Ok(action(100)));
    assert_eq!(key(1).open(&token, 100), Err(LinkRefused::Expired));
}

#[test]
fn another_key_or_an_edited_link_is_forged() {
    let token = key(1).sign(&action(100));
    assert_eq!(key(2).open(&token, 0), Err(LinkRefused::Forged));
    // The answer changed from approve to deny, the signature kept.
    let edited = token.replacen(".approve.", ".deny.", 1);
    assert_eq!(key(1).open(&edited, 0), Err(LinkRefused::Forged));
    // A later expiry, the signature kept.
    let later = token.replacen(".100.", ".999.", 1);
    assert_eq!(key(1).open(&later, 0), Err(LinkRefused::Forged));
    for junk in ["", ".", "a.b", "zz.approve.1.00", "...."] {
        assert_eq!(key(1).open(junk, 0), Err(LinkRefused::Forged), "{junk:?}");
    }
}

#[test]
fn a_link_works_once() {
    let mut spent = Spent::default();
    let token = key(1).sign(&action(100));
    assert_eq!(spent.take(&token, &action(100), 10), Ok(()));
    assert_eq!(
        spent.take(&token, &action(100), 11),
        Err(LinkRefused::Spent)
    );
    // Forgotten only once expired, when `open` refuses it anyway.
    assert_eq!(
        spent.take(&token, &action(100), 99),
        Err(LinkRefused::Spent)
    );
}

#[test]
fn offers_are_one_link_per_answer_under_the_web_views_address() {
    let links = ActionLinks {
        base_url: "http://127.0.0.1:8917".into(),
        key: key(3),
    };
    let offers = links.offers("t/1/1", &["approve", "deny"], 1_000);
    assert_eq!(offers.len(), 2);
    for (offer, answer) in offers.iter().zip(["approve", "deny"]) {
        assert_eq!(offer.answer, answer);
        let token = offer.url.strip_prefix("http://127.0.0.1:8917/a/").unwrap();
        let opened = links.key.open(token, 1_000).unwrap();
        assert_eq!(opened.prompt_id, "t/1/1");
        assert_eq!(opened.answer, answer);
        assert_eq!(opened.expires, 1_000 + LINK_LIFETIME_SECS);
    }
}

proptest! {
    /// Whatever a link says, only its own key's signature opens it, and to what it said.
    #[test]
    fn any_action_round_trips_and_any_other_text_is_refused(
        prompt_id in ".{0,40}",
        answer in "[a-z_]{1,16}",
        expires in 1i64..i64::MAX,
        junk in ".{0,80}",
    ) {
        let action = Action { prompt_id, answer, expires };
        let token = key(7).sign(&action);
        prop_assert_eq!(key(7).open(&token, 0), Ok(action));
        prop_assert_eq!(key(8).open(&token, 0), Err(LinkRefused::Forged));
        prop_assert!(key(7).open(&junk, 0).is_err());
    }
}
