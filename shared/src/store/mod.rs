//! Storage: the ports and their two adapters (DynamoDB single-table,
//! embedded SQLite). The use cases (`app`) depend on the ports, the small
//! traits `ports!` declares; the adapters implement them, and
//! [`StoreSettings`] opens one (wrapped in [`traced::TracedStore`] when
//! traces are on) for `runtime` to wire in. The HTTP handlers never name
//! the store: they call the use cases. The store imports only `error`,
//! `domain`, `private_files` and `aws` (tests/layers.rs checks the order).

/// Declares each port of `ports!` as an `async_trait` of the store
/// (defined before the modules: `ports.rs` expands it).
macro_rules! declare_ports {
    ($(
        $(#[$port_doc:meta])*
        pub trait $port:ident {
            $(
                $(#[$method_doc:meta])*
                async fn $method:ident(&self $(, $arg:ident: $ty:ty)* $(,)?) -> $ret:ty;
            )*
        }
    )*) => {
        $(
            $(#[$port_doc])*
            #[async_trait::async_trait]
            pub trait $port: Send + Sync {
                $(
                    $(#[$method_doc])*
                    async fn $method(&self $(, $arg: $ty)*) -> $ret;
                )*
            }
        )*
    };
}

pub mod cursor;
#[cfg(feature = "dynamo")]
pub mod dynamo;
mod error;
pub mod files;
pub mod idempotency;
mod ports;
mod records;
mod settings;
#[cfg(feature = "sqlite")]
pub mod sqlite;
#[cfg(feature = "traces")]
pub mod traced;

use async_trait::async_trait;
pub use error::{StoreError, StoreResult};
pub use idempotency::Completion;
pub use ports::*;
pub use records::*;
pub use settings::StoreSettings;

pub use idempotency::Claim;

/// Whether what this process read may be kept until a write changes it
/// (`app::read_cache`).
pub trait Freshness: Send + Sync {
    /// A number that grows after every write that may change a board page
    /// or a post detail, when this process is the store's only writer (the
    /// server's SQLite file); `None` when other processes write too, so
    /// nothing read may be kept as exact.
    fn generation(&self) -> Option<u64> {
        None
    }
}

/// Everything a deployment needs from its store.
pub trait Store:
    Members
    + BoardDirectory
    + Posts
    + Comments
    + Votes
    + Attempts
    + Challenges
    + Idempotency
    + Moderation
    + Accounts
    + SecondFactors
    + Notifications
    + Blocks
    + Media
    + Purges
    + Freshness
{
}

impl<
    T: Members
        + BoardDirectory
        + Posts
        + Comments
        + Votes
        + Attempts
        + Challenges
        + Idempotency
        + Moderation
        + Accounts
        + SecondFactors
        + Notifications
        + Blocks
        + Media
        + Purges
        + Freshness,
> Store for T
{
}

/// Records an adapter keeps as their JSON (bans, reports, log entries).
#[cfg(any(feature = "sqlite", feature = "dynamo"))]
pub(crate) fn to_json<T: serde::Serialize>(value: &T) -> StoreResult<String> {
    serde_json::to_string(value).map_err(|e| StoreError::Internal(e.to_string()))
}

#[cfg(any(feature = "sqlite", feature = "dynamo"))]
pub(crate) fn from_json<T: serde::de::DeserializeOwned>(text: &str) -> StoreResult<T> {
    serde_json::from_str(text).map_err(|e| StoreError::Internal(format!("a stored record does not parse: {e}")))
}

/// The subject of a stored ban, or an internal error.
#[cfg(any(feature = "sqlite", feature = "dynamo"))]
pub(crate) fn ban_subject(key: &str) -> StoreResult<crate::domain::BanSubject> {
    crate::domain::BanSubject::from_key(key)
        .ok_or_else(|| StoreError::Internal(format!("a stored ban subject does not parse: {key}")))
}
