//! An account's deletion: step 1 in one transaction (the member item
//! becomes a tombstone, its username staying taken; the pending deletion is
//! recorded; the appointments go), step 2 driven by the app through the
//! `ByOwner` index ([`owned`], [`disown`], [`finish_deletion`]).

use std::collections::HashSet;

use futures_util::future::try_join_all;
use futures_util::stream::{self, StreamExt};
use serde::{Deserialize, Serialize};

use super::by_owner::Run;
use super::second_factors::ALL_TOTP;
use super::sessions::LIVE_ACCOUNT;
use crate::domain::{
    BoardSlug, CommentId, CommentKey, DELETED_MEMBER_NICKNAME, MemberId, Owned, PendingDeletion, PostId, PostKey,
    Username, now,
};
use crate::store::dynamo::DynamoStore;
use crate::store::dynamo::attributes::{Item, Projection, from_item, key, n, pk_of, s, text, to_item};
use crate::store::dynamo::items::{
    ACCOUNT_PURGE_PK, DELETED_MEMBER_KIND, OWNED_COMMENT_PREFIX, OWNED_LIKE_PREFIX, OWNED_POST_PREFIX, POST_SK,
    comment_sk, mods_pk, post_pk,
};
use crate::store::dynamo::metered::Metered;
use crate::store::dynamo::requests::BATCH_KEYS;
use crate::store::dynamo::transact::{TRANSACTION_ITEMS, TxFailure};
use crate::store::{StoreError, StoreResult};

/// How many of [`Accounts::disown`]'s updates are in flight at once.
const DISOWN_AT_ONCE: usize = 8;

/// What a deletion reads of an index entry.
const OWNED_KEYS: Projection = Projection {
    expression: "PK, SK, owner_sk, board",
    names: &[],
};

/// What the moderator check of a deletion reads of an appointment.
const KEY_ONLY: Projection = Projection {
    expression: "PK",
    names: &[],
};

/// A deletion whose step 2 has not finished.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct PendingDeletionItem {
    #[serde(rename = "PK")]
    pk: String,
    #[serde(rename = "SK")]
    sk: String,
    member_id: String,
    delete_content: bool,
    /// When step 1 ran (`crate::domain::now`: sorts as it reads).
    started: String,
}

/// What an index entry of `ByOwner` names.
fn owned_of(item: &Item) -> Option<Owned> {
    let sk = text(item, "owner_sk")?;
    let board = BoardSlug::from_stored(text(item, "board")?.to_owned());
    let post = |id: &str| PostKey {
        board: board.clone(),
        post: PostId::from_stored(id.to_owned()),
    };
    if let Some(id) = sk.strip_prefix(OWNED_POST_PREFIX) {
        return Some(Owned::Post(post(id)));
    }
    if let Some(id) = sk.strip_prefix(OWNED_COMMENT_PREFIX) {
        let post_id = text(item, "PK")?.strip_prefix("POST#")?;
        return Some(Owned::Comment(CommentKey {
            post: post(post_id),
            comment: CommentId::from_stored(id.to_owned()),
        }));
    }
    sk.strip_prefix(OWNED_LIKE_PREFIX).map(|id| Owned::Like(post(id)))
}

impl DynamoStore {
    /// The author of one post or comment becomes `deleted_member`, its
    /// writer key goes (nothing ties it to an address any more) and the
    /// item leaves `ByOwner`, if `member` is still its author; false when
    /// it is not (gone, or disowned already).
    async fn disown_one(&self, member: &str, item_key: Item) -> StoreResult<bool> {
        let touched = [pk_of(&item_key)];
        let out = self
            .client()
            .await
            .update_item()
            .table_name(&self.table)
            .set_key(Some(item_key))
            .update_expression(
                "SET author_kind = :deleted, author_nickname = :nickname REMOVE author_member_id, #owner, owner_sk, writer_key, writer_range",
            )
            .condition_expression("author_kind = :member AND author_member_id = :id")
            .expression_attribute_names("#owner", "owner")
            .expression_attribute_values(":deleted", s(DELETED_MEMBER_KIND))
            .expression_attribute_values(":nickname", s(DELETED_MEMBER_NICKNAME))
            .expression_attribute_values(":member", s("member"))
            .expression_attribute_values(":id", s(member))
            .metered_if(self, &touched)
            .await?;
        Ok(out.is_some())
    }
}

