//! Transactions: a run with retries on conflicts (and on a counter shard
//! created on first use), the retry of a write that lost a race with
//! another, and the items transactions are made of.

use std::future::Future;
use std::time::Duration;

use aws_sdk_dynamodb::operation::transact_write_items::TransactWriteItemsError;
use aws_sdk_dynamodb::types::{AttributeValue, ConditionCheck, Delete, Put, TransactWriteItem, Update};

use super::DynamoStore;
use super::attributes::{Item, n, pk_of};
use super::items::shard_key;
use crate::store::dynamo::metered::{Metered, sdk_error};
use crate::store::{StoreError, StoreResult};

/// How often a write that lost a race (another ban of the same subject,
/// another first report of the same target, a report of a comment being
/// deleted or removed) starts over before giving up: each lost race is another
/// write's win, so this many writers at once all get through.
const RACES: u32 = 16;

/// A short jittered pause before starting over after a lost race, growing
/// with `attempt`, so racing writers do not meet again at once.
async fn pause_after_race(attempt: u32) {
    let ceiling = 5u64 << attempt.min(5);
    tokio::time::sleep(Duration::from_millis(rand::random::<u64>() % (ceiling + 1))).await;
}

/// Whether the condition of item `at` failed.
pub(super) fn failed_at(failed: &[bool], at: usize) -> bool {
    failed.get(at) == Some(&true)
}

/// How one attempt of a write that reads, then writes in a transaction
/// conditioned on what it read, ended.
pub(super) enum Race<T, S> {
    /// The answer.
    Done(T),
    /// Another write came between the read and the transaction: read again
    /// and start over with `S`, after a short pause.
    Lost(S),
    /// Start over at once with `S`, which already says what changed.
    Again(S),
}

/// Runs `attempt` (a read, then a transaction) until it answers, starting
/// over when it lost a race; [`StoreError::Unavailable`] with `gave_up`
/// after [`RACES`] attempts. `state` is what one attempt tells the next.
pub(super) async fn retry_races<S, T, F, Fut>(gave_up: &str, mut state: S, mut attempt: F) -> StoreResult<T>
where
    F: FnMut(S) -> Fut,
    Fut: Future<Output = StoreResult<Race<T, S>>>,
{
    let mut lost = false;
    for count in 0..RACES {
        if lost {
            pause_after_race(count).await;
        }
        (state, lost) = match attempt(state).await? {
            Race::Done(answer) => return Ok(answer),
            Race::Lost(next) => (next, true),
            Race::Again(next) => (next, false),
        };
    }
    Err(StoreError::Unavailable(gave_up.to_owned()))
}

/// How a transaction ended when it did not commit.
pub(super) enum TxFailure {
    /// Which items' conditions failed, in request order.
    Conditions(Vec<bool>),
    Store(StoreError),
}

/// The most items one `TransactWriteItems` takes.
pub(super) const TRANSACTION_ITEMS: usize = 100;

/// A shard's key names its board: existing is enough.
const SHARD_EXISTS: &str = "attribute_exists(PK)";

/// A shard that counts no comment answering its post (the edit lock).
pub(super) const UNANSWERED: &str = "attribute_not_exists(answers) OR answers <= :zero";

/// A write's condition with its placeholders; [`Condition::NONE`] writes
/// whatever is there.
#[derive(Clone, Copy)]
pub(super) struct Condition<'a> {
    expression: Option<&'a str>,
    names: &'a [(&'a str, &'a str)],
    values: &'a [(&'a str, AttributeValue)],
}

impl<'a> Condition<'a> {
    pub(super) const NONE: Condition<'static> = Condition {
        expression: None,
        names: &[],
        values: &[],
    };

    pub(super) fn new(expression: &'a str) -> Self {
        Condition {
            expression: Some(expression),
            ..Condition::NONE
        }
    }

    pub(super) fn names(self, names: &'a [(&'a str, &'a str)]) -> Self {
        Condition { names, ..self }
    }

    pub(super) fn values(self, values: &'a [(&'a str, AttributeValue)]) -> Self {
        Condition { values, ..self }
    }
}

impl<'a> From<&'a str> for Condition<'a> {
    fn from(expression: &'a str) -> Self {
        Condition::new(expression)
    }
}

