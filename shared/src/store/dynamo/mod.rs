//! The DynamoDB adapter: one table, the layout in [`items`], the schema in
//! `infra/table.json`. Counters live in counter shards ([`counters`]) and
//! change in the same transaction as the items they count, so a like or
//! comment is never counted without existing.

mod cache;
mod capacity;
mod client;
mod counters;
mod idempotency;
mod items;
pub mod migrate;
mod purge;
pub mod schema;

pub use capacity::{CapacityMeter, Consumed, Partition, Units};

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use async_trait::async_trait;
use aws_sdk_dynamodb::Client;
use aws_sdk_dynamodb::config::interceptors::BeforeTransmitInterceptorContextRef;
use aws_sdk_dynamodb::config::retry::RetryConfig;
use aws_sdk_dynamodb::config::timeout::TimeoutConfig;
use aws_sdk_dynamodb::config::{ConfigBag, Intercept, RuntimeComponents};
use aws_sdk_dynamodb::error::{DisplayErrorContext, ProvideErrorMetadata, SdkError};
use aws_sdk_dynamodb::operation::transact_write_items::TransactWriteItemsError;
use aws_sdk_dynamodb::types::{
    AttributeValue, ConditionCheck, Delete, DeleteRequest, Put, ReturnConsumedCapacity, ReturnValue, TransactWriteItem,
    Update, WriteRequest,
};
use aws_smithy_runtime_api::box_error::BoxError;
use serde::de::DeserializeOwned;

use super::{
    AttemptKey, Attempts, Comments, Completion, Likes, Members, PostEdit, Posts, StoreError, StoreResult, cursor,
};
use crate::aws::AwsSettings;
use crate::domain::{
    BoardSlug, COMMENTS_PAGE, Comment, CommentKey, CommentPage, Guard, LikeState, Member, MemberCredentials, MemberId,
    Page, PageLimit, PasswordHash, Post, PostDetail, PostId, PostKey, PostSummary, Username, Window,
};
use items::*;

type Item = HashMap<String, AttributeValue>;

#[derive(Clone, Debug)]
pub struct DynamoStore {
    client: Arc<client::LazyClient>,
    table: String,
    layout: Layout,
    cache: Arc<ReadCache>,
    /// Adds up the capacity every request consumed (tests, measurements).
    meter: Option<CapacityMeter>,
}

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

/// What a process may serve from memory (see [`cache`]). The entry caps
/// bound its memory: a post with its first comments is at most about 360 KB
/// (60 KB of body, 50 comments of 6 KB), so 64 of them stay under 25 MB of a
/// 256 MB function; a board page of 100 summaries about 100 KB.
#[derive(Debug)]
struct ReadCache {
    /// A post item with its first page of comments, by post id.
    details: cache::TtlMap<String, Arc<(PostItem, CommentPage)>>,
    shards: cache::TtlMap<String, counters::Shards>,
    /// A board-index page (limit + 1 summaries) by board, cursor and limit.
    pages: cache::TtlMap<(String, Option<String>, usize), Arc<Vec<SummaryFields>>>,
}

impl ReadCache {
    fn new(ttl: Duration) -> Self {
        ReadCache {
            details: cache::TtlMap::new(ttl, 64),
            shards: cache::TtlMap::new(ttl, 4_096),
            pages: cache::TtlMap::new(ttl, 64),
        }
    }

    /// Forgets what this process read of a post it just changed.
    fn forget_post(&self, post_id: &str) {
        self.details.remove(&post_id.to_owned());
        self.shards.remove(&post_id.to_owned());
    }
}

/// Counts HTTP requests sent to DynamoDB (retries included): tests use it to
/// prove how many round trips an operation costs.
#[derive(Debug, Default, Clone)]
pub struct RequestCounter(Arc<AtomicU64>);

impl RequestCounter {
    pub fn count(&self) -> u64 {
        self.0.load(Ordering::SeqCst)
    }
}

impl Intercept for RequestCounter {
    fn name(&self) -> &'static str {
        "RequestCounter"
    }

    fn read_before_transmit(
        &self,
        _context: &BeforeTransmitInterceptorContextRef<'_>,
        _runtime_components: &RuntimeComponents,
        _cfg: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        self.0.fetch_add(1, Ordering::SeqCst);
        Ok(())
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

fn settings(endpoint: Option<&str>, extra_roots: Option<&str>) -> StoreResult<AwsSettings> {
    AwsSettings::new(endpoint, extra_roots).map_err(|e| StoreError::Internal(e.to_string()))
}

async fn sdk_config(settings: &AwsSettings, tuning: &SdkTuning) -> aws_sdk_dynamodb::config::Builder {
    let loader = settings
        .loader()
        .timeout_config(tuning.timeout_config())
        .retry_config(tuning.retry_config());
    aws_sdk_dynamodb::config::Builder::from(&loader.load().await)
}

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

    /// Adds up what every request of this store consumes in `meter`.
    pub fn metered(mut self, meter: CapacityMeter) -> Self {
        self.meter = Some(meter);
        self
    }

    /// Adds what a request consumed to the meter; `touched` is the
    /// partition key of each item it named (see [`Consumed::partitions`]).
    fn record(&self, output: &impl capacity::Reports, touched: &[String]) {
        if let Some(meter) = &self.meter {
            let (kind, reports) = output.reports();
            meter.record(kind, reports, touched);
        }
    }
}