/// One transaction: the member item becomes a tombstone (conditioned
/// on the live account), the pending deletion is recorded, and the
/// appointments on `moderates` are deleted.
pub(super) async fn close_account(
    store: &DynamoStore,
    id: &MemberId,
    username: &Username,
    delete_content: bool,
    moderates: &[BoardSlug],
) -> StoreResult<bool> {
    let mut boards: Vec<&str> = Vec::with_capacity(moderates.len());
    for board in moderates {
        // A transaction refuses two writes of one item.
        if !boards.contains(&board.as_str()) {
            boards.push(board.as_str());
        }
    }
    if boards.len() + 2 > TRANSACTION_ITEMS {
        return Err(StoreError::Internal(format!(
            "an account deletion takes at most {} appointments",
            TRANSACTION_ITEMS - 2
        )));
    }
    let tombstone = store.update(
        DynamoStore::member_key(username),
        &format!(
            "SET deleted_at = :now ADD session_epoch :one REMOVE #id, nickname, password_hash, created_at, {ALL_TOTP}"
        ),
        Some(LIVE_ACCOUNT),
        &[("#id", "id")],
        &[(":id", s(id.as_str())), (":now", s(now())), (":one", n(1))],
    )?;
    let marker = to_item(&PendingDeletionItem {
        pk: ACCOUNT_PURGE_PK.into(),
        sk: id.as_str().to_owned(),
        member_id: id.as_str().to_owned(),
        delete_content,
        started: now(),
    })?;
    let mut items = vec![tombstone, store.put(marker, "attribute_not_exists(PK)")?];
    for board in &boards {
        items.push(store.delete(key(mods_pk(board), id.as_str().to_owned()), None)?);
    }
    let outcome = match store.transact(items).await {
        Ok(()) => Ok(true),
        Err(TxFailure::Conditions(failed)) if failed.first() == Some(&true) => Ok(false),
        Err(TxFailure::Conditions(_)) => Err(StoreError::Internal(
            "a pending deletion of this member is recorded already".into(),
        )),
        Err(TxFailure::Store(e)) => Err(e),
    };
    match outcome {
        Ok(_) => {
            // Gone either way: this process refuses its tokens at once.
            store.remember_written(id, username, None);
        }
        Err(_) => store.forget_session(id, username),
    }
    let dismissed = matches!(outcome, Ok(true)).then_some(false);
    for board in &boards {
        // Unknown after an error: ask the table next time.
        store.remember_moderator(board, id.as_str(), if outcome.is_ok() { dismissed } else { None });
    }
    outcome
}

/// One Query of the pending deletions' partition, every page (each
/// record is about 100 bytes: 40 to a read unit), sorted by start.
pub(super) async fn pending_deletions(store: &DynamoStore, limit: usize) -> StoreResult<Vec<PendingDeletion>> {
    let mut found: Vec<PendingDeletionItem> = store
        .query_all(ACCOUNT_PURGE_PK, None, &|query| {
            query.key_condition_expression("PK = :pk")
        })
        .await?
        .into_iter()
        .map(from_item)
        .collect::<StoreResult<_>>()?;
    found.sort_by(|a, b| (&a.started, &a.member_id).cmp(&(&b.started, &b.member_id)));
    Ok(found
        .into_iter()
        .take(limit)
        .map(|d| PendingDeletion {
            member: MemberId::from_stored(d.member_id),
            delete_content: d.delete_content,
        })
        .collect())
}

/// Queries of `ByOwner` (keys and board only), in descending key order
/// until `limit`: the member's posts first, then (with `likes`, the
/// same Query of the whole partition) their likes, then their comments.
/// Posts first: a deletion that deletes a post deletes the member's
/// comments on it in the post's purge, in batches, not one by one.
pub(super) async fn owned(
    store: &DynamoStore,
    member: &MemberId,
    likes: bool,
    limit: usize,
) -> StoreResult<Vec<Owned>> {
    let runs = if likes {
        vec![Run::All]
    } else {
        vec![Run::Of(OWNED_POST_PREFIX), Run::Of(OWNED_COMMENT_PREFIX)]
    };
    let mut found = Vec::new();
    for run in &runs {
        let mut start = None;
        // Reads on past DynamoDB's 1 MB pages (rare: entries are small).
        loop {
            let want = limit.saturating_sub(found.len());
            if want == 0 {
                return Ok(found);
            }
            let (items, stopped_at) = store
                .owner_query(member.as_str(), run, want, true, Some(&OWNED_KEYS), start)
                .await?;
            found.extend(items.iter().filter_map(owned_of));
            start = stopped_at;
            if start.is_none() {
                break;
            }
        }
    }
    Ok(found)
}

