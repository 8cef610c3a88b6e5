//! The single-item requests several ports share: a get, a post's board, a
//! put of a new item (with its idempotency completion when there is one)
//! and the guarded replace of a password hash; and the reads by many keys
//! (BatchGetItem) and by id (the `ById` index).

use std::collections::HashMap;
use std::time::Duration;

use aws_sdk_dynamodb::types::{AttributeValue, KeysAndAttributes};

use super::DynamoStore;
use super::attributes::{Item, Projection, key, pk_of, s};
use super::items::{BY_ID_INDEX, POST_SK, post_pk};
use super::transact::TxFailure;
use crate::store::dynamo::metered::Metered;
use crate::store::{Completion, StoreError, StoreResult};

/// BatchGetItem takes at most 100 keys.
pub(super) const BATCH_KEYS: usize = 100;

impl DynamoStore {
    /// A consistent GetItem of the whole item.
    pub(super) async fn get(&self, key: Item) -> StoreResult<Option<Item>> {
        self.get_with(key, true, None).await
    }

    /// A GetItem, eventually consistent (half the cost) unless
    /// `consistent`; with `projection`, of those attributes only (less to
    /// send back: the units are the whole item's).
    pub(super) async fn get_with(
        &self,
        key: Item,
        consistent: bool,
        projection: Option<&Projection>,
    ) -> StoreResult<Option<Item>> {
        let touched = [pk_of(&key)];
        let out = self
            .client()
            .await
            .get_item()
            .table_name(&self.table)
            .set_key(Some(key))
            .set_projection_expression(projection.map(|p| p.expression.to_owned()))
            // DynamoDB refuses an empty map of names.
            .set_expression_attribute_names(projection.filter(|p| !p.names.is_empty()).map(Projection::names))
            .consistent_read(consistent)
            .metered(self, &touched)
            .await?;
        Ok(out.item)
    }

    /// One BatchGetItem of at most 100 distinct keys (whole items, or
    /// `projection`), retried for the keys DynamoDB leaves unprocessed.
    /// Eventually consistent unless `consistent`.
    pub(super) async fn batch_get(
        &self,
        keys: Vec<Item>,
        consistent: bool,
        projection: Option<&Projection>,
    ) -> StoreResult<Vec<Item>> {
        let mut items = Vec::with_capacity(keys.len());
        let mut pending = Some(keys);
        let mut backoff = Duration::from_millis(20);
        for attempt in 0.. {
            let Some(keys) = pending.take().filter(|k| !k.is_empty()) else {
                return Ok(items);
            };
            if attempt > 8 {
                return Err(StoreError::Unavailable(format!(
                    "{} reads left unprocessed",
                    keys.len()
                )));
            }
            if attempt > 0 {
                tokio::time::sleep(backoff).await;
                backoff = (backoff * 2).min(Duration::from_secs(1));
            }
            let touched: Vec<String> = keys.iter().map(pk_of).collect();
            let request = KeysAndAttributes::builder()
                .set_keys(Some(keys))
                .set_projection_expression(projection.map(|p| p.expression.to_owned()))
                // DynamoDB refuses an empty map of names.
                .set_expression_attribute_names(projection.filter(|p| !p.names.is_empty()).map(Projection::names))
                .consistent_read(consistent)
                .build()?;
            let mut out = self
                .client()
                .await
                .batch_get_item()
                .request_items(&self.table, request)
                .metered(self, &touched)
                .await?;
            items.extend(
                out.responses
                    .as_mut()
                    .and_then(|r| r.remove(&self.table))
                    .unwrap_or_default(),
            );
            pending = out
                .unprocessed_keys
                .and_then(|mut u| u.remove(&self.table))
                .map(|k| k.keys);
        }
        unreachable!("the loop returns")
    }

