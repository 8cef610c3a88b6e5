//! What the workspace's tests share, as a dev-dependency (never linked by a
//! deployed binary): [`router`], the router's state without a socket;
//! [`dynamo_local`], a DynamoDB Local process a test owns (to stop and
//! restart it); [`lambda`], a local Lambda Runtime API and a function
//! binary started against it.

pub mod dynamo_local;
pub mod images;
pub mod lambda;
pub mod router;

/// A post number no other post of this process has: posts a test writes
/// through the store, without the use cases (which take one from the
/// board's counter), need one, since numbers are unique per board.
pub fn unique_number() -> u64 {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1_000_000);
    NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}
