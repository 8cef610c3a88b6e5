//! Request bodies (docs/API.md, Conventions): at most 64 KiB of JSON, an
//! object, read by serde into the route's request type. A missing field is
//! `validation_failed` and a field of the wrong JSON type `malformed_json`,
//! each naming the field.

use axum::body::{Bytes, HttpBody};
use axum::extract::{FromRequest, Request};
use axum::middleware::Next;
use axum::response::{IntoResponse as _, Response};
use http::{HeaderMap, StatusCode, header};
use serde::de::DeserializeOwned;

use crate::error::ApiError;

pub const MAX_BODY_BYTES: usize = 64 * 1024;

/// A JSON body read into `T`.
#[derive(Debug)]
pub struct Body<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned> FromRequest<S> for Body<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        let bytes = Bytes::from_request(req, state).await.map_err(|rejection| {
            if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE {
                ApiError::body_too_large()
            } else {
                ApiError::malformed("request body could not be read")
            }
        })?;
        parse(&bytes).map(Body)
    }
}

/// On every route that takes a body, outermost (docs/API.md, Conventions):
/// a body that does not say `Content-Type: application/json` is `415`
/// before it is read, before any `Idempotency-Key` claim, limit or hash. A
/// page on another origin can send `text/plain` without a CORS preflight;
/// this keeps it from creating anything from its visitors' browsers.
/// A request with no body and no content type is let through: it is not "a
/// request with a body", and its handler answers `400` for the missing body.
pub(crate) async fn require_json(request: Request, next: Next) -> Response {
    let no_body =
        !request.headers().contains_key(header::CONTENT_TYPE) && HttpBody::size_hint(request.body()).exact() == Some(0);
    if no_body || says_json(request.headers()) {
        next.run(request).await
    } else {
        ApiError::UnsupportedMediaType.into_response()
    }
}

/// `application/json`, in any case, with or without parameters (`charset=utf-8`).
fn says_json(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.split(';').next())
        .is_some_and(|media_type| media_type.trim().eq_ignore_ascii_case("application/json"))
}

pub fn parse<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, ApiError> {
    if bytes.len() > MAX_BODY_BYTES {
        return Err(ApiError::body_too_large());
    }
    if std::str::from_utf8(bytes).is_err() {
        return Err(ApiError::malformed("body is not UTF-8"));
    }
    let value: serde_json::Value =
        serde_json::from_slice(bytes).map_err(|e| ApiError::malformed(format!("body is not valid JSON ({e})")))?;
    if !value.is_object() {
        return Err(ApiError::malformed("body must be a JSON object"));
    }
    // Request fields are strings (or absent), but for a few booleans
    // (`delete_content`) and numbers (`duration_s`): a type error names its
    // field and the type serde expected.
    serde_path_to_error::deserialize(value).map_err(|e| {
        let field = e.path().to_string();
        let expected = e.inner().to_string();
        let rule = if expected.contains("expected a boolean") {
            "must be true or false"
        } else if expected.contains("expected i64") || expected.contains("expected u64") {
            "must be a whole number"
        } else {
            "must be a string"
        };
        ApiError::MalformedJson {
            message: format!("{field} {rule}"),
            field: Some(field),
        }
    })
}

/// A field where absent and `null` differ (`category` on edits): absent
/// is `None`, `null` is `Some(None)`. Use with `#[serde(default)]`.
pub fn absent_or_null<'de, D, T>(d: D) -> Result<Option<Option<T>>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: serde::Deserialize<'de>,
{
    use serde::Deserialize as _;
    Option::<T>::deserialize(d).map(Some)
}

/// A field the route requires: absent and `null` are both missing.
pub fn required<T>(field: &str, value: Option<T>) -> Result<T, ApiError> {
    value.ok_or_else(|| ApiError::invalid(field, "is required"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_application_json_with_or_without_parameters_says_json() {
        let says = |value: Option<&str>| {
            let mut headers = HeaderMap::new();
            if let Some(value) = value {
                headers.insert(header::CONTENT_TYPE, value.parse().unwrap());
            }
            says_json(&headers)
        };
        for yes in [
            "application/json",
            "Application/JSON",
            "application/json; charset=utf-8",
            " application/json ;x=y",
        ] {
            assert!(says(Some(yes)), "{yes}");
        }
        for no in [
            None,
            Some("text/plain"),
            Some("application/jsonp"),
            Some("application/x-www-form-urlencoded"),
            Some("multipart/form-data; boundary=x"),
            Some("application/problem+json"),
            Some(""),
        ] {
            assert!(!says(no), "{no:?}");
        }
    }

    #[derive(Debug, serde::Deserialize)]
    struct Sample {
        title: Option<String>,
        nothing: Option<String>,
        n: Option<String>,
        flag: Option<bool>,
        count: Option<i64>,
    }

    #[test]
    fn bodies_are_json_objects_and_fields_are_typed() {
        let body: Sample = parse(br#"{"title": "hi", "nothing": null, "extra": [1]}"#).unwrap();
        assert_eq!(body.title.as_deref(), Some("hi"));
        assert_eq!(body.nothing, None);
        assert_eq!(required("n", body.n), Err(ApiError::invalid("n", "is required")));
        assert_eq!(required::<String>("n", None).unwrap_err().field(), Some("n"));
        assert_eq!(
            parse::<Sample>(br#"{"n": 3}"#).unwrap_err(),
            ApiError::MalformedJson {
                field: Some("n".into()),
                message: "n must be a string".into()
            }
        );
        let typed = parse::<Sample>(br#"{"flag": true, "count": 3}"#).unwrap();
        assert_eq!((typed.flag, typed.count), (Some(true), Some(3)));
        for (body, message) in [
            (&br#"{"flag": "yes"}"#[..], "flag must be true or false"),
            (br#"{"count": "ten"}"#, "count must be a whole number"),
        ] {
            let refused = parse::<Sample>(body).unwrap_err();
            assert_eq!(refused.to_string(), message);
            assert_eq!(refused.field(), message.split(' ').next());
        }
        assert!(
            matches!(parse::<Sample>(b"[1]"), Err(ApiError::MalformedJson { message: m, field: None }) if m.contains("object"))
        );
        assert!(matches!(
            parse::<Sample>(b"{"),
            Err(ApiError::MalformedJson { field: None, .. })
        ));
        assert!(matches!(
            parse::<Sample>(b"{} {}"),
            Err(ApiError::MalformedJson { field: None, .. })
        ));
        assert!(
            matches!(parse::<Sample>(b"\xff\xfe"), Err(ApiError::MalformedJson { message: m, field: None }) if m.contains("UTF-8"))
        );
        let deep = "[".repeat(10_000);
        assert!(matches!(
            parse::<Sample>(deep.as_bytes()),
            Err(ApiError::MalformedJson { field: None, .. })
        ));
    }
}
