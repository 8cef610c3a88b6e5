//! [`Challenges`] on DynamoDB: one item per spent challenge, put only if
//! absent, removed by the table's TTL once the challenge has expired.

use async_trait::async_trait;
use aws_sdk_dynamodb::types::ReturnConsumedCapacity;

use super::DynamoStore;
use super::attributes::{Item, n, s};
use super::transact::{is_conditional_failure, sdk_error};
use crate::store::{Challenges, StoreResult};

/// `POW#<challenge>`: the challenge's digest spreads them over partitions.
fn spent_pk(challenge: &str) -> String {
    format!("POW#{challenge}")
}

const SPENT_SK: &str = "SPENT";

#[async_trait]
impl Challenges for DynamoStore {
    async fn spend_challenge(&self, challenge: &str, expires_at: i64) -> StoreResult<bool> {
        let item = Item::from([
            ("PK".to_owned(), s(spent_pk(challenge))),
            ("SK".to_owned(), s(SPENT_SK)),
            ("expires_at".to_owned(), n(expires_at)),
        ]);
        let touched = [spent_pk(challenge)];
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
}
