//! Idempotent creates, the application's side (docs/API.md, Idempotent
//! creates): each create use case claims its request's key itself, after
//! the request passed validation and its limits and before any hash or
//! write ([`App::once`]); the create completes the record in its own
//! transaction with the answer; a create that did not succeed, or whose
//! request was dropped, releases the key, so a retry is processed afresh.
//! The HTTP layer computes the fingerprint and says which status a success
//! answers; the store keeps the record.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use super::{App, ClientAddress};
use crate::domain::{MemberId, new_id};
use crate::error::ApiError;
use crate::store::Store;
use crate::store::idempotency::{Claim, Claimed, Completion};

/// A create request's `Idempotency-Key`, not claimed yet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IdempotencyKey {
    /// The key as stored: scoped by its owner.
    key: String,
    /// What the request is (method, path, identity, body).
    fingerprint: String,
    /// What the create's success answers (201), remembered with its body.
    success_status: u16,
}

impl IdempotencyKey {
    pub fn new(owner: KeyOwner<'_>, key: &str, fingerprint: String, success_status: u16) -> Self {
        IdempotencyKey {
            key: owner.scoped(key),
            fingerprint,
            success_status,
        }
    }
}

/// A key this request holds for its create.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IdempotencyClaim {
    claim: Claim,
    success_status: u16,
}

impl IdempotencyClaim {
    /// The record a create writes with its item: the answer it is about to
    /// give, `created` as the body.
    pub(crate) fn complete<T: serde::Serialize>(&self, created: &T) -> Result<Completion, ApiError> {
        let body = serde_json::to_string(created).map_err(|e| ApiError::Internal(e.to_string()))?;
        Ok(self.claim.complete(self.success_status, body))
    }

    /// The record of an action that answers `204` with no body.
    pub(crate) fn complete_empty(&self) -> Completion {
        self.claim.complete(self.success_status, String::new())
    }

    /// The claim, for a store write whose answer is decided in the write
    /// (a report: `201` opened or `200` joined).
    pub(crate) fn claim(&self) -> &Claim {
        &self.claim
    }
}

/// Whose key it is (docs/API.md, Idempotent creates): the bearer's
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

/// What a create answers: what it created, or the answer remembered for
/// its key (sent again with `Idempotent-Replayed: true`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer<T> {
    Created(T),
    Replayed(RememberedAnswer),
}

impl<T> Answer<T> {
    /// What was created, if this answer is not a replay.
    pub fn into_created(self) -> Option<T> {
        match self {
            Answer::Created(created) => Some(created),
            Answer::Replayed(_) => None,
        }
    }
}

/// What claiming a key found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClaimOutcome {
    /// The key is this request's now: run it with the claim.
    Fresh(IdempotencyClaim),
    /// The same request was answered before.
    Replay(RememberedAnswer),
}

/// Releases a claim whose request was dropped before it answered (the
/// client hung up, the server cut it off): without it the key would wait
/// out its lease (15 s).
struct ReleaseOnDrop {
    store: Arc<dyn Store>,
    claim: Option<Claim>,
}

impl Drop for ReleaseOnDrop {
    fn drop(&mut self) {
        let Some(Claim { key, token, .. }) = self.claim.take() else {
            return;
        };
        let store = Arc::clone(&self.store);
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                if let Err(e) = store.release(&key, &token).await {
                    tracing::warn!(error = %e, "could not release the key of a dropped request");
                }
            });
        }
    }
}

impl App {
    /// Claims `key`: `409 request_in_progress` while another request with
    /// it runs, `422 idempotency_key_reused` when it was used for another
    /// request, a replay when this request was answered before.
    pub async fn claim_idempotency_key(&self, key: &IdempotencyKey) -> Result<ClaimOutcome, ApiError> {
        let claim = Claim {
            key: key.key.clone(),
            fingerprint: key.fingerprint.clone(),
            token: new_id(),
            now: chrono::Utc::now().timestamp(),
        };
        match self.store.claim(&claim).await? {
            Claimed::Fresh => Ok(ClaimOutcome::Fresh(IdempotencyClaim {
                claim,
                success_status: key.success_status,
            })),
            Claimed::Replay(stored) => Ok(ClaimOutcome::Replay(RememberedAnswer {
                status: stored.status,
                body: stored.body,
            })),
            Claimed::InProgress => Err(ApiError::RequestInProgress { retry_after: 1 }),
            Claimed::Reused => Err(ApiError::IdempotencyKeyReused),
        }
    }

