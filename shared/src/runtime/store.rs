//! The store's settings from the environment: DynamoDB when `TABLE_NAME` is
//! set (with `DYNAMODB_ENDPOINT` for DynamoDB Local), else the SQLite file
//! under the server's `DATA_DIR`.

use std::path::Path;
#[cfg(feature = "dynamo")]
use std::time::Duration;

use super::{ConfigError, Env};
use crate::store::StoreSettings;
#[cfg(feature = "dynamo")]
use crate::store::dynamo::{Layout, SdkTuning};
#[cfg(feature = "sqlite")]
use crate::store::sqlite;

pub(super) fn store_settings(env: &Env<'_>, data_dir: Option<&Path>) -> Result<StoreSettings, ConfigError> {
    #[cfg(feature = "dynamo")]
    if let Some(table) = env.get("TABLE_NAME") {
        return dynamo_settings(env, table);
    }
    #[cfg(not(feature = "dynamo"))]
    if env.get("TABLE_NAME").is_some() {
        return Err(ConfigError::invalid(
            "TABLE_NAME: this build has no DynamoDB store (feature `dynamo`)",
        ));
    }
    match data_dir {
        #[cfg(feature = "sqlite")]
        Some(dir) => Ok(StoreSettings::Sqlite {
            path: dir.join("boards.sqlite3"),
            busy_timeout: env
                .millis("SQLITE_BUSY_TIMEOUT_MS")?
                .unwrap_or(sqlite::DEFAULT_BUSY_TIMEOUT),
            synchronous: match env
                .get("SQLITE_SYNCHRONOUS")
                .map(|v| v.trim().to_ascii_uppercase())
                .as_deref()
            {
                None | Some("FULL") => sqlite::Synchronous::Full,
                Some("NORMAL") => sqlite::Synchronous::Normal,
                Some(other) => {
                    return Err(ConfigError::invalid(format!(
                        "SQLITE_SYNCHRONOUS must be FULL or NORMAL, not {other:?}"
                    )));
                }
            },
        }),
        #[cfg(not(feature = "sqlite"))]
        Some(_) => Err(ConfigError::invalid(
            "TABLE_NAME is required: this build has no SQLite store (feature `sqlite`)",
        )),
        None => Err(ConfigError::invalid("TABLE_NAME is required on Lambda")),
    }
}

#[cfg(feature = "dynamo")]
fn dynamo_settings(env: &Env<'_>, table: String) -> Result<StoreSettings, ConfigError> {
    let endpoint = env.get("DYNAMODB_ENDPOINT");
    let mut tuning = SdkTuning::defaults(endpoint.is_some());
    if let Some(t) = env.millis("DYNAMODB_CONNECT_TIMEOUT_MS")? {
        tuning.connect_timeout = t;
    }
    if let Some(t) = env.millis("DYNAMODB_ATTEMPT_TIMEOUT_MS")? {
        tuning.attempt_timeout = t;
    }
    if let Some(t) = env.millis("DYNAMODB_OPERATION_TIMEOUT_MS")? {
        tuning.operation_timeout = t;
    }
    if let Some(n) = env.number::<u32>("DYNAMODB_MAX_ATTEMPTS", 1, "a positive whole number")? {
        tuning.max_attempts = n;
    }
    let mut layout = Layout::default();
    if let Some(shards) = env.number::<u32>("COUNTER_SHARDS", 1, "a whole number from 1 to 64")? {
        if shards > Layout::MAX_SHARDS {
            return Err(ConfigError::invalid(format!(
                "COUNTER_SHARDS must be a whole number from 1 to {}, not {shards}",
                Layout::MAX_SHARDS
            )));
        }
        layout.counter_shards = shards;
    }
    if let Some(ttl) = env.number::<u64>("READ_CACHE_TTL_MS", 0, "a whole number of milliseconds")? {
        layout.read_cache_ttl = Duration::from_millis(ttl);
    }
    Ok(StoreSettings::Dynamo {
        table,
        endpoint,
        extra_roots: ca_bundle(env)?,
        tuning,
        layout,
    })
}

/// The file `AWS_CA_BUNDLE` names, read once at start-up; unset is `None`.
#[cfg(feature = "dynamo")]
pub fn ca_bundle(env: &Env<'_>) -> Result<Option<String>, ConfigError> {
    use crate::aws::CA_BUNDLE_SETTING;
    let Some(path) = env.get(CA_BUNDLE_SETTING) else {
        return Ok(None);
    };
    std::fs::read_to_string(&path)
        .map(Some)
        .map_err(|e| ConfigError::invalid(format!("{CA_BUNDLE_SETTING}: reading {path}: {e}")))
}