/// Throttling, timeouts and unreachable endpoints are "unavailable" (503).
pub(crate) fn sdk_error<E, R>(err: SdkError<E, R>) -> StoreError
where
    E: ProvideErrorMetadata + std::error::Error + 'static,
    R: std::fmt::Debug,
{
    let transient = match &err {
        SdkError::ServiceError(service) => matches!(
            service.err().code(),
            Some(
                "ProvisionedThroughputExceededException"
                    | "ThrottlingException"
                    | "RequestLimitExceeded"
                    | "InternalServerError"
                    | "ServiceUnavailable"
                    | "LimitExceededException"
            )
        ),
        _ => true, // dispatch failures, timeouts, unreadable responses
    };
    let message = DisplayErrorContext(&err).to_string();
    if transient {
        StoreError::Unavailable(message)
    } else {
        StoreError::Internal(message)
    }
}

fn s(value: impl Into<String>) -> AttributeValue {
    AttributeValue::S(value.into())
}

fn n(value: i64) -> AttributeValue {
    AttributeValue::N(value.to_string())
}

fn key(pk: String, sk: String) -> Item {
    HashMap::from([("PK".to_owned(), s(pk)), ("SK".to_owned(), s(sk))])
}

fn to_item<T: serde::Serialize>(value: &T) -> StoreResult<Item> {
    serde_dynamo::to_item(value).map_err(|e| StoreError::Internal(format!("encoding item: {e}")))
}

fn from_item<T: DeserializeOwned>(item: Item) -> StoreResult<T> {
    serde_dynamo::from_item(item).map_err(|e| StoreError::Internal(format!("decoding item: {e}")))
}

fn number(item: &Item, name: &str) -> StoreResult<u64> {
    item.get(name)
        .and_then(|v| v.as_n().ok())
        .and_then(|v| v.parse().ok())
        .ok_or_else(|| StoreError::Internal(format!("item has no number `{name}`")))
}

fn is_conditional_failure<E: ProvideErrorMetadata, R>(err: &SdkError<E, R>) -> bool {
    err.as_service_error()
        .is_some_and(|e| e.code() == Some("ConditionalCheckFailedException"))
}

/// How a transaction ended when it did not commit.
enum TxFailure {
    /// Which items' conditions failed, in request order.
    Conditions(Vec<bool>),
    Store(StoreError),
}

const POST_ON_BOARD: &str = "attribute_exists(PK) AND board = :board";
/// A shard's key names its board: existing is enough.
const SHARD_EXISTS: &str = "attribute_exists(PK)";

/// The partition key of an item or key (for the capacity meter).
fn pk_of(item: &Item) -> String {
    item.get("PK").and_then(|v| v.as_s().ok()).cloned().unwrap_or_default()
}

/// The partition keys a transaction's items name, one entry per item.
fn touched_by(items: &[TransactWriteItem]) -> Vec<String> {
    items
        .iter()
        .filter_map(|item| {
            item.put()
                .map(|p| p.item())
                .or_else(|| item.update().map(|u| u.key()))
                .or_else(|| item.delete().map(|d| d.key()))
                .or_else(|| item.condition_check().map(|c| c.key()))
        })
        .map(pk_of)
        .collect()
}

impl DynamoStore {
    /// Runs a transaction, retrying when it lost a race with another
    /// transaction on the same items (a hot post under many likes).
    async fn transact(&self, items: Vec<TransactWriteItem>) -> Result<(), TxFailure> {
        let touched = touched_by(&items);
        let mut backoff = Duration::from_millis(5);
        for _ in 0..12 {
            let result = self
                .client()
                .await
                .transact_write_items()
                .return_consumed_capacity(ReturnConsumedCapacity::Indexes)
                .set_transact_items(Some(items.clone()))
                .send()
                .await
                .inspect(|out| self.record(out, &touched));
            let err = match result {
                Ok(_) => return Ok(()),
                Err(err) => err,
            };
            let conflict = match err.as_service_error() {
                Some(TransactWriteItemsError::TransactionCanceledException(cancelled)) => {
                    let codes: Vec<Option<&str>> = cancelled.cancellation_reasons().iter().map(|r| r.code()).collect();
                    if codes.contains(&Some("ConditionalCheckFailed")) {
                        return Err(TxFailure::Conditions(
                            codes.iter().map(|c| *c == Some("ConditionalCheckFailed")).collect(),
                        ));
                    }
                    codes.contains(&Some("TransactionConflict"))
                }
                Some(TransactWriteItemsError::TransactionInProgressException(_)) => true,
                _ => false,
            };
            if !conflict {
                return Err(TxFailure::Store(sdk_error(err)));
            }
            let jitter = Duration::from_micros(rand::random::<u64>() % (backoff.as_micros() as u64 + 1));
            tokio::time::sleep(backoff + jitter).await;
            backoff = (backoff * 2).min(Duration::from_millis(200));
        }
        Err(TxFailure::Store(StoreError::Unavailable(
            "transaction kept conflicting with concurrent writes".into(),
        )))
    }

