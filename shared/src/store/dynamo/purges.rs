//! Deleting a post durably. Step 1 is one transaction: the post item (on
//! its board), its counter shards and a purge marker `PURGE` / `<post id>`:
//! from then on nothing of the post can be read, counted or reported (a
//! comment's guard and a report of a comment require the marker's absence).
//! It is all the delete request does. Step 2, the [`Purges`] port,
//! runs off the request: the `purge` function on the table's stream (the
//! marker's insert triggers it) or the server's background task (which also
//! finds markers left by an interrupted run). It deletes the comments and
//! likes, then the marker; cut short anywhere, the marker stays and running
//! it again finishes it.
//! Step 2 also resolves the open reports of the post and of its
//! comments: it deletes the report items (`REPORTS#<board>`) named by the
//! report pointers and reporters in the post's partition, before those
//! pointers and reporters, so a purge interrupted anywhere still finds them
//! when it resumes. An author's delete and a moderator's removal both end
//! this way; a removal's step 1 also carries its log entry, the post's open
//! reports (as many as fit) and its idempotency completion
//! ([`DynamoStore::mark_post_deleted_with`]).

use std::collections::{BTreeSet, HashMap};
use std::time::Duration;

use aws_sdk_dynamodb::types::{DeleteRequest, TransactWriteItem, WriteRequest};

use super::DynamoStore;
use super::attributes::{Item, key, n, pk_of, s};
use super::items::{POST_SK, all_likes_pks, legacy_likes_pk, post_pk, reports_pk};
use super::transact::{TRANSACTION_ITEMS, TxFailure, UNANSWERED};
use crate::store::dynamo::metered::Metered;
use crate::store::dynamo::transact::Condition;
use crate::store::{PendingPurge, Purges, StoreError, StoreResult};

/// The partition of purge markers (the `purge` function's stream filter
/// names it: docs/storage.md, Deleting a post).
pub const PURGE_PK: &str = "PURGE";

/// The purge marker of a post: there while the post's step 2 is pending.
pub(super) fn purge_marker(post_id: &str) -> Item {
    key(PURGE_PK.into(), post_id.to_owned())
}

/// How step 1 ended.
pub(super) enum Marked {
    Deleted,
    /// No such post on the board: nothing was written.
    NoSuchPost,
    /// It was deleted `unless_answered` and someone else has commented:
    /// nothing was written.
    Answered,
    /// The post is there but a condition of one of the extra items failed
    /// (which ones, in their order): nothing was written.
    ExtraFailed(Vec<bool>),
}

impl DynamoStore {
    /// Step 1: false when there is no such post on `board`.
    pub async fn mark_post_deleted(&self, board: &str, post_id: &str) -> StoreResult<bool> {
        match self.mark_post_deleted_with(board, post_id, false, Vec::new()).await? {
            Marked::Deleted => Ok(true),
            Marked::NoSuchPost | Marked::ExtraFailed(_) | Marked::Answered => Ok(false),
        }
    }

