use std::net::{IpAddr, Ipv4Addr};

use super::*;

const HOME: IpAddr = IpAddr::V4(Ipv4Addr::LOCALHOST);
const AWAY: IpAddr = IpAddr::V4(Ipv4Addr::new(10, 0, 0, 9));

fn session(n: u32) -> Session {
    Session {
        id: format!("sid-{n}"),
        csrf: format!("csrf-{n}"),
    }
}

#[test]
fn the_token_signs_in_and_the_cookie_names_the_session() {
    let mut gate = Gate::new("tok".into());
    let signed = gate.log_in(HOME, "tok", 0, || session(1)).unwrap();
    assert_eq!(signed, session(1));
    assert_eq!(gate.session(Some("sid-1")), Ok(&session(1)));
    assert_eq!(gate.session(Some("sid-2")), Err(Refused::NoSession));
    assert_eq!(gate.session(None), Err(Refused::NoSession));
}

#[test]
fn a_change_needs_the_sessions_csrf_token() {
    let mut gate = Gate::new("tok".into());
    gate.log_in(HOME, "tok", 0, || session(1)).unwrap();
    let change = |cookie, csrf| gate.session_for_change(cookie, csrf).map(|s| s.id.clone());
    assert_eq!(change(Some("sid-1"), Some("csrf-1")), Ok("sid-1".into()));
    assert_eq!(change(Some("sid-1"), None), Err(Refused::Csrf));
    assert_eq!(change(Some("sid-1"), Some("csrf-2")), Err(Refused::Csrf));
    assert_eq!(change(None, Some("csrf-1")), Err(Refused::NoSession));
}

#[test]
fn failed_logins_are_refused_for_a_while_past_a_few_per_client() {
    let mut gate = Gate::new("tok".into());
    for n in 0..FAILURES_ALLOWED {
        let at = n as i64;
        assert_eq!(
            gate.log_in(AWAY, "nope", at, || session(9)),
            Err(Refused::WrongToken)
        );
    }
    // Even the right token, from that client, until the window passes.
    assert_eq!(
        gate.log_in(AWAY, "tok", 10, || session(9)),
        Err(Refused::TooManyFailures)
    );
    // Another client is not held up.
    assert!(gate.log_in(HOME, "tok", 10, || session(1)).is_ok());
    let later = FAILURE_WINDOW_SECS + FAILURES_ALLOWED as i64;
    assert!(gate.log_in(AWAY, "tok", later, || session(2)).is_ok());
}

#[test]
fn only_the_web_views_own_origin_may_change_state() {
    let host = Some("127.0.0.1:8917");
    let ours = Some("http://127.0.0.1:8917");
    assert!(origin_ok(ours, None, host));
    assert!(origin_ok(None, Some("http://127.0.0.1:8917/"), host));
    // No browser names a page: curl, an ntfy action.
    assert!(origin_ok(None, None, host));
    assert!(!origin_ok(Some("http://evil.example"), None, host));
    assert!(!origin_ok(Some("http://127.0.0.1:8918"), None, host));
    assert!(!origin_ok(Some("null"), None, host));
    assert!(!origin_ok(
        None,
        Some("http://127.0.0.1:8917.evil.example/"),
        host
    ));
    assert!(!origin_ok(ours, None, None));
}