    /// A transaction that counts on one counter shard (its item
    /// `shard_at`): when that shard does not exist yet, creates it once the
    /// post is seen on `board`, and runs the transaction again. `Ok(None)`
    /// when the post is not there; the other items' failed conditions are
    /// the caller's to read.
    async fn transact_counting(
        &self,
        board: &str,
        post_id: &str,
        shard: u32,
        shard_at: usize,
        items: Vec<TransactWriteItem>,
    ) -> StoreResult<Option<Result<(), Vec<bool>>>> {
        let mut created = false;
        loop {
            match self.transact(items.clone()).await {
                Ok(()) => return Ok(Some(Ok(()))),
                Err(TxFailure::Conditions(failed)) if failed.get(shard_at) == Some(&true) && !created => {
                    if self.post_board(post_id).await?.as_deref() != Some(board) {
                        return Ok(None);
                    }
                    self.ensure_shard(board, post_id, shard).await?;
                    created = true;
                }
                Err(TxFailure::Conditions(failed)) if failed.get(shard_at) == Some(&true) => return Ok(None),
                Err(TxFailure::Conditions(failed)) => return Ok(Some(Err(failed))),
                Err(TxFailure::Store(e)) => return Err(e),
            }
        }
    }

    /// Puts an item that must not exist yet; with `done`, in one
    /// transaction with that idempotency record's completion. False when the
    /// item exists; [`StoreError::ClaimLost`] when the claim is gone.
    async fn put_new(&self, item: Item, done: Option<&Completion>) -> StoreResult<bool> {
        if let Some(done) = done {
            let items = vec![self.put(item, "attribute_not_exists(PK)")?, self.complete(done)?];
            return match self.transact(items).await {
                Ok(()) => Ok(true),
                Err(TxFailure::Conditions(failed)) if failed.first() == Some(&true) => Ok(false),
                Err(TxFailure::Conditions(_)) => Err(StoreError::ClaimLost),
                Err(TxFailure::Store(e)) => Err(e),
            };
        }
        let touched = [pk_of(&item)];
        let put = self
            .client()
            .await
            .put_item()
            .return_consumed_capacity(ReturnConsumedCapacity::Indexes)
            .table_name(&self.table)
            .set_item(Some(item))
            .condition_expression("attribute_not_exists(PK)")
            .send()
            .await
            .inspect(|out| self.record(out, &touched));
        match put {
            Ok(_) => Ok(true),
            Err(e) if is_conditional_failure(&e) => Ok(false),
            Err(e) => Err(sdk_error(e)),
        }
    }

    fn put(&self, item: Item, condition: &str) -> StoreResult<TransactWriteItem> {
        let put = Put::builder()
            .table_name(&self.table)
            .set_item(Some(item))
            .condition_expression(condition)
            .build()
            .map_err(|e| StoreError::Internal(e.to_string()))?;
        Ok(TransactWriteItem::builder().put(put).build())
    }

    fn delete(&self, key: Item, condition: Option<&str>) -> StoreResult<TransactWriteItem> {
        let delete = Delete::builder()
            .table_name(&self.table)
            .set_key(Some(key))
            .set_condition_expression(condition.map(str::to_owned))
            .build()
            .map_err(|e| StoreError::Internal(e.to_string()))?;
        Ok(TransactWriteItem::builder().delete(delete).build())
    }

    /// `ADD <counter> <delta>` on counter shard `shard` of a post of `board`.
    fn count_on_shard(
        &self,
        board: &str,
        post_id: &str,
        shard: u32,
        counter: &str,
        delta: i64,
    ) -> StoreResult<TransactWriteItem> {
        let update = Update::builder()
            .table_name(&self.table)
            .set_key(Some(counters::shard_key(board, post_id, shard)))
            .update_expression("ADD #counter :delta")
            .condition_expression(SHARD_EXISTS)
            .expression_attribute_names("#counter", counter)
            .expression_attribute_values(":delta", n(delta))
            .build()
            .map_err(|e| StoreError::Internal(e.to_string()))?;
        Ok(TransactWriteItem::builder().update(update).build())
    }

    async fn get(&self, key: Item) -> StoreResult<Option<Item>> {
        self.get_with(key, true).await
    }

    async fn get_with(&self, key: Item, consistent: bool) -> StoreResult<Option<Item>> {
        let touched = [pk_of(&key)];
        let out = self
            .client()
            .await
            .get_item()
            .return_consumed_capacity(ReturnConsumedCapacity::Indexes)
            .table_name(&self.table)
            .set_key(Some(key))
            .consistent_read(consistent)
            .send()
            .await
            .inspect(|out| self.record(out, &touched))
            .map_err(sdk_error)?;
        Ok(out.item)
    }

    /// A guarded replace of an item's password hash: only if it is still `old`.
    async fn replace_hash(
        &self,
        key: Item,
        attribute: &str,
        board: Option<&str>,
        old: &str,
        new: &str,
    ) -> StoreResult<bool> {
        let touched = [pk_of(&key)];
        let mut condition = format!("{attribute} = :old");
        let mut update = self
            .client()
            .await
            .update_item()
            .return_consumed_capacity(ReturnConsumedCapacity::Indexes)
            .table_name(&self.table)
            .set_key(Some(key))
            .update_expression(format!("SET {attribute} = :new"))
            .expression_attribute_values(":old", s(old))
            .expression_attribute_values(":new", s(new));
        if let Some(board) = board {
            condition += " AND board = :board";
            update = update.expression_attribute_values(":board", s(board));
        }
        match update
            .condition_expression(condition)
            .send()
            .await
            .inspect(|out| self.record(out, &touched))
        {
            Ok(_) => Ok(true),
            Err(e) if is_conditional_failure(&e) => Ok(false),
            Err(e) => Err(sdk_error(e)),
        }
    }

