//! The session state on the member item: `session_epoch` (absent = 0)
//! and, v4, `totp_confirmed` (true while TOTP is on). Read with one
//! consistent GetItem of four attributes, kept in this process for
//! [`crate::store::SESSION_TTL`]; ending sessions and changing the password
//! are one conditional UpdateItem each (`ADD session_epoch 1`), and
//! confirming or removing TOTP one each (`second_factors`), whose new state
//! this process keeps at once.

use std::time::Instant;

use aws_sdk_dynamodb::types::ReturnValue;

use crate::domain::{MemberId, PasswordHash, SessionState, Username};
use crate::store::dynamo::DynamoStore;
use crate::store::dynamo::attributes::{Item, Projection, key, n, s, text};
use crate::store::dynamo::cache::KnownSession;
use crate::store::dynamo::items::{MEMBER_SK, member_pk};
use crate::store::dynamo::metered::Metered;
use crate::store::dynamo::metered::{is_conditional_failure, sdk_error};
use crate::store::{StoreError, StoreResult};

/// The condition that the member item is the live account `:id`.
pub(super) const LIVE_ACCOUNT: &str = "attribute_exists(PK) AND #id = :id AND attribute_not_exists(deleted_at)";

/// What the session check reads of the member item. `totp_confirmed` is
/// only ever stored beside `totp_secret` (both are set and removed together).
const SESSION: Projection = Projection {
    expression: "#id, session_epoch, deleted_at, totp_confirmed",
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

/// The session state of the live account `id` the member item (or what a
/// write returned of it: the whole item) holds; `None` for a tombstone or
/// another id under the username.
pub(super) fn state_of(item: &Item, id: &MemberId) -> StoreResult<Option<SessionState>> {
    if item.contains_key("deleted_at") || text(item, "id") != Some(id.as_str()) {
        return Ok(None);
    }
    Ok(Some(SessionState {
        epoch: epoch_of(item)?,
        totp: item.get("totp_confirmed").and_then(|v| v.as_bool().ok()) == Some(&true),
    }))
}

/// Whether a cached state is to be kept over `read`, what a read sent at
/// `read_at` found: a gone account stays gone, an epoch only grows, and
/// at the same epoch what this process wrote after the read was sent
/// stands (the read may have been served before the write: a TOTP
/// change does not move the epoch).
fn newer_than(cached: &KnownSession, read: Option<SessionState>, read_at: Instant) -> bool {
    match (cached.state, read) {
        (None, _) => true,
        (Some(_), None) => false,
        (Some(cached_state), Some(read)) if cached_state.epoch != read.epoch => cached_state.epoch > read.epoch,
        (Some(_), Some(_)) => cached.written_at.is_some_and(|written| written > read_at),
    }
}

impl DynamoStore {
    pub(super) fn member_key(username: &Username) -> Item {
        key(member_pk(username.as_str()), MEMBER_SK.into())
    }

    /// Keeps `state`, what a read sent at `read_at` found, as this
    /// process's knowledge of the account, unless what it knows is newer.
    pub(super) fn remember_read(
        &self,
        id: &MemberId,
        username: &Username,
        state: Option<SessionState>,
        read_at: Instant,
    ) {
        let cache_key = (id.as_str().to_owned(), username.as_str().to_owned());
        let known = KnownSession {
            state,
            written_at: None,
        };
        self.cache
            .sessions
            .put_unless(cache_key, known, read_at, |cached| newer_than(cached, state, read_at));
    }

    /// Keeps `state`, what this process's own write (answered just now)
    /// left, as its knowledge of the account.
    pub(super) fn remember_written(&self, id: &MemberId, username: &Username, state: Option<SessionState>) {
        let cache_key = (id.as_str().to_owned(), username.as_str().to_owned());
        let now = Instant::now();
        let known = KnownSession {
            state,
            written_at: Some(now),
        };
        // Only "gone" or a higher epoch (another write answered meanwhile) is kept.
        self.cache
            .sessions
            .put_unless(cache_key, known, now, |cached| newer_than(cached, state, now));
    }

    pub(super) fn forget_session(&self, id: &MemberId, username: &Username) {
        let cache_key = (id.as_str().to_owned(), username.as_str().to_owned());
        self.cache.sessions.remove(&cache_key);
    }

    /// `ADD session_epoch 1` (and the new hash) on the live account: one
    /// UpdateItem returning the item as it left it (the new epoch, and
    /// whether TOTP is on), which this process keeps.
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
            .table_name(&self.table)
            .set_key(Some(Self::member_key(username)))
            .condition_expression(LIVE_ACCOUNT)
            .expression_attribute_names("#id", "id")
            .expression_attribute_values(":id", s(id.as_str()))
            .expression_attribute_values(":one", n(1))
            .return_values(ReturnValue::AllNew);
        update = match hash {
            Some(hash) => update
                .update_expression("SET password_hash = :hash ADD session_epoch :one")
                .expression_attribute_values(":hash", s(hash.as_str())),
            None => update.update_expression("ADD session_epoch :one"),
        };
        let out = update.send_metered(self, &[member_pk(username.as_str())]).await;
        match out {
            Ok(out) => {
                let state = state_of(&out.attributes.unwrap_or_default(), id)?;
                self.remember_written(id, username, state);
                Ok(true)
            }
            Err(e) if is_conditional_failure(&e) => {
                self.remember_written(id, username, None);
                Ok(false)
            }
            Err(e) => {
                // It may have been written: ask the table next time.
                self.forget_session(id, username);
                Err(sdk_error(e))
            }
        }
    }
}