impl<'a> From<Option<&'a str>> for Condition<'a> {
    fn from(expression: Option<&'a str>) -> Self {
        expression.map_or(Condition::NONE, Condition::new)
    }
}

/// A condition's values; none (DynamoDB refuses an empty map) when it has none.
fn values_of(values: &[(&str, AttributeValue)]) -> Option<std::collections::HashMap<String, AttributeValue>> {
    (!values.is_empty()).then(|| {
        values
            .iter()
            .map(|(name, value)| ((*name).to_owned(), value.clone()))
            .collect()
    })
}

/// An expression's attribute names; none when it has none.
fn names_of(names: &[(&str, &str)]) -> Option<std::collections::HashMap<String, String>> {
    (!names.is_empty()).then(|| {
        names
            .iter()
            .map(|(placeholder, name)| ((*placeholder).to_owned(), (*name).to_owned()))
            .collect()
    })
}

/// The partition keys a transaction's items name, one entry per item.
fn touched_by(items: &[TransactWriteItem]) -> Vec<String> {
    items
        .iter()
        .filter_map(|item| {
            item.put()
                .map(|p| p.item())
                .or_else(|| item.update().map(|u| u.key()))
                .or_else(|| item.delete().map(|d| d.key()))
                .or_else(|| item.condition_check().map(|c| c.key()))
        })
        .map(pk_of)
        .collect()
}

impl DynamoStore {
    /// Runs a transaction, retrying when it lost a race with another
    /// transaction on the same items (a hot post under many likes).
    pub(super) async fn transact(&self, items: Vec<TransactWriteItem>) -> Result<(), TxFailure> {
        let touched = touched_by(&items);
        let mut backoff = Duration::from_millis(5);
        for _ in 0..12 {
            let result = self
                .client()
                .await
                .transact_write_items()
                .set_transact_items(Some(items.clone()))
                .send_metered(self, &touched)
                .await;
            let err = match result {
                Ok(_) => return Ok(()),
                Err(err) => err,
            };
            let conflict = match err.as_service_error() {
                Some(TransactWriteItemsError::TransactionCanceledException(cancelled)) => {
                    let codes: Vec<Option<&str>> = cancelled.cancellation_reasons().iter().map(|r| r.code()).collect();
                    if codes.contains(&Some("ConditionalCheckFailed")) {
                        return Err(TxFailure::Conditions(
                            codes.iter().map(|c| *c == Some("ConditionalCheckFailed")).collect(),
                        ));
                    }
                    codes.contains(&Some("TransactionConflict"))
                }
                Some(TransactWriteItemsError::TransactionInProgressException(_)) => true,
                _ => false,
            };
            if !conflict {
                return Err(TxFailure::Store(sdk_error(err)));
            }
            let jitter = Duration::from_micros(rand::random::<u64>() % (backoff.as_micros() as u64 + 1));
            tokio::time::sleep(backoff + jitter).await;
            backoff = (backoff * 2).min(Duration::from_millis(200));
        }
        Err(TxFailure::Store(StoreError::Unavailable(
            "transaction kept conflicting with concurrent writes".into(),
        )))
    }

    /// A transaction that counts on one counter shard (its item
    /// `shard_at`): when that shard does not exist yet, creates it if the
    /// post is on `board` (checked in the same write), and runs the
    /// transaction again. `Ok(None)`
    /// when the post is not there; the other items' failed conditions are
    /// the caller's to read.
    pub(super) async fn transact_counting(
        &self,
        board: &str,
        post_id: &str,
        shard: u32,
        shard_at: usize,
        items: Vec<TransactWriteItem>,
    ) -> StoreResult<Option<Result<(), Vec<bool>>>> {
        let mut created = false;
        loop {
            match self.transact(items.clone()).await {
                Ok(()) => return Ok(Some(Ok(()))),
                Err(TxFailure::Conditions(failed)) if failed.get(shard_at) == Some(&true) && !created => {
                    if !self.ensure_shard(board, post_id, shard).await? {
                        return Ok(None);
                    }
                    created = true;
                }
                Err(TxFailure::Conditions(failed)) if failed.get(shard_at) == Some(&true) => return Ok(None),
                Err(TxFailure::Conditions(failed)) => return Ok(Some(Err(failed))),
                Err(TxFailure::Store(e)) => return Err(e),
            }
        }
    }