    /// One Query for a page of a post's comments, oldest first: `limit + 1`
    /// comment items from the first one or strictly after the comment `after`
    /// (a position: that comment need not exist any more). Never the post item.
    async fn comments_page(
        &self,
        post_id: &str,
        limit: usize,
        after: Option<&str>,
        consistent: bool,
    ) -> StoreResult<CommentPage> {
        let pk = post_pk(post_id);
        let start = after.map(|id| key(pk.clone(), comment_sk(id)));
        let query_pk = pk.clone();
        let out = self
            .client()
            .await
            .query()
            .return_consumed_capacity(ReturnConsumedCapacity::Indexes)
            .table_name(&self.table)
            .key_condition_expression("PK = :pk AND begins_with(SK, :comments)")
            .expression_attribute_values(":pk", s(query_pk))
            .expression_attribute_values(":comments", s(COMMENT_SK_PREFIX))
            .consistent_read(consistent)
            .limit(i32::try_from(limit + 1).unwrap_or(i32::MAX))
            .set_exclusive_start_key(start)
            .send()
            .await
            .inspect(|out| self.record(out, std::slice::from_ref(&pk)))
            .map_err(sdk_error)?;
        let comments = out
            .items
            .unwrap_or_default()
            .into_iter()
            .map(|item| from_item::<CommentItem>(item).map(CommentItem::into_comment))
            .collect::<StoreResult<Vec<_>>>()?;
        // Fewer than asked, yet a LastEvaluatedKey: the 1 MB cap ended the
        // read early (101 comments of 2,000 characters stay well under it).
        let cut_short = comments.len() <= limit && out.last_evaluated_key.is_some();
        Ok(cursor::comment_page_of(comments, limit, cut_short))
    }

    /// The post item and its first page of comments (two requests side by
    /// side), `None` when there is no such post. Eventually consistent reads
    /// cost half; they serve the cache, which is not read-your-writes anyway.
    async fn post_with_comments(
        &self,
        post_id: &str,
        consistent: bool,
    ) -> StoreResult<Option<(PostItem, CommentPage)>> {
        let (post, page) = tokio::try_join!(
            self.get_with(key(post_pk(post_id), POST_SK.into()), consistent),
            self.comments_page(post_id, COMMENTS_PAGE, None, consistent),
        )?;
        Ok(post.map(from_item::<PostItem>).transpose()?.map(|post| (post, page)))
    }

    /// The board of a post (one consistent GetItem), `None` when there is no such post.
    async fn post_board(&self, post_id: &str) -> StoreResult<Option<String>> {
        let out = self
            .client()
            .await
            .get_item()
            .return_consumed_capacity(ReturnConsumedCapacity::Indexes)
            .table_name(&self.table)
            .set_key(Some(key(post_pk(post_id), POST_SK.into())))
            .projection_expression("board")
            .consistent_read(true)
            .send()
            .await
            .inspect(|out| self.record(out, &[post_pk(post_id)]))
            .map_err(sdk_error)?;
        Ok(out
            .item
            .and_then(|mut item| item.remove("board"))
            .and_then(|board| board.as_s().ok().cloned()))
    }

    /// Every item key under one partition key (for deleting a post's children).
    async fn keys_under(&self, pk: String) -> StoreResult<Vec<Item>> {
        let mut keys = Vec::new();
        let mut start = None;
        loop {
            let touched = [pk.clone()];
            let out = self
                .client()
                .await
                .query()
                .return_consumed_capacity(ReturnConsumedCapacity::Indexes)
                .table_name(&self.table)
                .key_condition_expression("PK = :pk")
                .expression_attribute_values(":pk", s(pk.clone()))
                .projection_expression("PK, SK")
                .consistent_read(true)
                .set_exclusive_start_key(start)
                .send()
                .await
                .inspect(|out| self.record(out, &touched))
                .map_err(sdk_error)?;
            keys.extend(out.items.unwrap_or_default());
            start = out.last_evaluated_key;
            if start.is_none() {
                return Ok(keys);
            }
        }
    }

