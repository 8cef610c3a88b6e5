//! The session epoch on the member item (absent = 0): read with one
//! consistent GetItem of three attributes, kept in this process for
//! [`crate::store::SESSION_TTL`]; ending sessions and changing the password
//! are one conditional UpdateItem each (`ADD session_epoch 1`), whose new
//! epoch this process keeps at once.

use std::time::Instant;

use aws_sdk_dynamodb::types::{ReturnConsumedCapacity, ReturnValue};

use crate::domain::{MemberId, PasswordHash, Username};
use crate::store::dynamo::DynamoStore;
use crate::store::dynamo::attributes::{Item, Projection, key, n, s, text};
use crate::store::dynamo::items::{MEMBER_SK, member_pk};
use crate::store::dynamo::transact::{is_conditional_failure, sdk_error};
use crate::store::{StoreError, StoreResult};

/// The condition that the member item is the live account `:id`.
pub(super) const LIVE_ACCOUNT: &str = "attribute_exists(PK) AND #id = :id AND attribute_not_exists(deleted_at)";

/// What the session check reads of the member item.
const EPOCH: Projection = Projection {
    expression: "#id, session_epoch, deleted_at",
    names: &[("#id", "id")],
};

/// `session_epoch`, 0 when absent (an item from before v3).
fn epoch_of(item: &Item) -> StoreResult<u64> {
    match item.get("session_epoch") {
        None => Ok(0),
        Some(value) => value
            .as_n()
            .ok()
            .and_then(|v| v.parse().ok())
            .ok_or_else(|| StoreError::Internal("a stored session epoch is not a number".into())),
    }
}

/// Whether a cached epoch is to be kept over `read`, something read (or
/// written) at about the same time: a gone account stays gone, and an
/// epoch only grows.
fn newer_than(cached: &Option<u64>, read: Option<u64>) -> bool {
    match (cached, read) {
        (None, _) => true,
        (Some(cached), Some(read)) => *cached > read,
        (Some(_), None) => false,
    }
}

impl DynamoStore {
    pub(super) fn member_key(username: &Username) -> Item {
        key(member_pk(username.as_str()), MEMBER_SK.into())
    }

    /// Keeps `epoch` as this process's knowledge of the account, unless
    /// what it knows is newer.
    pub(super) fn remember_epoch(&self, id: &MemberId, username: &Username, epoch: Option<u64>, at: Instant) {
        let cache_key = (id.as_str().to_owned(), username.as_str().to_owned());
        self.cache
            .sessions
            .put_unless(cache_key, epoch, at, |cached| newer_than(cached, epoch));
    }

    pub(super) fn forget_epoch(&self, id: &MemberId, username: &Username) {
        let cache_key = (id.as_str().to_owned(), username.as_str().to_owned());
        self.cache.sessions.remove(&cache_key);
    }

    /// `ADD session_epoch 1` (and the new hash) on the live account: one
    /// UpdateItem returning the new epoch, which this process keeps.
    async fn advance_epoch(
        &self,
        id: &MemberId,
        username: &Username,
        hash: Option<&PasswordHash>,
    ) -> StoreResult<bool> {
        let mut update = self
            .client()
            .await
            .update_item()
            .return_consumed_capacity(ReturnConsumedCapacity::Indexes)
            .table_name(&self.table)
            .set_key(Some(Self::member_key(username)))
            .condition_expression(LIVE_ACCOUNT)
            .expression_attribute_names("#id", "id")
            .expression_attribute_values(":id", s(id.as_str()))
            .expression_attribute_values(":one", n(1))
            .return_values(ReturnValue::UpdatedNew);
        update = match hash {
            Some(hash) => update
                .update_expression("SET password_hash = :hash ADD session_epoch :one")
                .expression_attribute_values(":hash", s(hash.as_str())),
            None => update.update_expression("ADD session_epoch :one"),
        };
        let out = update
            .send()
            .await
            .inspect(|out| self.record(out, &[member_pk(username.as_str())]));
        match out {
            Ok(out) => {
                let epoch = epoch_of(&out.attributes.unwrap_or_default())?;
                self.remember_epoch(id, username, Some(epoch), Instant::now());
                Ok(true)
            }
            Err(e) if is_conditional_failure(&e) => {
                self.remember_epoch(id, username, None, Instant::now());
                Ok(false)
            }
            Err(e) => {
                // It may have been written: ask the table next time.
                self.forget_epoch(id, username);
                Err(sdk_error(e))
            }
        }
    }
}

/// One consistent GetItem of `id`, `session_epoch` and `deleted_at`
/// (1 RCU), its answer kept in this process for [`crate::store::SESSION_TTL`].
pub(super) async fn session_epoch(store: &DynamoStore, id: &MemberId, username: &Username) -> StoreResult<Option<u64>> {
    let cache_key = (id.as_str().to_owned(), username.as_str().to_owned());
    if let Some(known) = store.cache.sessions.get(&cache_key) {
        return Ok(known);
    }
    let read_at = Instant::now();
    let item = store
        .get_with(DynamoStore::member_key(username), true, Some(&EPOCH))
        .await?;
    let epoch = match item {
        Some(item) if !item.contains_key("deleted_at") && text(&item, "id") == Some(id.as_str()) => {
            Some(epoch_of(&item)?)
        }
        _ => None,
    };
    store.remember_epoch(id, username, epoch, read_at);
    Ok(epoch)
}

/// One UpdateItem (`ADD session_epoch 1`), conditioned on the live account.
pub(super) async fn end_sessions(store: &DynamoStore, id: &MemberId, username: &Username) -> StoreResult<bool> {
    store.advance_epoch(id, username, None).await
}

/// One UpdateItem: the hash and `ADD session_epoch 1`, together.
pub(super) async fn change_password(
    store: &DynamoStore,
    id: &MemberId,
    username: &Username,
    new: &PasswordHash,
) -> StoreResult<bool> {
    store.advance_epoch(id, username, Some(new)).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_gone_account_stays_gone_and_an_epoch_only_grows_in_the_cache() {
        assert!(newer_than(&None, Some(3)), "a deletion is not undone by a slow read");
        assert!(newer_than(&Some(4), Some(3)));
        assert!(!newer_than(&Some(3), Some(4)));
        assert!(!newer_than(&Some(3), None));
    }
}
