//! [`Challenges`] on DynamoDB: one item per spent challenge, put only if
//! absent, removed by the table's TTL once the challenge has expired.

use async_trait::async_trait;

use super::DynamoStore;
use super::attributes::{Item, n, s};
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
        // One conditional put: false when the challenge was spent before.
        self.put_new(item, None).await
    }
}