    /// Deletes keys 25 at a time, retrying what DynamoDB leaves unprocessed.
    async fn delete_all(&self, keys: Vec<Item>) -> StoreResult<()> {
        for chunk in keys.chunks(25) {
            let touched: Vec<String> = chunk.iter().map(pk_of).collect();
            let mut pending: Vec<WriteRequest> = chunk
                .iter()
                .map(|k| {
                    let delete = DeleteRequest::builder()
                        .set_key(Some(k.clone()))
                        .build()
                        .map_err(|e| StoreError::Internal(e.to_string()))?;
                    Ok(WriteRequest::builder().delete_request(delete).build())
                })
                .collect::<StoreResult<_>>()?;
            let mut backoff = Duration::from_millis(20);
            for attempt in 0.. {
                let out = self
                    .client()
                    .await
                    .batch_write_item()
                    .return_consumed_capacity(ReturnConsumedCapacity::Indexes)
                    .request_items(&self.table, pending)
                    .send()
                    .await
                    .inspect(|out| self.record(out, &touched))
                    .map_err(sdk_error)?;
                pending = out
                    .unprocessed_items
                    .and_then(|mut m| m.remove(&self.table))
                    .unwrap_or_default();
                if pending.is_empty() {
                    break;
                }
                if attempt >= 8 {
                    return Err(StoreError::Unavailable(format!(
                        "{} deletes left unprocessed",
                        pending.len()
                    )));
                }
                tokio::time::sleep(backoff).await;
                backoff = (backoff * 2).min(Duration::from_secs(1));
            }
        }
        Ok(())
    }

    /// One Query on the board index: `limit + 1` summaries, newest first,
    /// strictly older than the cursor's post.
    async fn board_page(&self, board: &str, limit: usize, cursor: Option<&str>) -> StoreResult<Vec<SummaryFields>> {
        let after = cursor.map(cursor::decode).transpose()?;
        let mut query = self
            .client()
            .await
            .query()
            .return_consumed_capacity(ReturnConsumedCapacity::Indexes)
            .table_name(&self.table)
            .index_name(BOARD_INDEX)
            .expression_attribute_values(":board", s(board_pk(board)))
            .scan_index_forward(false)
            .limit(i32::try_from(limit + 1).unwrap_or(i32::MAX));
        query = match after {
            Some(after) => query
                .key_condition_expression("GSI1PK = :board AND GSI1SK < :after")
                .expression_attribute_values(":after", s(after)),
            None => query.key_condition_expression("GSI1PK = :board"),
        };
        // The index's units are metered on its own (Partition::BoardIndex).
        let out = query
            .send()
            .await
            .inspect(|out| self.record(out, &[]))
            .map_err(sdk_error)?;
        out.items.unwrap_or_default().into_iter().map(from_item).collect()
    }

    /// Likes or unlikes: the like item and its count on the member's shard
    /// in one transaction; then the post's likes, read consistently from
    /// every shard (a like's answer includes itself).
    async fn set_like(
        &self,
        board: &str,
        post_id: &str,
        member_id: &str,
        liked: bool,
    ) -> StoreResult<Option<LikeState>> {
        let like_key = key(likes_pk(post_id, member_id), like_sk(member_id));
        let (change, delta) = if liked {
            (self.put(like_key, "attribute_not_exists(PK)")?, 1)
        } else {
            (self.delete(like_key, Some("attribute_exists(PK)"))?, -1)
        };
        let shard = shard_of(member_id, self.layout.counter_shards);
        let counter = self.count_on_shard(board, post_id, shard, "likes", delta)?;
        // A failed like-item condition means already liked (or not liked):
        // nothing to change, which is not an error.
        if self
            .transact_counting(board, post_id, shard, 1, vec![change, counter])
            .await?
            .is_none()
        {
            return Ok(None);
        }
        self.cache.shards.remove(&post_id.to_owned());
        let shards = self.read_shards(board, &[post_id], true).await?;
        let likes: i64 = shards.values().flatten().map(|c| c.likes).sum();
        Ok(Some(LikeState {
            liked,
            like_count: u64::try_from(likes).unwrap_or(0),
        }))
    }
}

#[async_trait]
impl Members for DynamoStore {
    async fn create_member(
        &self,
        member: &Member,
        password_hash: &PasswordHash,
        done: Option<&Completion>,
    ) -> StoreResult<()> {
        let item = to_item(&MemberItem {
            pk: member_pk(&member.username),
            sk: MEMBER_SK.into(),
            id: member.id.clone(),
            username: member.username.clone(),
            nickname: member.nickname.clone(),
            password_hash: password_hash.as_str().to_owned(),
            created_at: member.created_at.clone(),
        })?;
        if self.put_new(item, done).await? {
            Ok(())
        } else {
            Err(StoreError::UsernameTaken)
        }
    }

    async fn member_credentials(&self, username: &Username) -> StoreResult<Option<MemberCredentials>> {
        let Some(item) = self.get(key(member_pk(username.as_str()), MEMBER_SK.into())).await? else {
            return Ok(None);
        };
        let m: MemberItem = from_item(item)?;
        Ok(Some(MemberCredentials {
            member: Member {
                id: m.id,
                username: m.username,
                nickname: m.nickname,
                created_at: m.created_at,
            },
            password_hash: PasswordHash::new(m.password_hash),
        }))
    }

    async fn replace_password_hash(
        &self,
        username: &Username,
        old: &PasswordHash,
        new: &PasswordHash,
    ) -> StoreResult<bool> {
        self.replace_hash(
            key(member_pk(username.as_str()), MEMBER_SK.into()),
            "password_hash",
            None,
            old.as_str(),
            new.as_str(),
        )
        .await
    }
}

