//! The single-item requests several ports share: a get, a post's board, a
//! put of a new item (with its idempotency completion when there is one)
//! and the guarded replace of a password hash.

use aws_sdk_dynamodb::types::ReturnConsumedCapacity;

use super::DynamoStore;
use super::attributes::{Item, key, pk_of, s};
use super::items::{POST_SK, post_pk};
use super::transact::{TxFailure, is_conditional_failure, sdk_error};
use crate::store::{Completion, StoreError, StoreResult};

impl DynamoStore {
    /// A consistent GetItem.
    pub(super) async fn get(&self, key: Item) -> StoreResult<Option<Item>> {
        self.get_with(key, true).await
    }

    /// A GetItem, eventually consistent (half the cost) unless `consistent`.
    pub(super) async fn get_with(&self, key: Item, consistent: bool) -> StoreResult<Option<Item>> {
        let touched = [pk_of(&key)];
        let out = self
            .client()
            .await
            .get_item()
            .return_consumed_capacity(ReturnConsumedCapacity::Indexes)
            .table_name(&self.table)
            .set_key(Some(key))
            .consistent_read(consistent)
            .send()
            .await
            .inspect(|out| self.record(out, &touched))
            .map_err(sdk_error)?;
        Ok(out.item)
    }

    /// The board of a post (one consistent GetItem), `None` when there is no such post.
    pub(super) async fn post_board(&self, post_id: &str) -> StoreResult<Option<String>> {
        let out = self
            .client()
            .await
            .get_item()
            .return_consumed_capacity(ReturnConsumedCapacity::Indexes)
            .table_name(&self.table)
            .set_key(Some(key(post_pk(post_id), POST_SK.into())))
            .projection_expression("board")
            .consistent_read(true)
            .send()
            .await
            .inspect(|out| self.record(out, &[post_pk(post_id)]))
            .map_err(sdk_error)?;
        Ok(out
            .item
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
            .return_consumed_capacity(ReturnConsumedCapacity::Indexes)
            .table_name(&self.table)
            .set_item(Some(item))
            .condition_expression("attribute_not_exists(PK)")
            .send()
            .await
            .inspect(|out| self.record(out, &touched));
        match put {
            Ok(_) => Ok(true),
            Err(e) if is_conditional_failure(&e) => Ok(false),
            Err(e) => Err(sdk_error(e)),
        }
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
            .return_consumed_capacity(ReturnConsumedCapacity::Indexes)
            .table_name(&self.table)
            .set_key(Some(key))
            .update_expression(format!("SET {attribute} = :new"))
            .expression_attribute_values(":old", s(old))
            .expression_attribute_values(":new", s(new));
        if let Some(board) = board {
            condition += " AND board = :board";
            update = update.expression_attribute_values(":board", s(board));
        }
        match update
            .condition_expression(condition)
            .send()
            .await
            .inspect(|out| self.record(out, &touched))
        {
            Ok(_) => Ok(true),
            Err(e) if is_conditional_failure(&e) => Ok(false),
            Err(e) => Err(sdk_error(e)),
        }
    }
}
