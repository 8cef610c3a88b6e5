//! The DynamoDB adapter: one table, the layout in [`items`], the schema in
//! `infra/table.json`. Counters live in counter shards ([`counters`]) and
//! change in the same transaction as the items they count, so a like or
//! comment is never counted without existing.
//!
//! One file per port (`members`, `comments`, `votes`, `blocks`, `attempts`,
//! `idempotency`, `purges`...; `posts`, `notifications`, `moderation` and
//! `accounts` are folders, a file per part of the port); what several share
//! is in files of its own: the settings, attribute helpers, transactions,
//! single-item requests, paged queries, metered sending and the read cache.

mod accounts;
mod attempts;
mod attributes;
mod blocks;
mod boards;
mod cache;
mod capacity;
mod challenges;
mod client;
mod comments;
mod counters;
mod idempotency;
mod items;
mod media;
mod members;
mod metered;
pub mod migrate;
mod moderation;
mod notifications;
mod paged;
mod posts;
mod purges;
mod request_counter;
mod requests;
pub mod schema;
mod settings;
mod text_changes;
mod transact;
mod votes;

pub use cache::CacheStats;
pub use capacity::{CapacityMeter, Consumed, Partition, Units};
pub use items::{COMMENT_SK_PREFIX, DELETED_MEMBER_KIND, POST_PK_PREFIX, POST_SK};
pub(crate) use metered::sdk_error;
pub use purges::PURGE_PK;
pub use request_counter::RequestCounter;
pub use settings::{Layout, SdkTuning, client_config};
pub use text_changes::text_event_of;

use std::sync::Arc;
use std::time::Duration;

use aws_sdk_dynamodb::Client;

use super::StoreResult;
use cache::ReadCache;
use settings::{sdk_config, settings};

#[derive(Clone, Debug)]
pub struct DynamoStore {
    client: Arc<client::LazyClient>,
    table: String,
    layout: Layout,
    cache: Arc<ReadCache>,
    /// Adds up the capacity every request consumed (tests, measurements).
    meter: Option<CapacityMeter>,
}

/// Lambda functions and other processes write the same table: nothing
/// read here is exact for longer than it takes another writer to act.
impl super::Freshness for DynamoStore {}

impl DynamoStore {
    /// The store of `table`. With a local `endpoint` it connects now and
    /// creates the table when missing; with AWS itself the client is built
    /// on first use ([`client`]).
    pub async fn connect(
        table: &str,
        endpoint: Option<&str>,
        extra_roots: Option<&str>,
        tuning: &SdkTuning,
    ) -> StoreResult<Self> {
        let settings = settings(endpoint, extra_roots)?;
        if settings.is_local() {
            let client = Client::from_conf(sdk_config(&settings, tuning).await.build());
            return Self::with_client(client, table, true).await;
        }
        Ok(Self::new(client::LazyClient::on_first_use(settings, *tuning), table))
    }

    pub async fn with_client(client: Client, table: &str, create_if_missing: bool) -> StoreResult<Self> {
        if create_if_missing {
            schema::ensure_table(&client, table).await?;
        }
        Ok(Self::new(client::LazyClient::ready(client), table))
    }

    fn new(client: client::LazyClient, table: &str) -> Self {
        DynamoStore {
            client: Arc::new(client),
            table: table.to_owned(),
            layout: Layout::default(),
            cache: Arc::new(ReadCache::new(Duration::ZERO)),
            meter: None,
        }
    }

    /// The SDK client, built by the first call that needs it.
    async fn client(&self) -> &Client {
        self.client.get().await
    }

    /// Whether the SDK client exists yet (it is built on first use).
    pub fn client_is_built(&self) -> bool {
        self.client.is_built()
    }

    /// With `layout`'s shard count and read cache.
    pub fn with_layout(mut self, layout: Layout) -> Self {
        self.layout = Layout {
            counter_shards: layout.counter_shards.clamp(1, Layout::MAX_SHARDS),
            ..layout
        };
        self.cache = Arc::new(ReadCache::new(layout.read_cache_ttl));
        self
    }

    pub fn layout(&self) -> Layout {
        self.layout
    }

    /// The read cache's lookups so far: post details, counter shards, board pages.
    pub fn read_cache_stats(&self) -> [CacheStats; 3] {
        self.cache.stats()
    }

    /// Adds up what every request of this store consumes in `meter`.
    pub fn metered(mut self, meter: CapacityMeter) -> Self {
        self.meter = Some(meter);
        self
    }

    /// Adds what a request consumed to the meter; `touched` is the
    /// partition key of each item it named (see [`Consumed::partitions`]).
    fn record(&self, output: &impl capacity::Reports, touched: &[String]) {
        let (kind, reports) = output.reports();
        #[cfg(feature = "traces")]
        if crate::store::traced::counting() {
            let units = capacity::request_units(kind, reports);
            crate::store::traced::count_request(units.read, units.write);
        }
        if let Some(meter) = &self.meter {
            meter.record(kind, reports, touched);
        }
    }
}
