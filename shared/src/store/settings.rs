//! The store's settings: which adapter, and its tuning. Read from the
//! environment by the composition root; printed at start without secrets.

use std::fmt;
#[cfg(feature = "sqlite")]
use std::path::PathBuf;
use std::sync::Arc;

#[cfg(feature = "dynamo")]
use super::dynamo;
#[cfg(feature = "sqlite")]
use super::sqlite;
use super::{Store, StoreResult};

/// Which store a deployment uses, and the one place an adapter is chosen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoreSettings {
    #[cfg(feature = "dynamo")]
    Dynamo {
        table: String,
        endpoint: Option<String>,
        /// `AWS_CA_BUNDLE`'s certificates (PEM), trusted beside the AWS roots.
        extra_roots: Option<String>,
        tuning: dynamo::SdkTuning,
        layout: dynamo::Layout,
    },
    #[cfg(feature = "sqlite")]
    Sqlite {
        path: PathBuf,
        busy_timeout: std::time::Duration,
        synchronous: sqlite::Synchronous,
    },
}

impl StoreSettings {
    pub fn is_dynamo(&self) -> bool {
        #[cfg(feature = "dynamo")]
        return matches!(self, StoreSettings::Dynamo { .. });
        #[cfg(not(feature = "dynamo"))]
        false
    }

    /// OpenTelemetry's `db.system.name` for this store.
    #[cfg(feature = "traces")]
    fn system(&self) -> &'static str {
        match self {
            #[cfg(feature = "dynamo")]
            StoreSettings::Dynamo { .. } => "aws.dynamodb",
            #[cfg(feature = "sqlite")]
            StoreSettings::Sqlite { .. } => "sqlite",
        }
    }

    /// The table, or the database file's name (not its directory).
    #[cfg(feature = "traces")]
    fn namespace(&self) -> String {
        match self {
            #[cfg(feature = "dynamo")]
            StoreSettings::Dynamo { table, .. } => table.clone(),
            #[cfg(feature = "sqlite")]
            StoreSettings::Sqlite { path, .. } => path
                .file_name()
                .map_or_else(String::new, |name| name.to_string_lossy().into_owned()),
        }
    }

    pub async fn open(&self) -> StoreResult<Arc<dyn Store>> {
        #[cfg_attr(not(any(feature = "sqlite", feature = "dynamo")), expect(unused_variables))]
        let store: Arc<dyn Store> = match self {
            #[cfg(feature = "dynamo")]
            StoreSettings::Dynamo {
                table,
                endpoint,
                extra_roots,
                tuning,
                layout,
            } => Arc::new(
                dynamo::DynamoStore::connect(table, endpoint.as_deref(), extra_roots.as_deref(), tuning)
                    .await?
                    .with_layout(*layout),
            ),
            #[cfg(feature = "sqlite")]
            StoreSettings::Sqlite {
                path,
                busy_timeout,
                synchronous,
            } => Arc::new(sqlite::SqliteStore::open_with(path, *busy_timeout, *synchronous)?),
            #[cfg(not(any(feature = "sqlite", feature = "dynamo")))]
            _ => return Err(super::StoreError::Internal("this build has no store".into())),
        };
        #[cfg(feature = "traces")]
        let store: Arc<dyn Store> = Arc::new(super::traced::TracedStore::new(store, self.system(), self.namespace()));
        #[cfg_attr(not(any(feature = "sqlite", feature = "dynamo")), expect(unreachable_code))]
        Ok(store)
    }
}

/// The redacted summary printed at start.
impl fmt::Display for StoreSettings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            #[cfg(feature = "dynamo")]
            StoreSettings::Dynamo {
                table,
                endpoint,
                extra_roots,
                tuning,
                layout,
            } => write!(
                f,
                "store=dynamodb table={table} endpoint={} extra_ca_bundle={} attempt_timeout_ms={} operation_timeout_ms={} max_attempts={} counter_shards={} read_cache_ttl_ms={}",
                endpoint.as_deref().map_or_else(|| "aws".to_owned(), without_userinfo),
                extra_roots.is_some(),
                tuning.attempt_timeout.as_millis(),
                tuning.operation_timeout.as_millis(),
                tuning.max_attempts,
                layout.counter_shards,
                layout.read_cache_ttl.as_millis()
            ),
            #[cfg(feature = "sqlite")]
            StoreSettings::Sqlite {
                path,
                busy_timeout,
                synchronous,
            } => write!(
                f,
                "store=sqlite path={} busy_timeout_ms={} synchronous={}",
                path.display(),
                busy_timeout.as_millis(),
                synchronous.as_str()
            ),
            #[cfg(not(any(feature = "sqlite", feature = "dynamo")))]
            _ => f.write_str("store=none"),
        }
    }
}

/// An endpoint URL as printed: `user:password@` removed.
#[cfg(feature = "dynamo")]
fn without_userinfo(url: &str) -> String {
    match url.split_once("://") {
        Some((scheme, rest)) => match rest.split_once('@') {
            Some((userinfo, host)) if !userinfo.contains('/') => format!("{scheme}://{host}"),
            _ => url.to_owned(),
        },
        None => url.to_owned(),
    }
}

#[cfg(all(test, feature = "dynamo"))]
mod tests {
    use super::*;

    #[test]
    fn an_endpoint_is_printed_without_its_credentials() {
        assert_eq!(without_userinfo("http://user:pw@db.local:8000"), "http://db.local:8000");
        assert_eq!(without_userinfo("http://127.0.0.1:8000"), "http://127.0.0.1:8000");
        assert_eq!(without_userinfo("http://host/path@x"), "http://host/path@x");
    }
}
