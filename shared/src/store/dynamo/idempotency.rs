//! Idempotency records in the table: `IDEM#<key>` / `IDEM` with the
//! request's fingerprint, the claiming request's token, its lease, the
//! response once answered, and `expires_at` (TTL; reads ignore an expired
//! record, since TTL deletion is late). See `crate::store::idempotency`.

use aws_sdk_dynamodb::types::{AttributeValue, TransactWriteItem};

use super::DynamoStore;
use super::attributes::{Item, key, n, s};
use crate::store::dynamo::metered::Metered;
use crate::store::idempotency::{self, Claim, Claimed, Completion, Record, StoredResponse};
use crate::store::{Idempotency, StoreError, StoreResult};

const IDEM_SK: &str = "IDEM";

fn idem_pk(key: &str) -> String {
    format!("IDEM#{key}")
}

fn record_of(item: &Item) -> Option<Record> {
    let text = |name: &str| item.get(name).and_then(|v| v.as_s().ok()).cloned();
    let number = |name: &str| {
        item.get(name)
            .and_then(|v| v.as_n().ok())
            .and_then(|v| v.parse::<i64>().ok())
    };
    let response = match (number("status"), text("body")) {
        (Some(status), Some(body)) => Some(StoredResponse {
            status: u16::try_from(status).ok()?,
            body,
        }),
        _ => None,
    };
    Some(Record {
        fingerprint: text("fingerprint")?,
        token: text("token")?,
        lease_until: number("lease_until")?,
        expires_at: number("expires_at")?,
        response,
    })
}

impl DynamoStore {
    /// The transaction item that completes `done`'s record, only while its
    /// request still holds the claim.
    pub(super) fn complete(&self, done: &Completion) -> StoreResult<TransactWriteItem> {
        self.update(
            key(idem_pk(&done.key), IDEM_SK.into()),
            "SET #status = :status, body = :body, expires_at = :expires_at",
            Some("#token = :token AND attribute_not_exists(#status)"),
            &[("#status", "status"), ("#token", "token")],
            &[
                (":status", n(i64::from(done.response.status))),
                (":body", s(done.response.body.clone())),
                (":expires_at", n(done.expires_at)),
                (":token", s(done.token.clone())),
            ],
        )
    }

    /// Writes a fresh claim over what `found` was (nothing, an expired
    /// record, a dead request's lease); false when another request changed
    /// the record meanwhile.
    async fn put_claim(&self, claim: &Claim, found: Option<&Record>) -> StoreResult<bool> {
        let pk = idem_pk(&claim.key);
        let mut put = self
            .client()
            .await
            .put_item()
            .table_name(&self.table)
            .item("PK", s(pk.clone()))
            .item("SK", s(IDEM_SK))
            .item("fingerprint", s(claim.fingerprint.clone()))
            .item("token", s(claim.token.clone()))
            .item("lease_until", n(claim.lease_until()))
            .item("expires_at", n(claim.expires_at()));
        put = match found {
            None => put.condition_expression("attribute_not_exists(PK)"),
            Some(record) => put
                .condition_expression("#token = :seen")
                .expression_attribute_names("#token", "token")
                .expression_attribute_values(":seen", AttributeValue::S(record.token.clone())),
        };
        Ok(put.metered_if(self, &[pk]).await?.is_some())
    }
}

#[async_trait::async_trait]
impl Idempotency for DynamoStore {
    /// A consistent read decides; a claim is a conditional put on what was
    /// read, so two requests racing for one key cannot both win.
    async fn claim(&self, claim: &Claim) -> StoreResult<Claimed> {
        for _ in 0..3 {
            let found = self
                .get(key(idem_pk(&claim.key), IDEM_SK.into()))
                .await?
                .map(|item| {
                    record_of(&item).ok_or_else(|| StoreError::Internal("unreadable idempotency record".into()))
                })
                .transpose()?;
            if let Some(decided) = idempotency::decide(found.as_ref(), claim) {
                return Ok(decided);
            }
            if self.put_claim(claim, found.as_ref()).await? {
                return Ok(Claimed::Fresh);
            }
        }
        // Three races lost in a row: some other request holds the key now.
        Ok(Claimed::InProgress)
    }

    async fn release(&self, key_name: &str, token: &str) -> StoreResult<()> {
        let pk = idem_pk(key_name);
        self.client()
            .await
            .delete_item()
            .table_name(&self.table)
            .set_key(Some(key(pk.clone(), IDEM_SK.into())))
            .condition_expression("#token = :token AND attribute_not_exists(#status)")
            .expression_attribute_names("#token", "token")
            .expression_attribute_names("#status", "status")
            .expression_attribute_values(":token", s(token))
            .metered_if(self, &[pk])
            .await?;
        Ok(())
    }
}
