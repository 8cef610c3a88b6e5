//! The adapter's settings: how counts spread and how long reads are cached
//! ([`Layout`]), the SDK's timeouts and retries ([`SdkTuning`]), and the SDK
//! client configuration built from them.

use std::time::Duration;

use aws_sdk_dynamodb::config::retry::RetryConfig;
use aws_sdk_dynamodb::config::timeout::TimeoutConfig;

use crate::aws::AwsSettings;
use crate::store::{StoreError, StoreResult};

/// How counts spread and how long reads are cached (`COUNTER_SHARDS`,
/// `READ_CACHE_TTL_MS`; docs/DESIGN.md "At internet scale").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layout {
    /// Counter shards per post: a view writes one, so one post takes about
    /// 1,000 views/s per shard. May only grow (a post's delete removes the
    /// shards below the current count).
    pub counter_shards: u32,
    /// How long this process serves a post, its first comments, a board
    /// page and counts from memory; zero reads the table every time.
    pub read_cache_ttl: Duration,
}

impl Layout {
    pub const DEFAULT_SHARDS: u32 = 16;
    /// A post's delete removes the post and every shard in one transaction
    /// (at most 100 items).
    pub const MAX_SHARDS: u32 = 64;
}

impl Default for Layout {
    fn default() -> Self {
        Layout {
            counter_shards: Self::DEFAULT_SHARDS,
            read_cache_ttl: Duration::ZERO,
        }
    }
}

/// Timeouts and retries, chosen rather than defaulted: against AWS a request
/// fails within 3 s instead of hanging (DynamoDB answers in milliseconds):
/// 500 ms to connect, 1 s per attempt, and a throttled, dropped or timed-out
/// call is retried twice (3 attempts) with the SDK's standard mode (jittered
/// exponential backoff, retry quota) before we answer 503. DynamoDB Local, a
/// JVM emulator that serialises requests, gets 10x the time so a busy test
/// machine is not mistaken for an outage. Each value can be set from the
/// environment (`crate::config`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SdkTuning {
    pub connect_timeout: Duration,
    pub attempt_timeout: Duration,
    pub operation_timeout: Duration,
    pub max_attempts: u32,
}

impl SdkTuning {
    pub fn defaults(local: bool) -> Self {
        let scale = if local { 10 } else { 1 };
        SdkTuning {
            connect_timeout: Duration::from_millis(500) * scale,
            attempt_timeout: Duration::from_secs(1) * scale,
            operation_timeout: Duration::from_secs(3) * scale,
            max_attempts: 3,
        }
    }

    pub fn timeout_config(&self) -> TimeoutConfig {
        TimeoutConfig::builder()
            .connect_timeout(self.connect_timeout)
            .operation_attempt_timeout(self.attempt_timeout)
            .operation_timeout(self.operation_timeout)
            .build()
    }

    pub fn retry_config(&self) -> RetryConfig {
        RetryConfig::standard().with_max_attempts(self.max_attempts)
    }
}

/// The SDK client configuration: the environment's region and credentials,
/// or, with an `endpoint` (DynamoDB Local), that endpoint with dummy
/// credentials (`crate::aws`; `extra_roots` is `AWS_CA_BUNDLE`'s PEM).
pub async fn client_config(
    endpoint: Option<&str>,
    extra_roots: Option<&str>,
    tuning: &SdkTuning,
) -> StoreResult<aws_sdk_dynamodb::config::Builder> {
    Ok(sdk_config(&settings(endpoint, extra_roots)?, tuning).await)
}

/// The region, credentials and TLS roots for `endpoint` (`crate::aws`).
pub(super) fn settings(endpoint: Option<&str>, extra_roots: Option<&str>) -> StoreResult<AwsSettings> {
    AwsSettings::new(endpoint, extra_roots).map_err(|e| StoreError::Internal(e.to_string()))
}

/// The SDK configuration from `settings`, with `tuning`'s timeouts and retries.
pub(super) async fn sdk_config(settings: &AwsSettings, tuning: &SdkTuning) -> aws_sdk_dynamodb::config::Builder {
    let loader = settings
        .loader()
        .timeout_config(tuning.timeout_config())
        .retry_config(tuning.retry_config());
    aws_sdk_dynamodb::config::Builder::from(&loader.load().await)
}
