//! [`Attempts`] on DynamoDB: one item per key and window, counted with
//! `ADD` and removed by the table's TTL.

use async_trait::async_trait;
use aws_sdk_dynamodb::types::ReturnValue;

use super::DynamoStore;
use super::attributes::{key, n, number};
use super::items::{attempt_pk, window_sk};
use crate::domain::Window;
use crate::store::dynamo::metered::Metered;
use crate::store::{AttemptKey, Attempts, StoreResult};

#[async_trait]
impl Attempts for DynamoStore {
    async fn record_failure(&self, key_name: &AttemptKey, window: Window) -> StoreResult<u64> {
        let key_name = key_name.as_str();
        // The window start is in the key, so a late TTL deletion never
        // stretches a window: expires_at only cleans up.
        let out = self
            .client()
            .await
            .update_item()
            .table_name(&self.table)
            .set_key(Some(key(attempt_pk(key_name), window_sk(window.start))))
            .update_expression("ADD failures :one SET expires_at = :expires_at")
            .expression_attribute_values(":one", n(1))
            .expression_attribute_values(":expires_at", n(window.end()))
            .return_values(ReturnValue::UpdatedNew)
            .metered(self, &[attempt_pk(key_name)])
            .await?;
        number(&out.attributes.unwrap_or_default(), "failures")
    }

    async fn forgive_failure(&self, key_name: &AttemptKey, window: Window) -> StoreResult<()> {
        let key_name = key_name.as_str();
        self.client()
            .await
            .update_item()
            .table_name(&self.table)
            .set_key(Some(key(attempt_pk(key_name), window_sk(window.start))))
            .update_expression("ADD failures :minus_one")
            .condition_expression("failures > :zero")
            .expression_attribute_values(":minus_one", n(-1))
            .expression_attribute_values(":zero", n(0))
            .metered_if(self, &[attempt_pk(key_name)])
            .await?;
        Ok(())
    }

    /// One DeleteItem (no item: nothing to delete, no error).
    async fn reset_failures(&self, key_name: &AttemptKey, window: Window) -> StoreResult<()> {
        let key_name = key_name.as_str();
        self.client()
            .await
            .delete_item()
            .table_name(&self.table)
            .set_key(Some(key(attempt_pk(key_name), window_sk(window.start))))
            .metered(self, &[attempt_pk(key_name)])
            .await?;
        Ok(())
    }

    async fn failures(&self, key_name: &AttemptKey, window: Window) -> StoreResult<u64> {
        let key_name = key_name.as_str();
        match self.get(key(attempt_pk(key_name), window_sk(window.start))).await? {
            Some(item) => number(&item, "failures"),
            None => Ok(0),
        }
    }
}
