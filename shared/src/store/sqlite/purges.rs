//! [`Purges`] on SQLite: a post's delete removes its children in the same
//! transaction ([`super::posts`]), so no purge is ever pending.

use async_trait::async_trait;

use super::SqliteStore;
use crate::store::{PendingPurge, Purges, StoreResult};

#[async_trait]
impl Purges for SqliteStore {
    async fn pending_purges(&self, _limit: usize) -> StoreResult<Vec<PendingPurge>> {
        Ok(Vec::new())
    }

    async fn purge(&self, _pending: &PendingPurge) -> StoreResult<()> {
        Ok(())
    }
}
