//! Likes (docs/API.md, Routes: `PUT`/`DELETE .../like`; Counting): members
//! only, idempotent either way.

use crate::domain::{LikeState, PostKey};
use crate::error::ApiError;

use super::{App, ClientAddress, SignedIn};

impl App {
    /// The store changes the count only when the state changes. A
    /// banned member, or one writing from a banned address, may not.
    pub async fn set_like(
        &self,
        member: &SignedIn,
        client: &ClientAddress,
        key: &PostKey,
        liked: bool,
    ) -> Result<LikeState, ApiError> {
        self.require_not_banned(&key.board, client, Some(member)).await?;
        let outcome = if liked {
            self.store.like(key, &member.id).await?
        } else {
            self.store.unlike(key, &member.id).await?
        };
        outcome.ok_or_else(|| self.not_found_post())
    }
}
