//! [`BoardDirectory`] on DynamoDB (docs/API.md, Boards; docs/storage.md,
//! Boards, numbers and votes).
//!
//! - Settings: one item per board under `BOARDS` (SK the slug), the
//!   settings as JSON in `settings` and `created_at` beside it (an update
//!   rewrites `settings` only, so `created_at` stays): every board is one Query.
//! - Post numbers: `NUMBERS#<slug>` / `NEXT`, `next` the last number given.
//!   An allocation is one `ADD next 1` returning the new value. The item is
//!   created on a board's first allocation with `next` (and `legacy`) set to
//!   the board's posts that have no number yet (posts from before v4, which
//!   the backfill numbers `1..=legacy` oldest first), so new posts come after them.
//! - Live post counts: `POSTS#<slug>` / `LIVE`, `posts`, changed in the
//!   transaction of every create and of every delete of a numbered post
//!   (the backfill counts a pre-v4 post when it numbers it).

use async_trait::async_trait;
use aws_sdk_dynamodb::types::{ReturnValue, Select};

use super::DynamoStore;
use super::attributes::{Item, Projection, from_item, key, n, number, s, text};
use super::items::{BOARD_INDEX, BOARDS_PK, NUMBERS_SK, POST_COUNT_SK, board_pk, numbers_pk, post_count_pk};
use super::requests::BATCH_KEYS;
use super::transact::TxFailure;
use crate::domain::{BoardSettings, BoardSlug, LogEntry};
use crate::store::dynamo::metered::Metered;
use crate::store::{BoardDirectory, StoreError, StoreResult, from_json, to_json};

/// The board settings item as stored.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
struct BoardItem {
    #[serde(rename = "PK")]
    pk: String,
    #[serde(rename = "SK")]
    sk: String,
    settings: String,
    created_at: String,
}

impl DynamoStore {
    /// The key of a board's live post count.
    pub(super) fn post_count_key(board: &str) -> Item {
        key(post_count_pk(board), POST_COUNT_SK.into())
    }

    /// The transaction item that adds `delta` to a board's live posts.
    pub(super) fn count_posts(
        &self,
        board: &str,
        delta: i64,
    ) -> StoreResult<aws_sdk_dynamodb::types::TransactWriteItem> {
        self.update(
            Self::post_count_key(board),
            "ADD posts :delta",
            None,
            &[],
            &[(":delta", n(delta))],
        )
    }

    /// `ADD next 1` on the board's counter; `None` when the counter does
    /// not exist yet.
    async fn take_number(&self, board: &str, how_many: u64) -> StoreResult<Option<u64>> {
        let touched = [numbers_pk(board)];
        let out = self
            .client()
            .await
            .update_item()
            .table_name(&self.table)
            .set_key(Some(key(numbers_pk(board), NUMBERS_SK.into())))
            .update_expression("ADD #next :n")
            .condition_expression("attribute_exists(PK)")
            .expression_attribute_names("#next", "next")
            .expression_attribute_values(":n", n(i64::try_from(how_many).unwrap_or(1)))
            .return_values(ReturnValue::UpdatedNew)
            .metered_if(self, &touched)
            .await?;
        out.map(|out| number(&out.attributes.unwrap_or_default(), "next"))
            .transpose()
    }

    /// Creates the board's counter, once: `next` and `legacy` are the
    /// board's posts without a number (a Query of the board index, counting
    /// only), the range the backfill numbers them in.
    pub(super) async fn ensure_number_counter(&self, board: &str) -> StoreResult<()> {
        let legacy = self.unnumbered_posts(board).await?;
        let item = Item::from([
            ("PK".to_owned(), s(numbers_pk(board))),
            ("SK".to_owned(), s(NUMBERS_SK)),
            ("next".to_owned(), n(legacy)),
            ("legacy".to_owned(), n(legacy)),
            ("legacy_given".to_owned(), n(0)),
        ]);
        let touched = [numbers_pk(board)];
        self.client()
            .await
            .put_item()
            .table_name(&self.table)
            .set_item(Some(item))
            .condition_expression("attribute_not_exists(PK)")
            .metered_if(self, &touched)
            .await?;
        Ok(())
    }

    /// How many posts of `board` have no number: Queries of the board
    /// index that return only a count (an index entry is a few hundred
    /// bytes: about 10 RCU per 1,000 posts, once per board).
    async fn unnumbered_posts(&self, board: &str) -> StoreResult<i64> {
        let mut count = 0;
        let mut pages = self.pages(&[]);
        while let Some(out) = pages
            .next(|query| {
                query
                    .index_name(BOARD_INDEX)
                    .key_condition_expression("GSI1PK = :board")
                    .filter_expression("attribute_not_exists(#number)")
                    .expression_attribute_names("#number", "number")
                    .expression_attribute_values(":board", s(board_pk(board)))
                    .select(Select::Count)
            })
            .await?
        {
            count += i64::from(out.count);
        }
        Ok(count)
    }

