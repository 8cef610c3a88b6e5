//! [`Accounts`] on DynamoDB (docs/storage.md, "Accounts"): a member's
//! session epoch on their member item, an account deletion's two steps, and
//! the index of a member's posts, comments and likes (`ByOwner`).
//!
//! - **Session state**: `session_epoch` on the member item (absent = 0)
//!   and, v4, `totp_confirmed`. Reading them is one consistent GetItem of
//!   four attributes, kept in this process for [`SESSION_TTL`] (a deletion,
//!   an ending of sessions or a TOTP change made through another process
//!   takes effect here within it); ending sessions and changing the
//!   password are one conditional UpdateItem each (`ADD session_epoch 1`),
//!   whose new state this process keeps at once.
//! - **TOTP** ([`SecondFactors`](crate::store::SecondFactors)): four
//!   attributes of the member item, each operation one conditional
//!   UpdateItem; confirming and removing it update this process's session
//!   state at once.
//! - **Deletion, step 1** ([`Accounts::close_account`]): one transaction
//!   turns the member item into a tombstone (its username stays taken; its
//!   credentials and TOTP go), records the pending deletion
//!   (`ACCOUNT_PURGE` / `<member id>`) and deletes the member's appointments.
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
//! One file per part: [`sessions`], [`deletion`], the listings
//! [`by_owner`] and [`second_factors`]; here, the trait's methods naming them.
//!
//! [`SESSION_TTL`]: crate::store::SESSION_TTL

mod by_owner;
mod deletion;
mod second_factors;
mod sessions;

pub(super) use second_factors::stored_totp;

use async_trait::async_trait;

use super::DynamoStore;
use crate::domain::{
    BoardSlug, CommentPage, MemberId, Owned, Page, PageLimit, PasswordHash, PendingDeletion, SessionState, Username,
};
use crate::store::{Accounts, StoreResult};

#[async_trait]
impl Accounts for DynamoStore {
    async fn session_state(&self, id: &MemberId, username: &Username) -> StoreResult<Option<SessionState>> {
        sessions::session_state(self, id, username).await
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