    /// The keys (`PK`, `SK`) of the items whose `id` is `id`: one
    /// Query on the keys-only index `ById` (posts, comments and members
    /// carry `id`). Index reads are eventually consistent: an item written
    /// a moment ago may be missing.
    pub(super) async fn keys_by_id(&self, id: &str) -> StoreResult<Vec<(String, String)>> {
        let out = self
            .client()
            .await
            .query()
            .table_name(&self.table)
            .index_name(BY_ID_INDEX)
            .key_condition_expression("#id = :id")
            .expression_attribute_names("#id", "id")
            .expression_attribute_values(":id", s(id))
            // The index's units are metered on its own (Partition::IdIndex).
            .metered(self, &[])
            .await?;
        let text = |item: &Item, name: &str| item.get(name).and_then(|v| v.as_s().ok()).cloned();
        Ok(out
            .items
            .unwrap_or_default()
            .iter()
            .filter_map(|item| Some((text(item, "PK")?, text(item, "SK")?)))
            .collect())
    }

    /// The board of a post (one consistent GetItem), `None` when there is no such post.
    pub(super) async fn post_board(&self, post_id: &str) -> StoreResult<Option<String>> {
        const BOARD: Projection = Projection {
            expression: "board",
            names: &[],
        };
        let item = self
            .get_with(key(post_pk(post_id), POST_SK.into()), true, Some(&BOARD))
            .await?;
        Ok(item
            .and_then(|mut item| item.remove("board"))
            .and_then(|board| board.as_s().ok().cloned()))
    }

    /// Puts an item that must not exist yet; with `done`, in one
    /// transaction with that idempotency record's completion. False when the
    /// item exists; [`StoreError::ClaimLost`] when the claim is gone.
    pub(super) async fn put_new(&self, item: Item, done: Option<&Completion>) -> StoreResult<bool> {
        if let Some(done) = done {
            let items = vec![self.put(item, "attribute_not_exists(PK)")?, self.complete(done)?];
            return match self.transact(items).await {
                Ok(()) => Ok(true),
                Err(TxFailure::Conditions(failed)) if failed.first() == Some(&true) => Ok(false),
                Err(TxFailure::Conditions(_)) => Err(StoreError::ClaimLost),
                Err(TxFailure::Store(e)) => Err(e),
            };
        }
        let touched = [pk_of(&item)];
        let put = self
            .client()
            .await
            .put_item()
            .table_name(&self.table)
            .set_item(Some(item))
            .condition_expression("attribute_not_exists(PK)")
            .metered_if(self, &touched)
            .await?;
        Ok(put.is_some())
    }

    /// One UpdateItem applying `expression` if `condition` holds: false
    /// when it did not (nothing changed). `names` and `values` are the
    /// placeholders both use (none may be empty: DynamoDB refuses empty maps).
    pub(super) async fn update_if(
        &self,
        key: Item,
        expression: &str,
        condition: &str,
        names: HashMap<String, String>,
        values: HashMap<String, AttributeValue>,
    ) -> StoreResult<bool> {
        let touched = [pk_of(&key)];
        let result = self
            .client()
            .await
            .update_item()
            .table_name(&self.table)
            .set_key(Some(key))
            .update_expression(expression)
            .condition_expression(condition)
            .set_expression_attribute_names((!names.is_empty()).then_some(names))
            .set_expression_attribute_values((!values.is_empty()).then_some(values))
            .metered_if(self, &touched)
            .await?;
        Ok(result.is_some())
    }

    /// A guarded replace of an item's password hash: only if it is still `old`.
    pub(super) async fn replace_hash(
        &self,
        key: Item,
        attribute: &str,
        board: Option<&str>,
        old: &str,
        new: &str,
    ) -> StoreResult<bool> {
        let touched = [pk_of(&key)];
        let mut condition = format!("{attribute} = :old");
        let mut update = self
            .client()
            .await
            .update_item()
            .table_name(&self.table)
            .set_key(Some(key))
            .update_expression(format!("SET {attribute} = :new"))
            .expression_attribute_values(":old", s(old))
            .expression_attribute_values(":new", s(new));
        if let Some(board) = board {
            condition += " AND board = :board";
            update = update.expression_attribute_values(":board", s(board));
        }
        Ok(update
            .condition_expression(condition)
            .metered_if(self, &touched)
            .await?
            .is_some())
    }
}
