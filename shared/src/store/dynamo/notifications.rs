//! [`Notifications`] and [`Blocks`] on DynamoDB: not written yet (issue 44
//! in progress); every method answers an internal error until it is.

use async_trait::async_trait;

use super::DynamoStore;
use crate::domain::{BlockEntry, Blocked, Blocking, MemberId, NewNotification, NotificationPage, PageLimit, TextRef};
use crate::store::{Blocks, Notifications, StoreError, StoreResult};

fn not_yet() -> StoreError {
    StoreError::Internal("notifications and blocks are not on DynamoDB yet".into())
}

#[async_trait]
impl Notifications for DynamoStore {
    async fn add_notifications(&self, _text: &TextRef, _notifications: &[NewNotification]) -> StoreResult<bool> {
        Err(not_yet())
    }
    async fn withdraw_notifications(&self, _text: &TextRef) -> StoreResult<()> {
        Err(not_yet())
    }
    async fn disown_notifications(&self, _text: &TextRef) -> StoreResult<()> {
        Err(not_yet())
    }
    async fn notifications(
        &self,
        _member: &MemberId,
        _limit: PageLimit,
        _cursor: Option<&str>,
    ) -> StoreResult<NotificationPage> {
        Err(not_yet())
    }
    async fn unread_notifications(&self, _member: &MemberId) -> StoreResult<u64> {
        Err(not_yet())
    }
    async fn mark_notifications_read(&self, _member: &MemberId, _up_to: Option<&str>) -> StoreResult<u64> {
        Err(not_yet())
    }
    async fn expire_notifications(&self, _before: &str) -> StoreResult<u64> {
        Ok(0)
    }
    async fn forget_member(&self, _member: &MemberId) -> StoreResult<()> {
        Err(not_yet())
    }
}

#[async_trait]
impl Blocks for DynamoStore {
    async fn block(&self, _member: &MemberId, _entry: &BlockEntry) -> StoreResult<Blocking> {
        Err(not_yet())
    }
    async fn unblock(&self, _member: &MemberId, _blocked: &Blocked) -> StoreResult<bool> {
        Err(not_yet())
    }
    async fn blocks(&self, _member: &MemberId) -> StoreResult<Vec<BlockEntry>> {
        Ok(Vec::new())
    }
}
