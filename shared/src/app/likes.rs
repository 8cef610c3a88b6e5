//! Likes (docs/API.md, Routes: `PUT`/`DELETE .../like`; Counting): members
//! only, idempotent either way.

use crate::domain::{LikeState, PostKey};
use crate::error::ApiError;

use super::{App, SignedIn};

impl App {
    /// The store changes the count only when the state changes.
    pub async fn set_like(&self, member: &SignedIn, key: &PostKey, liked: bool) -> Result<LikeState, ApiError> {
        let outcome = if liked {
            self.store.like(key, &member.id).await?
        } else {
            self.store.unlike(key, &member.id).await?
        };
        outcome.ok_or_else(|| self.not_found_post())
    }
}
