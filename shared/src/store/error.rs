//! What a store call can fail with, and what each failure means to a client
//! (the store side of the one error type: `crate::error` knows no store).

use crate::error::ApiError;

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum StoreError {
    #[error("username is already taken")]
    UsernameTaken,
    /// The post (or comment) a write refers to does not exist on that board.
    #[error("not found")]
    NotFound,
    #[error("parent_id must be a top-level comment of the same post")]
    InvalidParent,
    #[error("cursor is not a cursor this service issued")]
    InvalidCursor,
    /// The post has a comment by someone other than its author and the
    /// write was one the board's edit lock refuses: nothing was written.
    #[error("the post has been answered")]
    Answered,
    /// An image a write attaches is not ready, not the writer's on
    /// this board, attached elsewhere or about to be swept: nothing was written.
    #[error("media holds an image that cannot be attached")]
    MediaUnavailable,
    /// The request's idempotency claim was released or taken over before
    /// its create could be written: nothing was written.
    #[error("the idempotency key was claimed by another request")]
    ClaimLost,
    /// A file holds (or was sent) more bytes than the reader or writer allows.
    #[error("the file {key} is larger than {limit} bytes")]
    TooLarge { key: String, limit: u64 },
    /// The body a file was streamed from ended with an error (the client
    /// went away mid-upload): nothing was kept.
    #[error("the file's body could not be read to its end: {0}")]
    BodyIncomplete(String),
    /// Unreachable, throttled or timed out: answer 503 with Retry-After; nothing was written.
    #[error("store unavailable: {0}")]
    Unavailable(String),
    #[error("store failure: {0}")]
    Internal(String),
}

pub type StoreResult<T> = Result<T, StoreError>;

impl StoreError {
    /// A short name of the kind (traces' `error.type`), never the detail.
    pub fn kind(&self) -> &'static str {
        match self {
            StoreError::UsernameTaken => "username_taken",
            StoreError::NotFound => "not_found",
            StoreError::InvalidParent => "invalid_parent",
            StoreError::InvalidCursor => "invalid_cursor",
            StoreError::Answered => "answered",
            StoreError::MediaUnavailable => "media_unavailable",
            StoreError::TooLarge { .. } => "too_large",
            StoreError::BodyIncomplete(_) => "body_incomplete",
            StoreError::ClaimLost => "claim_lost",
            StoreError::Unavailable(_) => "unavailable",
            StoreError::Internal(_) => "internal",
        }
    }

    /// Whether the store failed (rather than answering no).
    pub fn is_failure(&self) -> bool {
        matches!(self, StoreError::Unavailable(_) | StoreError::Internal(_))
    }
}

impl From<StoreError> for ApiError {
    fn from(e: StoreError) -> Self {
        match e {
            StoreError::UsernameTaken => ApiError::UsernameTaken,
            StoreError::NotFound => ApiError::not_found("post"),
            StoreError::InvalidParent => ApiError::invalid("parent_id", "must be a top-level comment of the same post"),
            StoreError::InvalidCursor => ApiError::invalid("cursor", "is not a cursor this service issued"),
            StoreError::Answered => ApiError::Locked,
            StoreError::TooLarge { limit, .. } => ApiError::PayloadTooLarge { max_bytes: limit },
            StoreError::BodyIncomplete(detail) => {
                ApiError::invalid_request(format!("the file could not be read to its end: {detail}"))
            }
            StoreError::MediaUnavailable => ApiError::invalid(
                "media",
                "holds an image that is not ready, not yours on this board, or attached elsewhere",
            ),
            StoreError::ClaimLost => ApiError::RequestInProgress { retry_after: 1 },
            StoreError::Unavailable(detail) => {
                tracing::warn!(error = %detail, "store unavailable");
                ApiError::Unavailable {
                    // A write that timed out may still apply: only a create
                    // retried with its Idempotency-Key is sure to apply once.
                    message: "the store is unavailable; the request may not have been applied, retry later (a create with the same Idempotency-Key)".into(),
                    retry_after: 1,
                }
            }
            StoreError::Internal(detail) => ApiError::Internal(detail),
        }
    }
}
