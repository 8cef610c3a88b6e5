//! What a hashing failure means to a client: the application decides (a
//! full queue is a 503 before anything is written), so neither `hashing`
//! nor `error` knows the other.

use crate::error::ApiError;
use crate::hashing::{EngineError, HashError};

impl From<HashError> for ApiError {
    fn from(e: HashError) -> Self {
        match e {
            HashError::Overloaded(_) => ApiError::Unavailable {
                message: "password hashing is at capacity; nothing was written, retry later".into(),
                retry_after: 1,
            },
            // `check_length` refuses these first, naming the field; this is
            // the engine's own guard behind it.
            HashError::Engine(EngineError::PasswordTooLong { max_bytes, .. }) => {
                ApiError::invalid("password", format_args!("must be at most {max_bytes} bytes"))
            }
            HashError::Engine(other) => ApiError::Internal(other.to_string()),
        }
    }
}
