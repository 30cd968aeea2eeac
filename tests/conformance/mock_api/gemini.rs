//! The Gemini API as Gemini CLI calls it: `POST /v1beta/models/<model>:streamGenerateContent?alt=sse`
//! (SSE `data:` lines, each a `GenerateContentResponse`), `:generateContent` and `:countTokens`.
//! Error bodies are Google's `{"error":{"code","message","status","details"}}`.

use serde_json::{Value, json};

use super::http::{Response, sse};
use super::{Call, Outcome, Scenario};

pub(crate) fn answer(call: &Call<'_>) -> Outcome {
    if call.path.contains(":countTokens") {
        return Outcome::Answer(Response::json(200, &json!({"totalTokens": 12})));
    }
    let error = |code: u16, status: &str, message: &str, reason: Option<&str>| {
        let mut error = json!({"code": code, "message": message, "status": status});
        if let Some(reason) = reason {
            error["details"] = json!([{"@type": "type.googleapis.com/google.rpc.ErrorInfo",
                "reason": reason, "domain": "googleapis.com",
                "metadata": {"service": "generativelanguage.googleapis.com"}}]);
        }
        Response::json(code, &json!({ "error": error }))
    };
    let response = match call.scenario {
        Scenario::Hang => return Outcome::Hang,
        Scenario::Auth | Scenario::AuthRetryLoop => error(
            400,
            "INVALID_ARGUMENT",
            "API key not valid. Please pass a valid API key.",
            Some("API_KEY_INVALID"),
        ),
        Scenario::Quota | Scenario::QuotaRetryLoop | Scenario::Credit => daily_quota(),
        Scenario::Overloaded | Scenario::OverloadedRetryLoop => error(
            503,
            "UNAVAILABLE",
            "The model is overloaded. Please try again later.",
            None,
        ),
        // The shell call comes even when the request does not offer the tool (headless Gemini
        // leaves it out): a model may ask for it anyway, and Gemini then refuses it.
        _ if call.asks_for_tool() && !answers_tool(call.body) && schema(call.body).is_none() => {
            reply(
                call,
                json!({"functionCall": {"name": "run_shell_command",
                                    "args": {"command": call.tool_command(),
                                             "description": "Create the marker file"}}}),
            )
        }
        // Gemini CLI's own helpers (the model router's classifier, the next-speaker check) ask
        // for JSON by a schema: a valid object, so they go on as with the real API.
        _ if schema(call.body).is_some() => {
            let object = fill(schema(call.body).unwrap_or(&Value::Null));
            reply(call, json!({"text": object.to_string()}))
        }
        Scenario::Text
        | Scenario::Tool
        | Scenario::Dangerous
        | Scenario::Edit
        | Scenario::NoMarker => reply(call, json!({"text": call.final_text()})),
    };
    Outcome::Answer(response)
}

/// The API's 429 for a spent daily quota: `RESOURCE_EXHAUSTED` with a `QuotaFailure` naming a
/// per-day quota and a `RetryInfo`, as the Gemini API sends it to a free-tier key.
fn daily_quota() -> Response {
    let metric = "generativelanguage.googleapis.com/generate_content_free_tier_requests";
    let body = json!({"error": {
    "code": 429,
    "message": format!("You exceeded your current quota, please check your plan and billing \
        details. For more information on this error, head to: \
        https://ai.google.dev/gemini-api/docs/rate-limits.\n* Quota exceeded for metric: \
        {metric}, limit: 250, model: gemini-2.5-pro\nPlease retry in 20.5s."),
    "status": "RESOURCE_EXHAUSTED",
    "details": [
        {"@type": "type.googleapis.com/google.rpc.QuotaFailure",
         "violations": [{"quotaMetric": metric,
                         "quotaId": "GenerateRequestsPerDayPerProjectPerModel-FreeTier",
                         "quotaDimensions": {"location": "global", "model": "gemini-2.5-pro"},
                         "quotaValue": "250"}]},
        {"@type": "type.googleapis.com/google.rpc.Help",
         "links": [{"description": "Learn more about Gemini API quotas",
                    "url": "https://ai.google.dev/gemini-api/docs/rate-limits"}]},
        {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "20s"}
    ]}});
    Response::json(429, &body)
}

fn schema(body: &Value) -> Option<&Value> {
    let config = &body["generationConfig"];
    ["responseJsonSchema", "responseSchema"]
        .into_iter()
        .find_map(|key| config.get(key))
}

/// A value of the JSON schema's shape: the first of an enum, 1 for numbers, the properties of an
/// object filled in turn.
fn fill(schema: &Value) -> Value {
    if let Some(first) = schema["enum"].as_array().and_then(|e| e.first()) {
        return first.clone();
    }
    let kind = schema["type"]
        .as_str()
        .unwrap_or("object")
        .to_ascii_lowercase();
    match kind.as_str() {
        "string" => json!("mock"),
        "number" | "integer" => json!(1),
        "boolean" => json!(false),
        "array" => json!([fill(&schema["items"])]),
        _ => {
            let mut object = serde_json::Map::new();
            if let Some(properties) = schema["properties"].as_object() {
                for (name, property) in properties {
                    object.insert(name.clone(), fill(property));
                }
            }
            Value::Object(object)
        }
    }
}

/// The last content is the user's, carrying a function response.
fn answers_tool(body: &Value) -> bool {
    body["contents"]
        .as_array()
        .and_then(|c| c.last())
        .and_then(|c| c["parts"].as_array())
        .is_some_and(|parts| parts.iter().any(|p| p.get("functionResponse").is_some()))
}

fn reply(call: &Call<'_>, part: Value) -> Response {
    let chunk = json!({
        "candidates": [{"content": {"parts": [part], "role": "model"},
                        "finishReason": "STOP", "index": 0}],
        "usageMetadata": {"promptTokenCount": 20, "candidatesTokenCount": 12,
                          "totalTokenCount": 32},
        "modelVersion": "gemini-2.5-pro"
    });
    if call.path.contains(":streamGenerateContent") {
        Response::events(vec![sse(None, &chunk)])
    } else {
        Response::json(200, &chunk)
    }
}
