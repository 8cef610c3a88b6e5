//! [`BoardDirectory`] on DynamoDB (docs/API.md, Boards (v4)).

use async_trait::async_trait;

use super::DynamoStore;
use crate::domain::{BoardSettings, BoardSlug, LogEntry};
use crate::store::{BoardDirectory, StoreError, StoreResult};

fn not_yet(what: &str) -> StoreError {
    StoreError::Internal(format!("{what}: not built yet on this store"))
}

#[async_trait]
impl BoardDirectory for DynamoStore {
    async fn boards(&self) -> StoreResult<Vec<BoardSettings>> {
        Err(not_yet("boards"))
    }

    async fn post_counts(&self, boards: &[BoardSlug]) -> StoreResult<Vec<u64>> {
        Ok(vec![0; boards.len()])
    }

    async fn create_board(&self, _settings: &BoardSettings, _entry: Option<&LogEntry>) -> StoreResult<bool> {
        Err(not_yet("create_board"))
    }

    async fn update_board(&self, _settings: &BoardSettings, _entry: &LogEntry) -> StoreResult<bool> {
        Err(not_yet("update_board"))
    }

    async fn allocate_post_number(&self, _board: &BoardSlug) -> StoreResult<u64> {
        Ok(0)
    }
}