#[async_trait]
#[async_trait]
impl Posts for DynamoStore {
    async fn create_post(
        &self,
        post: &Post,
        guest_password_hash: Option<&PasswordHash>,
        done: Option<&Completion>,
    ) -> StoreResult<()> {
        let item = to_item(&PostItem::new(post, guest_password_hash.map(PasswordHash::as_str)))?;
        self.cache.pages.clear();
        if self.put_new(item, done).await? {
            Ok(())
        } else {
            Err(StoreError::Internal("post id collision".into()))
        }
    }

    /// Three requests side by side, whatever the comment count: the post
    /// item, one Query for its first [`COMMENTS_PAGE`] comments + 1, and its
    /// counter shards (one BatchGetItem per 100 shards). Consistent.
    async fn post_detail(&self, post_key: &PostKey) -> StoreResult<Option<PostDetail>> {
        let (board, post_id) = (post_key.board.as_str(), post_key.post.as_str());
        let ids = [post_id];
        let (found, shards) = tokio::try_join!(
            self.post_with_comments(post_id, true),
            self.read_shards(board, &ids, true)
        )?;
        let Some((post, page)) = found.filter(|(post, _)| post.summary.board == board) else {
            return Ok(None);
        };
        let counts = shards.into_values().flatten().sum();
        Ok(Some(PostDetail {
            post: post.into_post(counts),
            comments: page.comments,
            comments_next_cursor: page.next_cursor,
        }))
    }

    /// A view writes one counter shard (one write unit, whatever the post's
    /// size) and nothing else. The post, its first comments and the other
    /// shards come from this process's cache when fresh (`READ_CACHE_TTL_MS`),
    /// else from the table; the count shown is the other shards' (as read)
    /// plus this view's shard as this view left it, so it includes this view.
    async fn view_post(&self, post_key: &PostKey) -> StoreResult<Option<PostDetail>> {
        let (board, post_id) = (post_key.board.as_str(), post_key.post.as_str());
        let cached = self.cache.details.get(&post_id.to_owned());
        let detail = match cached {
            Some(detail) => detail,
            None => {
                let read_at = std::time::Instant::now();
                let consistent = !self.cache.details.enabled();
                let Some(found) = self.post_with_comments(post_id, consistent).await? else {
                    return Ok(None);
                };
                let found = Arc::new(found);
                self.cache.details.put_at(post_id.to_owned(), found.clone(), read_at);
                found
            }
        };
        if detail.0.summary.board != board {
            return Ok(None);
        }
        let shard = self.random_shard();
        let ids = [post_id];
        let (mine, mut shards) =
            tokio::try_join!(self.add_view(board, post_id, shard), self.cached_shards(board, &ids))?;
        let mine = match mine {
            Some(mine) => mine,
            // The shard's first view, or the post is gone (its delete took
            // the shards): only a post that is still there gets the shard.
            None => {
                if self.post_board(post_id).await?.as_deref() != Some(board) {
                    self.cache.forget_post(post_id);
                    return Ok(None);
                }
                self.ensure_shard(board, post_id, shard).await?;
                self.add_view(board, post_id, shard)
                    .await?
                    .ok_or_else(|| StoreError::Unavailable("the post was deleted while it was read".into()))?
            }
        };
        let index = shard as usize;
        self.cache.shards.update(&post_id.to_owned(), |cached| {
            if let Some(slot) = cached.get_mut(index) {
                *slot = mine;
            }
        });
        let mut shards = shards.remove(post_id).unwrap_or_default();
        if let Some(slot) = shards.get_mut(index) {
            *slot = mine;
        }
        let (post, page) = (*detail).clone();
        Ok(Some(PostDetail {
            post: post.into_post(shards.into_iter().sum()),
            comments: page.comments,
            comments_next_cursor: page.next_cursor,
        }))
    }

    /// Two requests at once: the post's board (GetItem) and one Query of
    /// `limit + 1` comments after the cursor.
    async fn list_comments(
        &self,
        post_key: &PostKey,
        limit: PageLimit,
        cursor: Option<&str>,
    ) -> StoreResult<Option<CommentPage>> {
        let after = cursor.map(cursor::decode).transpose()?;
        let (board, post_id) = (post_key.board.as_str(), post_key.post.as_str());
        let (post_board, page) = tokio::try_join!(
            self.post_board(post_id),
            self.comments_page(post_id, limit.get(), after.as_deref(), true),
        )?;
        Ok(post_board.is_some_and(|b| b == board).then_some(page))
    }

    /// One Query on the board index (no counts there), then the page's
    /// counter shards: BatchGetItem, 100 shards per request, side by side.
    /// Both from this process's cache when fresh.
    async fn list_posts(&self, board: &BoardSlug, limit: PageLimit, cursor: Option<&str>) -> StoreResult<Page> {
        let (board, limit) = (board.as_str(), limit.get());
        let cache_key = (board.to_owned(), cursor.map(str::to_owned), limit);
        let summaries = match self.cache.pages.get(&cache_key) {
            Some(summaries) => summaries,
            None => {
                let read_at = std::time::Instant::now();
                let summaries = Arc::new(self.board_page(board, limit, cursor).await?);
                self.cache.pages.put_at(cache_key, summaries.clone(), read_at);
                summaries
            }
        };
        let ids: Vec<&str> = summaries.iter().take(limit).map(|s| s.id.as_str()).collect();
        let mut shards = self.cached_shards(board, &ids).await?;
        let mut posts: Vec<PostSummary> = summaries
            .iter()
            .map(|s| {
                let counts = shards.remove(&s.id).unwrap_or_default().into_iter().sum();
                s.clone().summary(counts)
            })
            .collect();
        Ok(cursor::page_of(&mut posts, limit))
    }

