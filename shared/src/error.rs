//! The one error type: each variant is a row of docs/API.md's error table
//! (Errors). Use cases return it; the HTTP adapter turns it into
//! `{"error": {"code", "message"}}` with its status. The bottom layer: it
//! imports nothing of this crate; the layers above say how their failures
//! become an `ApiError` (`store::error`, `app::errors`).

use http::StatusCode;

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ApiError {
    #[error("{0}")]
    MalformedJson(String),
    #[error("{0}")]
    Validation(String),
    #[error("{0}")]
    Unauthorized(String),
    /// A bearer token was sent and refused (forged, expired, malformed):
    /// `unauthorized` too, with `WWW-Authenticate: Bearer error="invalid_token"`.
    #[error("{0}")]
    InvalidToken(String),
    #[error("username or password is incorrect")]
    InvalidCredentials,
    #[error("password does not match")]
    WrongPassword,
    #[error("{0}")]
    Forbidden(String),
    /// The member or the client address is banned from the board: the
    /// message says until when and why.
    #[error("{0}")]
    Banned(String),
    #[error("{0}")]
    NotFound(String),
    #[error("method {0} is not allowed on this path")]
    MethodNotAllowed(String),
    #[error("username is already taken")]
    UsernameTaken,
    #[error("a request with this Idempotency-Key is still being processed; retry after {retry_after} seconds")]
    RequestInProgress { retry_after: u64 },
    #[error("this Idempotency-Key was used for a different request")]
    IdempotencyKeyReused,
    /// `If-Match` names another version of the post: nothing changed.
    #[error("the post has changed since the version If-Match names; read it again")]
    PreconditionFailed,
    #[error("request body must be at most 65536 bytes")]
    PayloadTooLarge,
    #[error("Content-Type must be application/json")]
    UnsupportedMediaType,
    #[error("too many failed attempts; retry after {retry_after} seconds")]
    TooManyAttempts { retry_after: u64 },
    #[error("too many writes from here; retry after {retry_after} seconds")]
    RateLimited { retry_after: u64 },
    #[error("{message}")]
    Unavailable { message: String, retry_after: u64 },
    /// A bug or a broken configuration: logged in full, answered without details.
    #[error("internal error")]
    Internal(String),
}

impl ApiError {
    pub fn status(&self) -> StatusCode {
        match self {
            ApiError::MalformedJson(_) | ApiError::Validation(_) => StatusCode::BAD_REQUEST,
            ApiError::Unauthorized(_) | ApiError::InvalidToken(_) | ApiError::InvalidCredentials => {
                StatusCode::UNAUTHORIZED
            }
            ApiError::WrongPassword | ApiError::Forbidden(_) | ApiError::Banned(_) => StatusCode::FORBIDDEN,
            ApiError::NotFound(_) => StatusCode::NOT_FOUND,
            ApiError::MethodNotAllowed(_) => StatusCode::METHOD_NOT_ALLOWED,
            ApiError::UsernameTaken | ApiError::RequestInProgress { .. } => StatusCode::CONFLICT,
            ApiError::IdempotencyKeyReused => StatusCode::UNPROCESSABLE_ENTITY,
            ApiError::PreconditionFailed => StatusCode::PRECONDITION_FAILED,
            ApiError::PayloadTooLarge => StatusCode::PAYLOAD_TOO_LARGE,
            ApiError::UnsupportedMediaType => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            ApiError::TooManyAttempts { .. } | ApiError::RateLimited { .. } => StatusCode::TOO_MANY_REQUESTS,
            ApiError::Unavailable { .. } => StatusCode::SERVICE_UNAVAILABLE,
            ApiError::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    pub fn code(&self) -> &'static str {
        match self {
            ApiError::MalformedJson(_) => "malformed_json",
            ApiError::Validation(_) => "validation_failed",
            ApiError::Unauthorized(_) | ApiError::InvalidToken(_) => "unauthorized",
            ApiError::InvalidCredentials => "invalid_credentials",
            ApiError::WrongPassword => "wrong_password",
            ApiError::Forbidden(_) => "forbidden",
            ApiError::Banned(_) => "banned",
            ApiError::NotFound(_) => "not_found",
            ApiError::MethodNotAllowed(_) => "method_not_allowed",
            ApiError::UsernameTaken => "username_taken",
            ApiError::RequestInProgress { .. } => "request_in_progress",
            ApiError::IdempotencyKeyReused => "idempotency_key_reused",
            ApiError::PreconditionFailed => "precondition_failed",
            ApiError::PayloadTooLarge => "payload_too_large",
            ApiError::UnsupportedMediaType => "unsupported_media_type",
            ApiError::TooManyAttempts { .. } => "too_many_attempts",
            ApiError::RateLimited { .. } => "rate_limited",
            ApiError::Unavailable { .. } => "unavailable",
            ApiError::Internal(_) => "internal",
        }
    }

    pub fn retry_after(&self) -> Option<u64> {
        match self {
            ApiError::TooManyAttempts { retry_after }
            | ApiError::RateLimited { retry_after }
            | ApiError::RequestInProgress { retry_after }
            | ApiError::Unavailable { retry_after, .. } => Some((*retry_after).max(1)),
            _ => None,
        }
    }

    pub fn validation(message: impl Into<String>) -> Self {
        ApiError::Validation(message.into())
    }

    pub fn not_found(what: &str) -> Self {
        ApiError::NotFound(format!("{what} not found"))
    }
}
