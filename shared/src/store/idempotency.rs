//! Idempotency records (docs/API.md, "Idempotent creates"): a create sent
//! with an `Idempotency-Key` first claims the key; the create then writes
//! its item and completes the record, with the response it answers, in one
//! transaction conditioned on still holding the claim. So after any fault
//! either both exist or neither does, and a create whose claim was released
//! or taken over can never apply late.

/// How long a record answers replays (the API promises at least 24 hours).
pub const RECORD_SECONDS: i64 = 24 * 60 * 60;

/// How long a claim holds off other requests with the same key: longer than
/// a request runs (Lambda stops one at 10 s, the server at its request
/// timeout). A request that died holding a claim frees its key after this.
/// Only availability depends on it: a create can apply only while its claim
/// is its own, so a late one never applies over a later request's.
pub const LEASE_SECONDS: i64 = 15;

/// A claim on a key: who holds it (`token`, unique per request) and for
/// what request (`fingerprint`: method, path, identity and body).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Claim {
    pub key: String,
    pub fingerprint: String,
    pub token: String,
    /// Unix seconds.
    pub now: i64,
}

impl Claim {
    pub fn lease_until(&self) -> i64 {
        self.now + LEASE_SECONDS
    }

    /// When the claim's record goes if its request never answers: with its
    /// lease (docs/API.md, Idempotent creates), so a request that died,
    /// or one that never meant to finish, cannot hold a key for 24 hours.
    pub fn expires_at(&self) -> i64 {
        self.lease_until()
    }

    /// When an answered record goes: 24 hours after its claim.
    pub fn answered_until(&self) -> i64 {
        self.now + RECORD_SECONDS
    }

    /// What the create writes with its item: the claim's key and token, and
    /// the response.
    pub fn complete(&self, status: u16, body: String) -> Completion {
        Completion {
            key: self.key.clone(),
            token: self.token.clone(),
            response: StoredResponse { status, body },
            expires_at: self.answered_until(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredResponse {
    pub status: u16,
    pub body: String,
}

/// The record's completion, written in the create's own transaction, only
/// while the claim is still the writer's (else [`super::StoreError::ClaimLost`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Completion {
    pub key: String,
    pub token: String,
    pub response: StoredResponse,
    pub expires_at: i64,
}

/// What claiming a key found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Claimed {
    /// The key is this request's now: process it.
    Fresh,
    /// The same request was answered before: answer this again.
    Replay(StoredResponse),
    /// The same key is held by a request still running.
    InProgress,
    /// The key was used for another request.
    Reused,
}

/// A record as stored, for deciding a claim.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    pub fingerprint: String,
    pub token: String,
    pub lease_until: i64,
    pub expires_at: i64,
    /// `None` while the claim's request runs.
    pub response: Option<StoredResponse>,
}

/// The decision both stores share: `None` means the key may be (re)claimed
/// (no record, an expired one, or a dead request's lease, whatever request
/// held it: an unanswered claim never outlives its lease).
pub fn decide(record: Option<&Record>, claim: &Claim) -> Option<Claimed> {
    let record = record.filter(|r| r.expires_at > claim.now)?;
    if record.response.is_none() && record.lease_until <= claim.now {
        return None;
    }
    if record.fingerprint != claim.fingerprint {
        return Some(Claimed::Reused);
    }
    match &record.response {
        Some(response) => Some(Claimed::Replay(response.clone())),
        None => Some(Claimed::InProgress),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claim(fingerprint: &str, now: i64) -> Claim {
        Claim {
            key: "k".into(),
            fingerprint: fingerprint.into(),
            token: "t2".into(),
            now,
        }
    }

    fn record(fingerprint: &str, response: Option<StoredResponse>) -> Record {
        Record {
            fingerprint: fingerprint.into(),
            token: "t1".into(),
            lease_until: 1_000 + LEASE_SECONDS,
            expires_at: 1_000 + RECORD_SECONDS,
            response,
        }
    }

    #[test]
    fn a_claim_is_decided_by_the_record_it_finds() {
        let done = StoredResponse {
            status: 201,
            body: "{}".into(),
        };
        assert_eq!(decide(None, &claim("a", 1_000)), None);
        assert_eq!(
            decide(Some(&record("a", Some(done.clone()))), &claim("a", 1_001)),
            Some(Claimed::Replay(done.clone()))
        );
        assert_eq!(
            decide(Some(&record("a", Some(done.clone()))), &claim("b", 1_001)),
            Some(Claimed::Reused)
        );
        assert_eq!(
            decide(Some(&record("a", None)), &claim("a", 1_001)),
            Some(Claimed::InProgress)
        );
        // A dead request's lease ends; an answered key expires after 24 h.
        assert_eq!(
            decide(Some(&record("a", None)), &claim("a", 1_000 + LEASE_SECONDS)),
            None
        );
        // Whatever request held it: an unanswered claim is no squat.
        assert_eq!(
            decide(Some(&record("a", None)), &claim("b", 1_000 + LEASE_SECONDS)),
            None
        );
        assert_eq!(
            decide(Some(&record("a", None)), &claim("b", 1_000 + LEASE_SECONDS - 1)),
            Some(Claimed::Reused)
        );
        assert_eq!(
            decide(Some(&record("a", Some(done))), &claim("b", 1_000 + RECORD_SECONDS)),
            None
        );
    }
}