    async fn post_guard(&self, post_key: &PostKey) -> StoreResult<Option<Guard>> {
        let (board, post_id) = (post_key.board.as_str(), post_key.post.as_str());
        let Some(item) = self.get(key(post_pk(post_id), POST_SK.into())).await? else {
            return Ok(None);
        };
        let post: PostItem = from_item(item)?;
        Ok((post.summary.board == board).then(|| Guard {
            author: post.summary.author.into(),
            guest_password_hash: post.guest_password_hash.map(PasswordHash::new),
        }))
    }

    async fn update_post(&self, post_key: &PostKey, edit: &PostEdit) -> StoreResult<bool> {
        let (board, post_id) = (post_key.board.as_str(), post_key.post.as_str());
        let (title, body, updated_at) = (edit.title.as_str(), edit.body.as_str(), edit.updated_at.as_str());
        let out = self
            .client()
            .await
            .update_item()
            .return_consumed_capacity(ReturnConsumedCapacity::Indexes)
            .table_name(&self.table)
            .set_key(Some(key(post_pk(post_id), POST_SK.into())))
            .update_expression("SET title = :title, body = :body, updated_at = :updated_at")
            .condition_expression(POST_ON_BOARD)
            .expression_attribute_values(":title", s(title))
            .expression_attribute_values(":body", s(body))
            .expression_attribute_values(":updated_at", s(updated_at))
            .expression_attribute_values(":board", s(board))
            .send()
            .await
            .inspect(|out| self.record(out, &[post_pk(post_id)]));
        self.cache.forget_post(post_id);
        self.cache.pages.clear();
        match out {
            Ok(_) => Ok(true),
            Err(e) if is_conditional_failure(&e) => Ok(false),
            Err(e) => Err(sdk_error(e)),
        }
    }

    /// Durable in two steps ([`purge`]): the post is unreadable from the
    /// first; the second resumes after any interruption.
    async fn delete_post(&self, post_key: &PostKey) -> StoreResult<bool> {
        let (board, post_id) = (post_key.board.as_str(), post_key.post.as_str());
        let deleted = self.mark_post_deleted(board, post_id).await?;
        if deleted || self.purge_pending(post_id).await? {
            self.purge_post(post_id).await?;
        }
        // Others' interrupted purges: best effort, this delete is done.
        if let Err(e) = self.resume_purges(purge::SWEEP).await {
            tracing::warn!(error = %e, "pending post purges not resumed");
        }
        Ok(deleted)
    }

    async fn replace_post_guest_hash(
        &self,
        post_key: &PostKey,
        old: &PasswordHash,
        new: &PasswordHash,
    ) -> StoreResult<bool> {
        let (board, post_id) = (post_key.board.as_str(), post_key.post.as_str());
        let key = key(post_pk(post_id), POST_SK.into());
        self.replace_hash(key, "guest_password_hash", Some(board), old.as_str(), new.as_str())
            .await
    }
}

#[async_trait]
impl Comments for DynamoStore {
    async fn create_comment(
        &self,
        board: &BoardSlug,
        comment: &Comment,
        guest_password_hash: Option<&PasswordHash>,
        done: Option<&Completion>,
    ) -> StoreResult<()> {
        let (board, guest_password_hash) = (board.as_str(), guest_password_hash.map(PasswordHash::as_str));
        let post_id = comment.post_id.as_str();
        let item = to_item(&CommentItem::new(board, comment, guest_password_hash))?;
        let shard = shard_of(&comment.id, self.layout.counter_shards);
        let mut items = vec![
            self.put(item, "attribute_not_exists(PK)")?,
            self.count_on_shard(board, post_id, shard, "comments", 1)?,
        ];
        if let Some(parent) = &comment.parent_id {
            let check = ConditionCheck::builder()
                .table_name(&self.table)
                .set_key(Some(key(post_pk(post_id), comment_sk(parent))))
                .condition_expression("attribute_exists(PK) AND attribute_not_exists(parent_id)")
                .build()
                .map_err(|e| StoreError::Internal(e.to_string()))?;
            items.push(TransactWriteItem::builder().condition_check(check).build());
        }
        let parent_at = comment.parent_id.as_ref().map(|_| items.len() - 1);
        let claim_at = items.len();
        if let Some(done) = done {
            items.push(self.complete(done)?);
        }
        let result = self.transact_counting(board, post_id, shard, 1, items).await;
        self.cache.forget_post(post_id);
        let failed_at = |failed: &[bool], at: Option<usize>| at.is_some_and(|i| failed.get(i) == Some(&true));
        match result? {
            Some(Ok(())) => Ok(()),
            None => Err(StoreError::NotFound),
            Some(Err(failed)) if failed_at(&failed, parent_at) => Err(StoreError::InvalidParent),
            Some(Err(failed)) if failed_at(&failed, done.map(|_| claim_at)) => Err(StoreError::ClaimLost),
            Some(Err(_)) => Err(StoreError::Internal("comment id collision".into())),
        }
    }