    /// A transaction item that puts `item` if `condition` holds.
    pub(super) fn put<'a>(&self, item: Item, condition: impl Into<Condition<'a>>) -> StoreResult<TransactWriteItem> {
        let condition = condition.into();
        let put = Put::builder()
            .table_name(&self.table)
            .set_item(Some(item))
            .set_condition_expression(condition.expression.map(str::to_owned))
            .set_expression_attribute_names(names_of(condition.names))
            .set_expression_attribute_values(values_of(condition.values))
            .build()?;
        Ok(TransactWriteItem::builder().put(put).build())
    }

    /// A transaction item that puts `item` over whatever is there.
    pub(super) fn overwrite(&self, item: Item) -> StoreResult<TransactWriteItem> {
        self.put(item, Condition::NONE)
    }

    /// A transaction item that deletes `key` if `condition` holds.
    pub(super) fn delete<'a>(&self, key: Item, condition: impl Into<Condition<'a>>) -> StoreResult<TransactWriteItem> {
        let condition = condition.into();
        let delete = Delete::builder()
            .table_name(&self.table)
            .set_key(Some(key))
            .set_condition_expression(condition.expression.map(str::to_owned))
            .set_expression_attribute_names(names_of(condition.names))
            .set_expression_attribute_values(values_of(condition.values))
            .build()?;
        Ok(TransactWriteItem::builder().delete(delete).build())
    }

    /// A transaction item that writes nothing and requires `condition` of `key`.
    pub(super) fn check(
        &self,
        key: Item,
        condition: &str,
        values: &[(&str, AttributeValue)],
    ) -> StoreResult<TransactWriteItem> {
        let check = ConditionCheck::builder()
            .table_name(&self.table)
            .set_key(Some(key))
            .condition_expression(condition)
            .set_expression_attribute_values(values_of(values))
            .build()?;
        Ok(TransactWriteItem::builder().condition_check(check).build())
    }

    /// A transaction item that applies `expression` to `key`, if `condition`
    /// holds when given; `names` and `values` are the placeholders both use.
    pub(super) fn update(
        &self,
        key: Item,
        expression: &str,
        condition: Option<&str>,
        names: &[(&str, &str)],
        values: &[(&str, AttributeValue)],
    ) -> StoreResult<TransactWriteItem> {
        let update = Update::builder()
            .table_name(&self.table)
            .set_key(Some(key))
            .update_expression(expression)
            .set_condition_expression(condition.map(str::to_owned))
            .set_expression_attribute_names(names_of(names))
            .set_expression_attribute_values(values_of(values))
            .build()?;
        Ok(TransactWriteItem::builder().update(update).build())
    }

    /// `ADD <counter> <delta>` on counter shard `shard` of a post of `board`.
    /// A comment's count on its shard and, when it answers the post (the
    /// edit lock), its count in the shard's `answers`, which an author's
    /// edit or delete checks on every shard ([`Self::unanswered`]).
    pub(super) fn count_comment_on_shard(
        &self,
        board: &str,
        post_id: &str,
        shard: u32,
        delta: i64,
        answer: bool,
    ) -> StoreResult<TransactWriteItem> {
        if !answer {
            return self.count_on_shard(board, post_id, shard, "comments", delta);
        }
        self.update(
            shard_key(board, post_id, shard),
            "ADD comments :delta, answers :delta",
            Some(SHARD_EXISTS),
            &[],
            &[(":delta", n(delta))],
        )
    }

    /// Checks, on each of the post's shards, that none counts an answer:
    /// in an author's edit on a board with the edit lock, the lock is
    /// decided in the edit's own write (a shard not created yet counts none).
    pub(super) fn unanswered(&self, board: &str, post_id: &str) -> StoreResult<Vec<TransactWriteItem>> {
        self.shard_keys(board, post_id)
            .map(|shard| self.check(shard, UNANSWERED, &[(":zero", n(0))]))
            .collect()
    }

    pub(super) fn count_on_shard(
        &self,
        board: &str,
        post_id: &str,
        shard: u32,
        counter: &str,
        delta: i64,
    ) -> StoreResult<TransactWriteItem> {
        self.update(
            shard_key(board, post_id, shard),
            "ADD #counter :delta",
            Some(SHARD_EXISTS),
            &[("#counter", counter)],
            &[(":delta", n(delta))],
        )
    }
}
