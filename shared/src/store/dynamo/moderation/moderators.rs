//! A board's moderators: one item each under `MODS#<board>`, the
//! appointment or dismissal written with its log entry, the answer to "is
//! this member a moderator" kept a few seconds in this process.

use std::time::Instant;

use crate::domain::{BoardSlug, LogEntry, Member, MemberId};
use crate::store::dynamo::DynamoStore;
use crate::store::dynamo::attributes::{from_item, key, to_item};
use crate::store::dynamo::items::{ModeratorItem, mods_pk};
use crate::store::dynamo::transact::{TxFailure, failed_at};
use crate::store::{StoreError, StoreResult};

impl DynamoStore {
    /// Remembers a moderator appointment this process just wrote or found.
    pub(in crate::store::dynamo) fn remember_moderator(&self, board: &str, member: &str, moderates: Option<bool>) {
        let cache_key = (board.to_owned(), member.to_owned());
        match moderates {
            Some(moderates) => self.cache.moderators.put_at(cache_key, moderates, Instant::now()),
            // The write's outcome is unknown: ask the table next time.
            None => self.cache.moderators.remove(&cache_key),
        }
    }
}

/// One eventually consistent GetItem (0.5 RCU), its answer (yes or no)
/// kept in this process for [`crate::store::dynamo::cache::MODERATOR_TTL`]
/// (10 s): on Lambda an appointment or dismissal made through another
/// execution environment takes effect here within 10 seconds, one made
/// through this process at once.
pub(super) async fn is_moderator(store: &DynamoStore, board: &BoardSlug, member: &MemberId) -> StoreResult<bool> {
    let cache_key = (board.as_str().to_owned(), member.as_str().to_owned());
    if let Some(known) = store.cache.moderators.get(&cache_key) {
        return Ok(known);
    }
    let read_at = Instant::now();
    let found = store
        .get_with(key(mods_pk(board.as_str()), member.as_str().to_owned()), false, None)
        .await?
        .is_some();
    store.cache.moderators.put_at(cache_key, found, read_at);
    Ok(found)
}

/// One Query of the board's moderator partition (every page), sorted by
/// appointment time, then member id.
pub(super) async fn moderators(store: &DynamoStore, board: &BoardSlug) -> StoreResult<Vec<Member>> {
    let mut found = store
        .all_under(&mods_pk(board.as_str()), None)
        .await?
        .into_iter()
        .map(from_item::<ModeratorItem>)
        .collect::<StoreResult<Vec<_>>>()?;
    found.sort_by(|a, b| (&a.appointed, &a.member_id).cmp(&(&b.appointed, &b.member_id)));
    Ok(found
        .into_iter()
        .map(|m| Member {
            id: m.member_id,
            username: m.username,
            nickname: m.nickname,
            created_at: m.created_at,
        })
        .collect())
}

/// One transaction: the moderator item (if absent) and the log entry.
pub(super) async fn add_moderator(
    store: &DynamoStore,
    board: &BoardSlug,
    member: &Member,
    entry: &LogEntry,
) -> StoreResult<bool> {
    let board = board.as_str();
    let item = to_item(&ModeratorItem {
        pk: mods_pk(board),
        sk: member.id.clone(),
        member_id: member.id.clone(),
        username: member.username.clone(),
        nickname: member.nickname.clone(),
        created_at: member.created_at.clone(),
        appointed: entry.at.clone(),
    })?;
    let items = vec![
        store.put(item, "attribute_not_exists(PK)")?,
        store.log_put(board, entry)?,
    ];
    let outcome = match store.transact(items).await {
        Ok(()) => Ok(true),
        Err(TxFailure::Conditions(failed)) if failed_at(&failed, 0) => Ok(false),
        Err(TxFailure::Conditions(_)) => Err(StoreError::Internal("log entry id collision".into())),
        Err(TxFailure::Store(e)) => Err(e),
    };
    let moderates = outcome.as_ref().ok().map(|_| true);
    store.remember_moderator(board, &member.id, moderates);
    outcome
}

/// One transaction: the moderator item's delete (if there) and the log entry.
pub(super) async fn remove_moderator(
    store: &DynamoStore,
    board: &BoardSlug,
    member: &MemberId,
    entry: &LogEntry,
) -> StoreResult<bool> {
    let board = board.as_str();
    let items = vec![
        store.delete(
            key(mods_pk(board), member.as_str().to_owned()),
            Some("attribute_exists(PK)"),
        )?,
        store.log_put(board, entry)?,
    ];
    let outcome = match store.transact(items).await {
        Ok(()) => Ok(true),
        Err(TxFailure::Conditions(failed)) if failed_at(&failed, 0) => Ok(false),
        Err(TxFailure::Conditions(_)) => Err(StoreError::Internal("log entry id collision".into())),
        Err(TxFailure::Store(e)) => Err(e),
    };
    let moderates = outcome.as_ref().ok().map(|_| false);
    store.remember_moderator(board, member.as_str(), moderates);
    outcome
}