    /// Step 1 with `extra` items in the same transaction (a removal's
    /// log entry, the post's open reports, an idempotency completion); at
    /// most [`Self::mark_room`] of them.
    pub(super) async fn mark_post_deleted_with(
        &self,
        board: &str,
        post_id: &str,
        unless_answered: bool,
        extra: Vec<TransactWriteItem>,
    ) -> StoreResult<Marked> {
        let marker = HashMap::from([
            ("PK".to_owned(), s(PURGE_PK)),
            ("SK".to_owned(), s(post_id)),
            ("board".to_owned(), s(board)),
        ]);
        // A numbered post (every post since v4, and each one the backfill
        // numbered) is counted on its board: its delete uncounts it, in the
        // same write. Most are; a post without a number is found out by
        // the first attempt failing and a read.
        let mut numbered = true;
        for _ in 0..4 {
            let condition = if numbered {
                "attribute_exists(PK) AND board = :board AND attribute_exists(#number)"
            } else {
                "attribute_exists(PK) AND board = :board AND attribute_not_exists(#number)"
            };
            let mut items = vec![
                self.delete(
                    key(post_pk(post_id), POST_SK.into()),
                    Condition::new(condition)
                        .names(&[("#number", "number")])
                        .values(&[(":board", s(board))]),
                )?,
                self.overwrite(marker.clone())?,
            ];
            // With the edit lock, each shard goes only if it counts no
            // answer: the lock is decided in this write.
            let shards_at = items.len();
            for shard in self.shard_keys(board, post_id) {
                items.push(match unless_answered {
                    true => self.delete(shard, Condition::new(UNANSWERED).values(&[(":zero", n(0))]))?,
                    false => self.delete(shard, None)?,
                });
            }
            let shards = shards_at..items.len();
            if numbered {
                items.push(self.count_posts(board, -1)?);
            }
            let extra_at = items.len();
            items.extend(extra.iter().cloned());
            let marked = self.transact(items).await;
            self.cache.forget_post(post_id);
            self.cache.pages.clear();
            match marked {
                Ok(()) => return Ok(Marked::Deleted),
                // The post's own condition is the first item's.
                Err(TxFailure::Conditions(failed)) if failed.first() == Some(&true) => {
                    match self.post_numbered(board, post_id).await? {
                        None => return Ok(Marked::NoSuchPost),
                        Some(now_numbered) => numbered = now_numbered,
                    }
                }
                Err(TxFailure::Conditions(failed)) if failed[shards.clone()].iter().any(|f| *f) => {
                    return Ok(Marked::Answered);
                }
                Err(TxFailure::Conditions(failed)) => {
                    return Ok(Marked::ExtraFailed(failed.into_iter().skip(extra_at).collect()));
                }
                Err(TxFailure::Store(e)) => return Err(e),
            }
        }
        Err(StoreError::Unavailable(
            "a post's delete kept racing the backfill that numbers it".into(),
        ))
    }

    /// Whether the post on `board` has a number; `None` when there is no such post.
    async fn post_numbered(&self, board: &str, post_id: &str) -> StoreResult<Option<bool>> {
        const NUMBERED: super::attributes::Projection = super::attributes::Projection {
            expression: "board, #number",
            names: &[("#number", "number")],
        };
        let item = self
            .get_with(key(post_pk(post_id), POST_SK.into()), true, Some(&NUMBERED))
            .await?;
        Ok(item
            .filter(|item| super::attributes::text(item, "board") == Some(board))
            .map(|item| item.contains_key("number")))
    }

    /// How many extra items step 1's transaction has room for: DynamoDB's
    /// 100 less the post, its marker, its shards and its board's count.
    pub(super) fn mark_room(&self) -> usize {
        TRANSACTION_ITEMS.saturating_sub(3 + self.layout.counter_shards as usize)
    }

    /// Step 2: the open reports its report pointers and reporters name
    ///, then the post's comments, pointers, reporters, likes and counter
    /// shards (step 1 took the shards; a table written before shard
    /// creation checked its post may hold one more), then its marker.
    /// Idempotent: a report deleted already (by a removal's step 1, by a
    /// resolve, or by an interrupted run of this purge) costs a write unit
    /// and nothing else.
    async fn purge_post(&self, board: &str, post_id: &str) -> StoreResult<()> {
        let mut reports = BTreeSet::new();
        let mut children = Vec::new();
        let mut images = Vec::new();
        for (key, found) in self.keys_under(post_pk(post_id)).await? {
            let image = super::attributes::text(&key, "SK").and_then(super::media::child_image);
            match (image, found.text) {
                // An attached image's child: released (its image due
                // for the sweep), not just deleted; the text event may have
                // done it first.
                (Some(id), Some(text)) => images.push((id.to_owned(), text)),
                _ => children.push(key),
            }
            reports.extend(found.report_id);
        }
        self.release_each(post_id, images, &crate::domain::now()).await?;
        for pk in all_likes_pks(post_id).chain([legacy_likes_pk(post_id)]) {
            children.extend(self.keys_under(pk).await?.into_iter().map(|(key, _)| key));
        }
        children.extend(self.shard_keys(board, post_id));
        children.push(purge_marker(post_id));
        // The reports first, in requests of their own: until their pointers
        // and reporters go, a resumed purge finds them again.
        let reports = reports.into_iter().map(|id| key(reports_pk(board), id)).collect();
        self.delete_all(reports).await?;
        self.delete_all(children).await
    }

    /// Whether the post's purge is pending (its step 2 has not finished).
    pub async fn purge_pending(&self, post_id: &str) -> StoreResult<bool> {
        Ok(self.get(purge_marker(post_id)).await?.is_some())
    }