/// One consistent GetItem of `id`, `session_epoch`, `deleted_at` and
/// `totp_confirmed` (1 RCU), its answer kept in this process for
/// [`crate::store::SESSION_TTL`].
pub(super) async fn session_state(
    store: &DynamoStore,
    id: &MemberId,
    username: &Username,
) -> StoreResult<Option<SessionState>> {
    let cache_key = (id.as_str().to_owned(), username.as_str().to_owned());
    if let Some(known) = store.cache.sessions.get(&cache_key) {
        return Ok(known.state);
    }
    let read_at = Instant::now();
    let item = store
        .get_with(DynamoStore::member_key(username), true, Some(&SESSION))
        .await?;
    let state = match item {
        Some(item) => state_of(&item, id)?,
        None => None,
    };
    store.remember_read(id, username, state, read_at);
    Ok(state)
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
    use std::time::Duration;

    use super::*;

    fn known(epoch: Option<u64>, totp: bool, written_at: Option<Instant>) -> KnownSession {
        KnownSession {
            state: epoch.map(|epoch| SessionState { epoch, totp }),
            written_at,
        }
    }

    fn state(epoch: u64, totp: bool) -> Option<SessionState> {
        Some(SessionState { epoch, totp })
    }

    #[test]
    fn a_gone_account_stays_gone_and_an_epoch_only_grows_in_the_cache() {
        let read_at = Instant::now();
        assert!(
            newer_than(&known(None, false, None), state(3, false), read_at),
            "a deletion is not undone by a slow read"
        );
        assert!(newer_than(&known(Some(4), false, None), state(3, true), read_at));
        assert!(!newer_than(&known(Some(3), true, None), state(4, false), read_at));
        assert!(!newer_than(&known(Some(3), false, None), None, read_at));
    }

    #[test]
    fn at_the_same_epoch_a_write_answered_after_a_read_was_sent_stands() {
        let read_at = Instant::now();
        let later = read_at + Duration::from_millis(5);
        let earlier = read_at - Duration::from_millis(5);
        assert!(
            newer_than(&known(Some(2), true, Some(later)), state(2, false), read_at),
            "a confirm answered while the read was out is not undone by it"
        );
        assert!(
            !newer_than(&known(Some(2), true, Some(earlier)), state(2, false), read_at),
            "a read sent after the write saw what came after it"
        );
        assert!(
            !newer_than(&known(Some(2), true, None), state(2, false), read_at),
            "a newer read replaces an older one"
        );
    }
}