    /// `how_many` numbers at once (the last one returned), creating the
    /// counter on the board's first allocation.
    pub(super) async fn allocate_numbers(&self, board: &str, how_many: u64) -> StoreResult<u64> {
        if let Some(next) = self.take_number(board, how_many).await? {
            return Ok(next);
        }
        self.ensure_number_counter(board).await?;
        self.take_number(board, how_many)
            .await?
            .ok_or_else(|| StoreError::Internal(format!("the post number counter of {board} is missing")))
    }
}

fn settings_of(item: Item) -> StoreResult<BoardSettings> {
    let item: BoardItem = from_item(item)?;
    let mut settings: BoardSettings = from_json(&item.settings)?;
    settings.created_at = item.created_at;
    Ok(settings)
}

#[async_trait]
impl BoardDirectory for DynamoStore {
    /// One consistent Query of `BOARDS` (a board's item is a few hundred
    /// bytes: 1 RCU per dozen boards).
    async fn boards(&self) -> StoreResult<Vec<BoardSettings>> {
        self.query_all(BOARDS_PK, None, &|query| query.key_condition_expression("PK = :pk"))
            .await?
            .into_iter()
            .map(settings_of)
            .collect()
    }

    /// One consistent BatchGetItem of the boards' count items per 100 boards.
    async fn post_counts(&self, boards: &[BoardSlug]) -> StoreResult<Vec<u64>> {
        const POSTS: Projection = Projection {
            expression: "PK, posts",
            names: &[],
        };
        let mut unique: Vec<&str> = boards.iter().map(BoardSlug::as_str).collect();
        unique.sort_unstable();
        unique.dedup();
        let mut found = std::collections::HashMap::new();
        for chunk in unique.chunks(BATCH_KEYS) {
            let keys = chunk.iter().map(|b| Self::post_count_key(b)).collect();
            for item in self.batch_get(keys, true, Some(&POSTS)).await? {
                if let Some(pk) = text(&item, "PK") {
                    let posts = number(&item, "posts").unwrap_or(0);
                    found.insert(pk.to_owned(), posts);
                }
            }
        }
        Ok(boards
            .iter()
            .map(|b| found.get(&post_count_pk(b.as_str())).copied().unwrap_or(0))
            .collect())
    }

    /// A conditional put, in one transaction with the entry when there is one.
    async fn create_board(&self, settings: &BoardSettings, entry: Option<&LogEntry>) -> StoreResult<bool> {
        let slug = settings.slug.as_str();
        let item = super::attributes::to_item(&BoardItem {
            pk: BOARDS_PK.into(),
            sk: slug.to_owned(),
            settings: to_json(settings)?,
            created_at: settings.created_at.clone(),
        })?;
        let Some(entry) = entry else {
            return self.put_new(item, None).await;
        };
        let items = vec![self.put(item, "attribute_not_exists(PK)")?, self.log_put(slug, entry)?];
        match self.transact(items).await {
            Ok(()) => Ok(true),
            Err(TxFailure::Conditions(failed)) if failed.first() == Some(&true) => Ok(false),
            Err(TxFailure::Conditions(_)) => Err(StoreError::Internal("log entry id collision".into())),
            Err(TxFailure::Store(e)) => Err(e),
        }
    }

    /// One transaction: `settings` rewritten if the board exists (its
    /// `created_at` attribute untouched), and the entry.
    async fn update_board(&self, settings: &BoardSettings, entry: &LogEntry) -> StoreResult<bool> {
        let slug = settings.slug.as_str();
        let items = vec![
            self.update(
                key(BOARDS_PK.into(), slug.to_owned()),
                "SET settings = :settings",
                Some("attribute_exists(PK)"),
                &[],
                &[(":settings", s(to_json(settings)?))],
            )?,
            self.log_put(slug, entry)?,
        ];
        match self.transact(items).await {
            Ok(()) => Ok(true),
            Err(TxFailure::Conditions(failed)) if failed.first() == Some(&true) => Ok(false),
            Err(TxFailure::Conditions(_)) => Err(StoreError::Internal("log entry id collision".into())),
            Err(TxFailure::Store(e)) => Err(e),
        }
    }

    /// One UpdateItem (`ADD next 1`, returning it); a board's first also
    /// creates the counter (a count Query of its index and a conditional Put).
    async fn allocate_post_number(&self, board: &BoardSlug) -> StoreResult<u64> {
        self.allocate_numbers(board.as_str(), 1).await
    }
}
