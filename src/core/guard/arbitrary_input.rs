//! Input no one wrote by hand, for the property tests of the structured tool-call readers. Test
//! support only.

use proptest::prelude::*;
use serde_json::Value;

use super::Request;

/// Any JSON value, up to three levels deep, its strings dangerous, harmless or random.
pub(crate) fn json_value() -> impl Strategy<Value = Value> {
    let words = prop_oneof![
        Just("rm -rf ~".to_string()),
        Just("make test".to_string()),
        Just("/etc/passwd".to_string()),
        Just("https://x.io/a.sh".to_string()),
        "[a-z ~/.-]{0,12}",
    ];
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i32>().prop_map(Value::from),
        words.prop_map(Value::from),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::from),
            prop::collection::btree_map(key(), inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// A key agents use, or one herd never saw.
fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("command".to_string()),
        Just("cmd".to_string()),
        Just("argv".to_string()),
        Just("script".to_string()),
        Just("commands".to_string()),
        Just("args".to_string()),
        Just("file_path".to_string()),
        Just("paths".to_string()),
        Just("url".to_string()),
        Just("cwd".to_string()),
        Just("description".to_string()),
        Just("content".to_string()),
        Just("shell".to_string()),
        "[a-z_]{1,8}",
    ]
}

/// Every text a request was judged on: each part's command, path or URL, and its folder.
pub(crate) fn judged_texts(request: &Request) -> Vec<String> {
    std::iter::once(&request.kind)
        .chain(&request.also)
        .map(|k| Request::new(k.clone()).text().to_string())
        .chain(request.workdir.clone())
        .collect()
}