    /// Runs a create once per key: claims `key` (when the request has one)
    /// and runs `create` with the claim, whose transaction completes the
    /// record; a replay runs nothing. Called by each create use case after
    /// its validation and limits, before any hash or write (docs/API.md,
    /// Idempotent creates). A create that fails releases the key, and so
    /// does a request dropped while it runs.
    pub(super) async fn once<T, Fut>(
        &self,
        key: Option<&IdempotencyKey>,
        create: impl FnOnce(Option<IdempotencyClaim>) -> Fut,
    ) -> Result<Answer<T>, ApiError>
    where
        Fut: Future<Output = Result<T, ApiError>>,
    {
        let claim = match key {
            None => None,
            Some(key) => match self.claim_idempotency_key(key).await? {
                ClaimOutcome::Fresh(claim) => Some(claim),
                ClaimOutcome::Replay(answer) => return Ok(Answer::Replayed(answer)),
            },
        };
        let mut guard = ReleaseOnDrop {
            store: Arc::clone(&self.store),
            claim: claim.as_ref().map(|held| held.claim.clone()),
        };
        let created = create(claim.clone()).await;
        if let (Err(_), Some(held)) = (&created, claim) {
            self.release_idempotency_key(held).await;
        }
        // Answered: the create completed the record, or the key is released.
        guard.claim = None;
        created.map(Answer::Created)
    }

    /// Gives the key up after a request that created nothing. When the store
    /// is away it keeps trying for a while in the background (a server; a
    /// frozen Lambda environment resumes it at its next request); meanwhile
    /// retries get 409 until the lease ends.
    async fn release_idempotency_key(&self, held: IdempotencyClaim) {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::app::AppSettings;
    use crate::store::sqlite::SqliteStore;

    fn app(dir: &tempfile::TempDir) -> App {
        let store = SqliteStore::open(&dir.path().join("board.db")).unwrap();
        App::new(Arc::new(store), AppSettings::default())
    }

    /// docs/API.md, Idempotent creates: a request dropped while its
    /// create runs (the client hung up) gives its key back at once, not
    /// after its lease.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_request_dropped_while_its_create_runs_releases_its_key() {
        let dir = tempfile::tempdir().unwrap();
        let app = app(&dir);
        let client = ClientAddress("192.0.2.1".into());
        let key = IdempotencyKey::new(KeyOwner::Address(&client), "k-1", "fingerprint".into(), 201);
        let (started_tx, started_rx) = tokio::sync::oneshot::channel();
        let hung = app.once(Some(&key), |claim| async move {
            assert!(claim.is_some(), "the key was claimed before the create ran");
            started_tx.send(()).unwrap();
            std::future::pending::<Result<(), ApiError>>().await
        });
        tokio::select! {
            _ = hung => unreachable!("the create never ends"),
            _ = started_rx => {}
        }
        // Dropped (the select above ended); the release runs in the background.
        let mut outcome = app.claim_idempotency_key(&key).await;
        for _ in 0..100 {
            if matches!(outcome, Ok(ClaimOutcome::Fresh(_))) {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
            outcome = app.claim_idempotency_key(&key).await;
        }
        assert!(
            matches!(outcome, Ok(ClaimOutcome::Fresh(_))),
            "the key is free again well within its lease: {outcome:?}"
        );
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_failed_create_releases_its_key_for_a_retry() {
        let dir = tempfile::tempdir().unwrap();
        let app = app(&dir);
        let client = ClientAddress("192.0.2.1".into());
        let key = IdempotencyKey::new(KeyOwner::Address(&client), "k-2", "fingerprint".into(), 201);
        let failed: Result<Answer<()>, _> = app
            .once(Some(&key), |_| async { Err(ApiError::invalid_request("nope")) })
            .await;
        assert!(failed.is_err());
        assert!(matches!(
            app.claim_idempotency_key(&key).await,
            Ok(ClaimOutcome::Fresh(_))
        ));
        // That claim is held now: the same key is in progress until its lease ends.
        assert!(matches!(
            app.once(Some(&key), |_| async { Ok(()) }).await,
            Err(ApiError::RequestInProgress { .. })
        ));
    }
}