/// One conditional UpdateItem per post and comment, [`DISOWN_AT_ONCE`]
/// at a time; one no longer authored by the member is skipped. What this
/// process cached of their posts (details, board pages) is forgotten.
pub(super) async fn disown(store: &DynamoStore, member: &MemberId, items: &[Owned]) -> StoreResult<()> {
    let targets: Vec<(Item, String)> = items
        .iter()
        .filter_map(|owned| match owned {
            Owned::Post(post) => Some((
                key(post_pk(post.post.as_str()), POST_SK.into()),
                post.post.as_str().to_owned(),
            )),
            Owned::Comment(comment) => Some((
                key(
                    post_pk(comment.post.post.as_str()),
                    comment_sk(comment.comment.as_str()),
                ),
                comment.post.post.as_str().to_owned(),
            )),
            Owned::Like(_) => None,
        })
        .collect();
    if targets.is_empty() {
        return Ok(());
    }
    let keys: Vec<Item> = targets.iter().map(|(item_key, _)| item_key.clone()).collect();
    let member = member.as_str();
    let results: Vec<StoreResult<bool>> = stream::iter(keys)
        .map(|item_key| store.disown_one(member, item_key))
        .buffer_unordered(DISOWN_AT_ONCE)
        .collect()
        .await;
    for (_, post_id) in &targets {
        store.cache.forget_post(post_id);
    }
    store.cache.pages.clear();
    results.into_iter().try_for_each(|r| r.map(|_| ()))
}

/// One DeleteItem of the record.
pub(super) async fn finish_deletion(store: &DynamoStore, member: &MemberId) -> StoreResult<()> {
    store
        .client()
        .await
        .delete_item()
        .table_name(&store.table)
        .set_key(Some(key(ACCOUNT_PURGE_PK.into(), member.as_str().to_owned())))
        .metered(store, &[ACCOUNT_PURGE_PK.to_owned()])
        .await?;
    Ok(())
}

/// One consistent BatchGetItem of the member's appointment on each board
/// (1 RCU each; per 100 boards).
pub(super) async fn moderated_boards(
    store: &DynamoStore,
    member: &MemberId,
    boards: &[BoardSlug],
) -> StoreResult<Vec<BoardSlug>> {
    let mut asked: Vec<&BoardSlug> = Vec::with_capacity(boards.len());
    for board in boards {
        // BatchGetItem refuses a key named twice.
        if !asked.contains(&board) {
            asked.push(board);
        }
    }
    let keys: Vec<Item> = asked
        .iter()
        .map(|board| key(mods_pk(board.as_str()), member.as_str().to_owned()))
        .collect();
    let reads = keys
        .chunks(BATCH_KEYS)
        .map(|chunk| store.batch_get(chunk.to_vec(), true, Some(&KEY_ONLY)));
    let found: HashSet<String> = try_join_all(reads)
        .await?
        .into_iter()
        .flatten()
        .filter_map(|item| text(&item, "PK").map(str::to_owned))
        .collect();
    Ok(asked
        .into_iter()
        .filter(|board| found.contains(&mods_pk(board.as_str())))
        .cloned()
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn index_entries_name_what_they_index() {
        let entry = |pk: &str, owner_sk: &str| {
            Item::from([
                ("PK".to_owned(), s(pk)),
                ("owner_sk".to_owned(), s(owner_sk)),
                ("board".to_owned(), s("free")),
            ])
        };
        let post = PostKey {
            board: BoardSlug::from_stored("free".into()),
            post: PostId::from_stored("P".into()),
        };
        assert_eq!(owned_of(&entry("POST#P", "POST#P")), Some(Owned::Post(post.clone())));
        assert_eq!(
            owned_of(&entry("POST#P", "COMMENT#C")),
            Some(Owned::Comment(CommentKey {
                post: post.clone(),
                comment: CommentId::from_stored("C".into()),
            }))
        );
        assert_eq!(owned_of(&entry("LIKES#P#3", "LIKE#P")), Some(Owned::Like(post)));
        assert_eq!(owned_of(&entry("LIKES#P#3", "OTHER#P")), None);
    }
}