    /// Every item key under one partition key (for deleting a post's
    /// children), each with the report id it names, if any: a report
    /// pointer's or a reporter's (no other item has `report_id`), and
    /// the text an attached image's child names.
    async fn keys_under(&self, pk: String) -> StoreResult<Vec<(Item, Found)>> {
        let shape = |q: aws_sdk_dynamodb::operation::query::builders::QueryFluentBuilder| {
            q.key_condition_expression("PK = :pk")
                .projection_expression("PK, SK, #report_id, #text")
                .expression_attribute_names("#report_id", "report_id")
                .expression_attribute_names("#text", "text")
        };
        let items = self.query_all(&pk, None, &shape).await?;
        Ok(items
            .into_iter()
            .map(|mut item| {
                let mut take = |name: &str| item.remove(name).and_then(|v| v.as_s().ok().cloned());
                let found = Found {
                    report_id: take("report_id"),
                    text: take("text"),
                };
                (item, found)
            })
            .collect())
    }

    /// Deletes keys 25 at a time, retrying what DynamoDB leaves unprocessed.
    pub(super) async fn delete_all(&self, keys: Vec<Item>) -> StoreResult<()> {
        for chunk in keys.chunks(25) {
            let touched: Vec<String> = chunk.iter().map(pk_of).collect();
            let mut pending: Vec<WriteRequest> = chunk
                .iter()
                .map(|k| {
                    let delete = DeleteRequest::builder().set_key(Some(k.clone())).build()?;
                    Ok(WriteRequest::builder().delete_request(delete).build())
                })
                .collect::<StoreResult<_>>()?;
            let mut backoff = Duration::from_millis(20);
            for attempt in 0.. {
                let out = self
                    .client()
                    .await
                    .batch_write_item()
                    .request_items(&self.table, pending)
                    .metered(self, &touched)
                    .await?;
                pending = out
                    .unprocessed_items
                    .and_then(|mut m| m.remove(&self.table))
                    .unwrap_or_default();
                if pending.is_empty() {
                    break;
                }
                if attempt >= 8 {
                    return Err(StoreError::Unavailable(format!(
                        "{} deletes left unprocessed",
                        pending.len()
                    )));
                }
                tokio::time::sleep(backoff).await;
                backoff = (backoff * 2).min(Duration::from_secs(1));
            }
        }
        Ok(())
    }
}

#[async_trait::async_trait]
impl Purges for DynamoStore {
    /// One Query of the marker partition, oldest posts first.
    async fn pending_purges(&self, limit: usize) -> StoreResult<Vec<PendingPurge>> {
        let out = self
            .client()
            .await
            .query()
            .table_name(&self.table)
            .key_condition_expression("PK = :purge")
            .expression_attribute_values(":purge", s(PURGE_PK))
            .limit(i32::try_from(limit).unwrap_or(i32::MAX).max(1))
            .consistent_read(true)
            .metered(self, &[PURGE_PK.to_owned()])
            .await?;
        let text = |item: &Item, name: &str| item.get(name).and_then(|v| v.as_s().ok()).cloned();
        out.items
            .unwrap_or_default()
            .iter()
            .map(|item| match (text(item, "board"), text(item, "SK")) {
                (Some(board), Some(post)) => Ok(PendingPurge { board, post }),
                _ => Err(StoreError::Internal("a purge marker names no board or post".into())),
            })
            .collect()
    }

    /// The marker first (one GetItem): a purge redelivered after it
    /// finished, or named for a post that is not deleted, does nothing.
    /// The board is the marker's, not the caller's: a retried delete may
    /// have named another board, and the post's open reports are under its
    /// own.
    async fn purge(&self, pending: &PendingPurge) -> StoreResult<()> {
        let Some(marker) = self.get(purge_marker(&pending.post)).await? else {
            return Ok(());
        };
        match marker.get("board").and_then(|v| v.as_s().ok()) {
            Some(board) => self.purge_post(board, &pending.post).await,
            None => Err(StoreError::Internal(format!(
                "the purge marker of post {} names no board",
                pending.post
            ))),
        }
    }
}

/// What [`DynamoStore::keys_under`] reads of an item besides its key.
#[derive(Debug, Default)]
struct Found {
    report_id: Option<String>,
    text: Option<String>,
}
