//! [`Accounts`] on DynamoDB (docs/storage.md, "Accounts"): a member's
//! session epoch on their member item, an account deletion's two steps, and
//! the index of a member's posts, comments and likes (`ByOwner`).
//!
//! - **Session epoch**: `session_epoch` on the member item (absent = 0).
//!   Reading it is one consistent GetItem of three attributes, kept in this
//!   process for [`SESSION_TTL`] (a deletion or an ending of sessions made
//!   through another process takes effect here within it); ending sessions
//!   and changing the password are one conditional UpdateItem each (`ADD
//!   session_epoch 1`), whose new epoch this process keeps at once.
//! - **Deletion, step 1** ([`Accounts::close_account`]): one transaction
//!   turns the member item into a tombstone (its username stays taken),
//!   records the pending deletion (`ACCOUNT_PURGE` / `<member id>`) and
//!   deletes the member's appointments.
//! - **Deletion, step 2** (driven by the app): [`Accounts::owned`] reads
//!   the index, [`Accounts::disown`] rewrites the author of each post and
//!   comment (8 updates at a time), the app deletes or unlikes the rest,
//!   and [`Accounts::finish_deletion`] removes the record.
//! - **A member's listings**: one Query of the index, newest first; a posts
//!   page reads its counts as the board listing does (the shards, here by
//!   key, grouped by board), a comments page its comments' bodies (one
//!   BatchGetItem: the index does not project `body`, which a post's would
//!   fill with up to 60 KB each).
//!
//! One file per part: [`sessions`], [`deletion`], and the listings
//! [`by_owner`]; here, the trait's methods naming them.
//!
//! [`SESSION_TTL`]: crate::store::SESSION_TTL

mod by_owner;
mod deletion;
mod sessions;

use async_trait::async_trait;

use super::DynamoStore;
use crate::domain::{
    BoardSlug, CommentPage, MemberId, Owned, Page, PageLimit, PasswordHash, PendingDeletion, Username,
};
use crate::store::{Accounts, StoreResult};

#[async_trait]
impl Accounts for DynamoStore {
    async fn session_state(
        &self,
        id: &MemberId,
        username: &Username,
    ) -> StoreResult<Option<crate::domain::SessionState>> {
        // TODO(v4 helper): read the TOTP flag with the epoch.
        Ok(sessions::session_epoch(self, id, username)
            .await?
            .map(|epoch| crate::domain::SessionState { epoch, totp: false }))
    }

    async fn end_sessions(&self, id: &MemberId, username: &Username) -> StoreResult<bool> {
        sessions::end_sessions(self, id, username).await
    }

    async fn change_password(&self, id: &MemberId, username: &Username, new: &PasswordHash) -> StoreResult<bool> {
        sessions::change_password(self, id, username, new).await
    }

    async fn close_account(
        &self,
        id: &MemberId,
        username: &Username,
        delete_content: bool,
        moderates: &[BoardSlug],
    ) -> StoreResult<bool> {
        deletion::close_account(self, id, username, delete_content, moderates).await
    }

    async fn pending_deletions(&self, limit: usize) -> StoreResult<Vec<PendingDeletion>> {
        deletion::pending_deletions(self, limit).await
    }

    async fn owned(&self, member: &MemberId, likes: bool, limit: usize) -> StoreResult<Vec<Owned>> {
        deletion::owned(self, member, likes, limit).await
    }

    async fn disown(&self, member: &MemberId, items: &[Owned]) -> StoreResult<()> {
        deletion::disown(self, member, items).await
    }

    async fn finish_deletion(&self, member: &MemberId) -> StoreResult<()> {
        deletion::finish_deletion(self, member).await
    }

    async fn moderated_boards(&self, member: &MemberId, boards: &[BoardSlug]) -> StoreResult<Vec<BoardSlug>> {
        deletion::moderated_boards(self, member, boards).await
    }

    async fn member_posts(&self, member: &MemberId, limit: PageLimit, cursor: Option<&str>) -> StoreResult<Page> {
        by_owner::member_posts(self, member, limit, cursor).await
    }

    async fn member_comments(
        &self,
        member: &MemberId,
        limit: PageLimit,
        cursor: Option<&str>,
    ) -> StoreResult<CommentPage> {
        by_owner::member_comments(self, member, limit, cursor).await
    }
}

// TODO(v4 helper): TOTP on the member item.
#[async_trait]
impl crate::store::SecondFactors for DynamoStore {
    async fn start_totp(
        &self,
        _id: &MemberId,
        _username: &Username,
        _sealed: &str,
    ) -> StoreResult<crate::domain::TotpStart> {
        Err(crate::store::StoreError::Internal("TOTP is not on DynamoDB yet".into()))
    }
    async fn confirm_totp(
        &self,
        _id: &MemberId,
        _username: &Username,
        _sealed: &str,
        _recovery_codes: &[String],
        _step: u64,
    ) -> StoreResult<bool> {
        Err(crate::store::StoreError::Internal("TOTP is not on DynamoDB yet".into()))
    }
    async fn spend_totp_step(&self, _username: &Username, _step: u64) -> StoreResult<bool> {
        Err(crate::store::StoreError::Internal("TOTP is not on DynamoDB yet".into()))
    }
    async fn spend_recovery_code(&self, _username: &Username, _hash: &str) -> StoreResult<bool> {
        Err(crate::store::StoreError::Internal("TOTP is not on DynamoDB yet".into()))
    }
    async fn reseal_totp(&self, _username: &Username, _old: &str, _new: &str) -> StoreResult<bool> {
        Err(crate::store::StoreError::Internal("TOTP is not on DynamoDB yet".into()))
    }
    async fn end_totp(&self, _id: &MemberId, _username: &Username) -> StoreResult<bool> {
        Err(crate::store::StoreError::Internal("TOTP is not on DynamoDB yet".into()))
    }
}
