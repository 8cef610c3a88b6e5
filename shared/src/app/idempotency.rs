//! Idempotent creates, the application's side (docs/API.md, Idempotent
//! creates): a key is claimed for a request's fingerprint before its create
//! runs; the create completes the record in its own transaction with the
//! answer; a create that did not succeed releases the key, so a retry is
//! processed afresh. The HTTP layer computes the fingerprint and says which
//! status a success answers; the store keeps the record.

use std::time::Duration;

use super::{App, ClientAddress};
use crate::domain::{MemberId, new_id};
use crate::error::ApiError;
use crate::store::idempotency::{Claim, Claimed, Completion};

/// A key this request holds for its create.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IdempotencyClaim {
    claim: Claim,
    /// What the create's success answers (201), remembered with its body.
    success_status: u16,
}

impl IdempotencyClaim {
    /// The record a create writes with its item: the answer it is about to
    /// give, `created` as the body.
    pub(crate) fn complete<T: serde::Serialize>(&self, created: &T) -> Result<Completion, ApiError> {
        let body = serde_json::to_string(created).map_err(|e| ApiError::Internal(e.to_string()))?;
        Ok(self.claim.complete(self.success_status, body))
    }
}

/// Whose key it is (docs/API.md, Idempotent creates, v3): the bearer's
/// member, else the client address. The same key sent by another owner is
/// another key: its own create, never a `422` and never another's replay.
#[derive(Debug, Clone, Copy)]
pub enum KeyOwner<'a> {
    Member(&'a MemberId),
    Address(&'a ClientAddress),
}

impl KeyOwner<'_> {
    /// The key as stored. The owner part holds no space, so keys of two
    /// owners never meet whatever the keys hold.
    fn scoped(self, key: &str) -> String {
        match self {
            KeyOwner::Member(member) => format!("member:{} {key}", member.as_str()),
            KeyOwner::Address(address) => format!("address:{} {key}", address.0.replace(' ', "_")),
        }
    }
}

/// An answer remembered for a key: sent again, nothing run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RememberedAnswer {
    pub status: u16,
    pub body: String,
}

/// What claiming a key found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClaimOutcome {
    /// The key is this request's now: run it with the claim.
    Fresh(IdempotencyClaim),
    /// The same request was answered before.
    Replay(RememberedAnswer),
}

impl App {
    /// Claims `key` for the request `fingerprint` names: `409
    /// request_in_progress` while another request with it runs, `422
    /// idempotency_key_reused` when it was used for another request.
    pub async fn claim_idempotency_key(
        &self,
        owner: KeyOwner<'_>,
        key: &str,
        fingerprint: String,
        success_status: u16,
    ) -> Result<ClaimOutcome, ApiError> {
        let claim = Claim {
            key: owner.scoped(key),
            fingerprint,
            token: new_id(),
            now: chrono::Utc::now().timestamp(),
        };
        match self.store.claim(&claim).await? {
            Claimed::Fresh => Ok(ClaimOutcome::Fresh(IdempotencyClaim { claim, success_status })),
            Claimed::Replay(stored) => Ok(ClaimOutcome::Replay(RememberedAnswer {
                status: stored.status,
                body: stored.body,
            })),
            Claimed::InProgress => Err(ApiError::RequestInProgress { retry_after: 1 }),
            Claimed::Reused => Err(ApiError::IdempotencyKeyReused),
        }
    }

    /// Gives the key up after a request that created nothing. When the store
    /// is away it keeps trying for a while in the background (a server; a
    /// frozen Lambda environment resumes it at its next request); meanwhile
    /// retries get 409 until the lease ends.
    pub async fn release_idempotency_key(&self, held: IdempotencyClaim) {
        let Claim { key, token, .. } = held.claim;
        if let Err(e) = self.store.release(&key, &token).await {
            tracing::warn!(error = %e, "could not release an idempotency key; retrying");
            let store = self.store.clone();
            tokio::spawn(async move {
                for _ in 0..10 {
                    tokio::time::sleep(Duration::from_secs(1)).await;
                    if store.release(&key, &token).await.is_ok() {
                        return;
                    }
                }
            });
        }
    }
}
