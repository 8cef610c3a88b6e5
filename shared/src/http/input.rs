//! Reading request bodies: at most 64 KiB, JSON, an object. Fields are taken
//! one by one so that a missing field is `validation_failed` and a field of the
//! wrong JSON type is `malformed_json`, each naming the field.

use axum::body::Bytes;
use axum::extract::{FromRequest, Request};
use http::StatusCode;
use serde_json::{Map, Value};

use super::error::ApiError;

pub const MAX_BODY_BYTES: usize = 64 * 1024;

#[derive(Debug)]
pub struct JsonObject(Map<String, Value>);

impl<S: Send + Sync> FromRequest<S> for JsonObject {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        let bytes = Bytes::from_request(req, state).await.map_err(|rejection| {
            if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE {
                ApiError::PayloadTooLarge
            } else {
                ApiError::MalformedJson("request body could not be read".into())
            }
        })?;
        JsonObject::parse(&bytes)
    }
}

impl JsonObject {
    pub fn parse(bytes: &[u8]) -> Result<Self, ApiError> {
        if bytes.len() > MAX_BODY_BYTES {
            return Err(ApiError::PayloadTooLarge);
        }
        let value: Value = serde_json::from_slice(bytes).map_err(|e| {
            let what = if std::str::from_utf8(bytes).is_err() {
                "body is not UTF-8".to_owned()
            } else {
                format!("body is not valid JSON ({e})")
            };
            ApiError::MalformedJson(what)
        })?;
        match value {
            Value::Object(map) => Ok(JsonObject(map)),
            _ => Err(ApiError::MalformedJson("body must be a JSON object".into())),
        }
    }

    /// A required string field.
    pub fn string(&self, field: &str) -> Result<String, ApiError> {
        self.optional_string(field)?
            .ok_or_else(|| ApiError::validation(format!("{field} is required")))
    }

    /// A string field that may be absent or null.
    pub fn optional_string(&self, field: &str) -> Result<Option<String>, ApiError> {
        match self.0.get(field) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(_) => Err(ApiError::MalformedJson(format!("{field} must be a string"))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bodies_are_json_objects_and_fields_are_typed() {
        let body = JsonObject::parse(br#"{"title": "hi", "n": 3, "nothing": null, "extra": [1]}"#).unwrap();
        assert_eq!(body.string("title").unwrap(), "hi");
        assert_eq!(body.optional_string("nothing").unwrap(), None);
        assert_eq!(body.string("body"), Err(ApiError::validation("body is required")));
        assert_eq!(
            body.string("n"),
            Err(ApiError::MalformedJson("n must be a string".into()))
        );
        assert!(matches!(JsonObject::parse(b"[1]"), Err(ApiError::MalformedJson(m)) if m.contains("object")));
        assert!(matches!(JsonObject::parse(b"{"), Err(ApiError::MalformedJson(_))));
        assert!(matches!(JsonObject::parse(b"\xff\xfe"), Err(ApiError::MalformedJson(m)) if m.contains("UTF-8")));
        let deep = "[".repeat(10_000);
        assert!(matches!(
            JsonObject::parse(deep.as_bytes()),
            Err(ApiError::MalformedJson(_))
        ));
    }
}
