//! [`Idempotency`] on SQLite: the `idempotency` table, and the completion
//! every create writes in its own transaction.

use async_trait::async_trait;
use rusqlite::{OptionalExtension, TransactionBehavior, params};

use super::{SqliteStore, sql_error};
use crate::store::idempotency::{self, Claim, Claimed, Completion, Record, StoredResponse};
use crate::store::{Idempotency, StoreError, StoreResult};

/// Completes an idempotency record inside the create's transaction, only if
/// the request still holds its claim (else the whole create rolls back).
pub(super) fn complete(tx: &rusqlite::Transaction<'_>, done: Option<&Completion>) -> StoreResult<()> {
    let Some(done) = done else { return Ok(()) };
    let completed = tx
        .execute(
            "UPDATE idempotency SET status = ?1, body = ?2, expires_at = ?3
             WHERE key = ?4 AND token = ?5 AND status IS NULL",
            params![
                done.response.status,
                done.response.body,
                done.expires_at,
                done.key,
                done.token
            ],
        )
        .map_err(sql_error)?;
    if completed == 1 {
        Ok(())
    } else {
        Err(StoreError::ClaimLost)
    }
}

#[async_trait]
impl Idempotency for SqliteStore {
    async fn claim(&self, claim: &Claim) -> StoreResult<Claimed> {
        let claim = claim.clone();
        self.with_unseen(move |conn| {
            let tx = conn
                .transaction_with_behavior(TransactionBehavior::Immediate)
                .map_err(sql_error)?;
            let record = tx
                .query_row(
                    "SELECT fingerprint, token, lease_until, expires_at, status, body FROM idempotency WHERE key = ?1",
                    [&claim.key],
                    |row| {
                        let status: Option<u16> = row.get(4)?;
                        let body: Option<String> = row.get(5)?;
                        Ok(Record {
                            fingerprint: row.get(0)?,
                            token: row.get(1)?,
                            lease_until: row.get(2)?,
                            expires_at: row.get(3)?,
                            response: status.zip(body).map(|(status, body)| StoredResponse { status, body }),
                        })
                    },
                )
                .optional()
                .map_err(sql_error)?;
            if let Some(decided) = idempotency::decide(record.as_ref(), &claim) {
                return Ok(decided);
            }
            tx.execute(
                "INSERT OR REPLACE INTO idempotency (key, fingerprint, token, lease_until, expires_at, status, body)
                 VALUES (?1, ?2, ?3, ?4, ?5, NULL, NULL)",
                params![
                    claim.key,
                    claim.fingerprint,
                    claim.token,
                    claim.lease_until(),
                    claim.expires_at()
                ],
            )
            .map_err(sql_error)?;
            // Expired records go as new ones come: no sweeper needed.
            tx.execute("DELETE FROM idempotency WHERE expires_at <= ?1", [claim.now])
                .map_err(sql_error)?;
            tx.commit().map_err(sql_error)?;
            Ok(Claimed::Fresh)
        })
        .await
    }

    async fn release(&self, key: &str, token: &str) -> StoreResult<()> {
        let (key, token) = (key.to_owned(), token.to_owned());
        self.with_unseen(move |conn| {
            conn.execute(
                "DELETE FROM idempotency WHERE key = ?1 AND token = ?2 AND status IS NULL",
                params![key, token],
            )
            .map_err(sql_error)?;
            Ok(())
        })
        .await
    }
}