    /// The comment and its post's purge marker side by side (a small item,
    /// unlike the post): a comment of a deleted post whose purge is pending
    /// has no guard; after the purge the comment is gone.
    async fn comment_guard(&self, comment_key: &CommentKey) -> StoreResult<Option<Guard>> {
        let (board, post_id, comment_id) = (
            comment_key.post.board.as_str(),
            comment_key.post.post.as_str(),
            comment_key.comment.as_str(),
        );
        let (item, purging) = tokio::try_join!(
            self.get(key(post_pk(post_id), comment_sk(comment_id))),
            self.purge_pending(post_id)
        )?;
        let Some(item) = item.filter(|_| !purging) else {
            return Ok(None);
        };
        let comment: CommentItem = from_item(item)?;
        Ok((comment.board == board).then(|| Guard {
            author: comment.author.into(),
            guest_password_hash: comment.guest_password_hash.map(PasswordHash::new),
        }))
    }

    async fn delete_comment(&self, comment_key: &CommentKey) -> StoreResult<bool> {
        let (board, post_id, comment_id) = (
            comment_key.post.board.as_str(),
            comment_key.post.post.as_str(),
            comment_key.comment.as_str(),
        );
        let shard = shard_of(comment_id, self.layout.counter_shards);
        let items = vec![
            self.delete(
                key(post_pk(post_id), comment_sk(comment_id)),
                Some("attribute_exists(PK)"),
            )?,
            self.count_on_shard(board, post_id, shard, "comments", -1)?,
        ];
        let result = self.transact_counting(board, post_id, shard, 1, items).await;
        self.cache.forget_post(post_id);
        Ok(matches!(result?, Some(Ok(()))))
    }

    async fn replace_comment_guest_hash(
        &self,
        comment_key: &CommentKey,
        old: &PasswordHash,
        new: &PasswordHash,
    ) -> StoreResult<bool> {
        let (board, post_id, comment_id) = (
            comment_key.post.board.as_str(),
            comment_key.post.post.as_str(),
            comment_key.comment.as_str(),
        );
        let key = key(post_pk(post_id), comment_sk(comment_id));
        self.replace_hash(key, "guest_password_hash", Some(board), old.as_str(), new.as_str())
            .await
    }
}

#[async_trait]
impl Likes for DynamoStore {
    async fn like(&self, post_key: &PostKey, member: &MemberId) -> StoreResult<Option<LikeState>> {
        self.set_like(post_key.board.as_str(), post_key.post.as_str(), member.as_str(), true)
            .await
    }

    async fn unlike(&self, post_key: &PostKey, member: &MemberId) -> StoreResult<Option<LikeState>> {
        self.set_like(post_key.board.as_str(), post_key.post.as_str(), member.as_str(), false)
            .await
    }

    async fn has_liked(&self, post: &PostId, member: &MemberId) -> StoreResult<bool> {
        let (post, member) = (post.as_str(), member.as_str());
        Ok(self.get(key(likes_pk(post, member), like_sk(member))).await?.is_some())
    }
}

#[async_trait]
impl Attempts for DynamoStore {
    async fn record_failure(&self, key_name: &AttemptKey, window: Window) -> StoreResult<u64> {
        let key_name = key_name.as_str();
        // The window start is in the key, so a late TTL deletion never
        // stretches a window: expires_at only cleans up.
        let out = self
            .client()
            .await
            .update_item()
            .return_consumed_capacity(ReturnConsumedCapacity::Indexes)
            .table_name(&self.table)
            .set_key(Some(key(attempt_pk(key_name), window_sk(window.start))))
            .update_expression("ADD failures :one SET expires_at = :expires_at")
            .expression_attribute_values(":one", n(1))
            .expression_attribute_values(":expires_at", n(window.end()))
            .return_values(ReturnValue::UpdatedNew)
            .send()
            .await
            .inspect(|out| self.record(out, &[attempt_pk(key_name)]))
            .map_err(sdk_error)?;
        number(&out.attributes.unwrap_or_default(), "failures")
    }

    async fn forgive_failure(&self, key_name: &AttemptKey, window: Window) -> StoreResult<()> {
        let key_name = key_name.as_str();
        let out = self
            .client()
            .await
            .update_item()
            .return_consumed_capacity(ReturnConsumedCapacity::Indexes)
            .table_name(&self.table)
            .set_key(Some(key(attempt_pk(key_name), window_sk(window.start))))
            .update_expression("ADD failures :minus_one")
            .condition_expression("failures > :zero")
            .expression_attribute_values(":minus_one", n(-1))
            .expression_attribute_values(":zero", n(0))
            .send()
            .await
            .inspect(|out| self.record(out, &[attempt_pk(key_name)]));
        match out {
            Ok(_) => Ok(()),
            Err(e) if is_conditional_failure(&e) => Ok(()),
            Err(e) => Err(sdk_error(e)),
        }
    }

    async fn failures(&self, key_name: &AttemptKey, window: Window) -> StoreResult<u64> {
        let key_name = key_name.as_str();
        match self.get(key(attempt_pk(key_name), window_sk(window.start))).await? {
            Some(item) => number(&item, "failures"),
            None => Ok(0),
        }
    }
}
