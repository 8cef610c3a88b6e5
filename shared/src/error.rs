//! The one error type: each variant is a row of docs/API.md's error table
//! (Errors). Use cases return it; the HTTP adapter turns it into
//! `{"error": {"code", "field"?, "message"}}` with its status. The bottom layer: it
//! imports nothing of this crate; the layers above say how their failures
//! become an `ApiError` (`store::error`, `app::errors`).

use http::StatusCode;

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ApiError {
    /// `field`: the body field of the wrong JSON type, when one is.
    #[error("{message}")]
    MalformedJson { field: Option<String>, message: String },
    /// `field`: the one input the refusal is about (a body field, a query
    /// parameter or a header), when it is about one (docs/API.md,
    /// Conventions); the message starts with the same name.
    #[error("{message}")]
    Validation { field: Option<String>, message: String },
    #[error("{0}")]
    Unauthorized(String),
    /// A bearer token was sent and refused (forged, expired, malformed):
    /// `unauthorized` too, with `WWW-Authenticate: Bearer error="invalid_token"`.
    #[error("{0}")]
    InvalidToken(String),
    /// `field`: None at login (one answer for every cause); the password
    /// field of the body where a signed-in member confirms with a password.
    #[error("{}", field.map_or("username or password is incorrect".to_owned(), |f| format!("{f} is incorrect")))]
    InvalidCredentials { field: Option<&'static str> },
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
    /// A guest's second vote on a post from the same address key.
    #[error("a vote from here was already counted on this post")]
    AlreadyVoted,
    /// The author may no longer edit or delete the post: others
    /// have answered it on a board with `lock_after_comments`.
    #[error("others have commented on this post; on this board it can no longer be edited or deleted")]
    Locked,
    /// An anonymous write without a valid, unused proof of work:
    /// the answer carries `challenge` (a fresh one) beside the error.
    /// A login of a member with TOTP on that carries no code (`401`).
    #[error("a TOTP code (or a recovery code) is required: send it as totp")]
    TotpRequired,
    /// A staff route called by staff without confirmed TOTP
    /// while `STAFF_REQUIRE_TOTP` is on (`403`).
    #[error("staff must turn on two-step sign-in (TOTP) first: POST /members/me/totp, then confirm it")]
    StaffTotpRequired,
    /// An admin appoints a moderator whose TOTP is off while
    /// `STAFF_REQUIRE_TOTP` is on (`409`): the role would not take effect.
    #[error("the member must turn on two-step sign-in (TOTP) before they can be appointed a moderator")]
    ModeratorTotpRequired,
    #[error("{message}")]
    PowRequired {
        message: String,
        challenge: serde_json::Value,
    },
    #[error("a request with this Idempotency-Key is still being processed; retry after {retry_after} seconds")]
    RequestInProgress { retry_after: u64 },
    #[error("this Idempotency-Key was used for a different request")]
    IdempotencyKeyReused,
    /// `If-Match` names another version of the post: nothing changed.
    #[error("the post has changed since the version If-Match names; read it again")]
    PreconditionFailed,
    /// A body over its limit: 64 KiB of JSON, or an upload over its grant.
    #[error("request body must be at most {max_bytes} bytes")]
    PayloadTooLarge { max_bytes: u64 },
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
            ApiError::MalformedJson { .. } | ApiError::Validation { .. } => StatusCode::BAD_REQUEST,
            ApiError::Unauthorized(_)
            | ApiError::InvalidToken(_)
            | ApiError::InvalidCredentials { .. }
            | ApiError::TotpRequired => StatusCode::UNAUTHORIZED,
            ApiError::WrongPassword | ApiError::Forbidden(_) | ApiError::Banned(_) | ApiError::StaffTotpRequired => {
                StatusCode::FORBIDDEN
            }
            ApiError::NotFound(_) => StatusCode::NOT_FOUND,
            ApiError::MethodNotAllowed(_) => StatusCode::METHOD_NOT_ALLOWED,
            ApiError::UsernameTaken
            | ApiError::AlreadyVoted
            | ApiError::Locked
            | ApiError::ModeratorTotpRequired
            | ApiError::RequestInProgress { .. } => StatusCode::CONFLICT,
            ApiError::PowRequired { .. } => StatusCode::PRECONDITION_REQUIRED,
            ApiError::IdempotencyKeyReused => StatusCode::UNPROCESSABLE_ENTITY,
            ApiError::PreconditionFailed => StatusCode::PRECONDITION_FAILED,
            ApiError::PayloadTooLarge { .. } => StatusCode::PAYLOAD_TOO_LARGE,
            ApiError::UnsupportedMediaType => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            ApiError::TooManyAttempts { .. } | ApiError::RateLimited { .. } => StatusCode::TOO_MANY_REQUESTS,
            ApiError::Unavailable { .. } => StatusCode::SERVICE_UNAVAILABLE,
            ApiError::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    pub fn code(&self) -> &'static str {
        match self {
            ApiError::MalformedJson { .. } => "malformed_json",
            ApiError::Validation { .. } => "validation_failed",
            ApiError::Unauthorized(_) | ApiError::InvalidToken(_) => "unauthorized",
            ApiError::InvalidCredentials { .. } => "invalid_credentials",
            ApiError::WrongPassword => "wrong_password",
            ApiError::Forbidden(_) => "forbidden",
            ApiError::Banned(_) => "banned",
            ApiError::NotFound(_) => "not_found",
            ApiError::MethodNotAllowed(_) => "method_not_allowed",
            ApiError::UsernameTaken => "username_taken",
            ApiError::AlreadyVoted => "already_voted",
            ApiError::Locked => "locked",
            ApiError::PowRequired { .. } => "pow_required",
            ApiError::TotpRequired | ApiError::StaffTotpRequired | ApiError::ModeratorTotpRequired => "totp_required",
            ApiError::RequestInProgress { .. } => "request_in_progress",
            ApiError::IdempotencyKeyReused => "idempotency_key_reused",
            ApiError::PreconditionFailed => "precondition_failed",
            ApiError::PayloadTooLarge { .. } => "payload_too_large",
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

    /// The one input an error is about, if it is about one: what the
    /// answer's `field` says.
    pub fn field(&self) -> Option<&str> {
        match self {
            ApiError::Validation { field, .. } | ApiError::MalformedJson { field, .. } => field.as_deref(),
            ApiError::InvalidCredentials { field } => *field,
            ApiError::UsernameTaken => Some("username"),
            ApiError::WrongPassword => Some("password"),
            ApiError::TotpRequired => Some("totp"),
            _ => None,
        }
    }

    /// `400 validation_failed` about `field`: the message is the field's
    /// name followed by `rule` ("title must be 1-200 characters").
    pub fn invalid(field: &str, rule: impl std::fmt::Display) -> Self {
        ApiError::Validation {
            field: Some(field.to_owned()),
            message: format!("{field} {rule}"),
        }
    }

    /// `400 validation_failed` about the request as a whole, or about how
    /// several fields go together: no `field`.
    pub fn invalid_request(message: impl Into<String>) -> Self {
        ApiError::Validation {
            field: None,
            message: message.into(),
        }
    }

    /// `400 malformed_json` about the body as a whole.
    pub fn malformed(message: impl Into<String>) -> Self {
        ApiError::MalformedJson {
            field: None,
            message: message.into(),
        }
    }

    /// `413` for a JSON body over [`crate::http::input::MAX_BODY_BYTES`]'s 64 KiB.
    pub fn body_too_large() -> Self {
        ApiError::PayloadTooLarge { max_bytes: 64 * 1024 }
    }

    pub fn not_found(what: &str) -> Self {
        ApiError::NotFound(format!("{what} not found"))
    }
}
