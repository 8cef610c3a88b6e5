//! Storage ports: the small traits handlers depend on, and the two adapters
//! behind them (DynamoDB single-table, embedded SQLite).

pub mod cursor;
pub mod dynamo;
pub mod sqlite;

use std::path::PathBuf;
use std::sync::Arc;

use async_trait::async_trait;

use crate::domain::{Comment, Guard, LikeState, Member, MemberCredentials, Page, Post, PostDetail, Window};

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum StoreError {
    #[error("username is already taken")]
    UsernameTaken,
    /// The post (or comment) a write refers to does not exist on that board.
    #[error("not found")]
    NotFound,
    #[error("parent_id must be a top-level comment of the same post")]
    InvalidParent,
    #[error("cursor is not a cursor this service issued")]
    InvalidCursor,
    /// Unreachable, throttled or timed out: answer 503 with Retry-After; nothing was written.
    #[error("store unavailable: {0}")]
    Unavailable(String),
    #[error("store failure: {0}")]
    Internal(String),
}

pub type StoreResult<T> = Result<T, StoreError>;

#[async_trait]
pub trait Members: Send + Sync {
    /// Fails with [`StoreError::UsernameTaken`] when the username exists.
    async fn create_member(&self, member: &Member, password_hash: &str) -> StoreResult<()>;
    async fn member_credentials(&self, username: &str) -> StoreResult<Option<MemberCredentials>>;
    /// Stores `new_hash` only if the stored hash is still `old_hash`
    /// (a rehash after login); false when it changed meanwhile.
    async fn replace_password_hash(&self, username: &str, old_hash: &str, new_hash: &str) -> StoreResult<bool>;
}

#[async_trait]
pub trait Posts: Send + Sync {
    async fn create_post(&self, post: &Post, guest_password_hash: Option<&str>) -> StoreResult<()>;
    /// The post with its comments (oldest first), if it is on `board`.
    async fn post_detail(&self, board: &str, post_id: &str) -> StoreResult<Option<PostDetail>>;
    /// Counts one view and returns the new count; `None` when there is no such post on `board`.
    async fn count_view(&self, board: &str, post_id: &str) -> StoreResult<Option<u64>>;
    /// Newest first; `cursor` is a page's `next_cursor`.
    async fn list_posts(&self, board: &str, limit: usize, cursor: Option<&str>) -> StoreResult<Page>;
    async fn post_guard(&self, board: &str, post_id: &str) -> StoreResult<Option<Guard>>;
    /// `None` when there is no such post on `board`.
    async fn update_post(
        &self,
        board: &str,
        post_id: &str,
        title: &str,
        body: &str,
        updated_at: &str,
    ) -> StoreResult<Option<Post>>;
    /// Deletes the post with its comments and likes; false when there was none.
    async fn delete_post(&self, board: &str, post_id: &str) -> StoreResult<bool>;
    async fn replace_post_guest_hash(&self, board: &str, post_id: &str, old: &str, new: &str) -> StoreResult<bool>;
}

#[async_trait]
pub trait Comments: Send + Sync {
    /// Adds the comment and counts it on its post, together or not at all.
    /// [`StoreError::NotFound`] when the post is not on `board`.
    async fn create_comment(
        &self,
        board: &str,
        comment: &Comment,
        guest_password_hash: Option<&str>,
    ) -> StoreResult<()>;
    async fn comment_guard(&self, board: &str, post_id: &str, comment_id: &str) -> StoreResult<Option<Guard>>;
    /// Removes the comment and uncounts it; false when there was none.
    /// Its replies stay (their `parent_id` names the removed comment).
    async fn delete_comment(&self, board: &str, post_id: &str, comment_id: &str) -> StoreResult<bool>;
    async fn replace_comment_guest_hash(
        &self,
        board: &str,
        post_id: &str,
        comment_id: &str,
        old: &str,
        new: &str,
    ) -> StoreResult<bool>;
}

#[async_trait]
pub trait Likes: Send + Sync {
    /// Idempotent; `None` when there is no such post on `board`.
    async fn like(&self, board: &str, post_id: &str, member_id: &str) -> StoreResult<Option<LikeState>>;
    async fn unlike(&self, board: &str, post_id: &str, member_id: &str) -> StoreResult<Option<LikeState>>;
    async fn has_liked(&self, post_id: &str, member_id: &str) -> StoreResult<bool>;
}

#[async_trait]
pub trait Attempts: Send + Sync {
    /// Counts one failure for `key` in `window` and returns the window's count.
    async fn record_failure(&self, key: &str, window: Window) -> StoreResult<u64>;
    /// Takes one counted failure back (never below zero): an attempt counted
    /// before hashing turned out to be a success.
    async fn forgive_failure(&self, key: &str, window: Window) -> StoreResult<()>;
    async fn failures(&self, key: &str, window: Window) -> StoreResult<u64>;
}

/// Everything a deployment needs from its store.
pub trait Store: Members + Posts + Comments + Likes + Attempts {}

impl<T: Members + Posts + Comments + Likes + Attempts> Store for T {}

/// Page sizes the API allows.
pub const MAX_PAGE: usize = 100;

/// Which store a deployment uses: DynamoDB when `TABLE_NAME` is set (with
/// `DYNAMODB_ENDPOINT` for DynamoDB Local), else the SQLite file under `DATA_DIR`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoreConfig {
    Dynamo {
        table: String,
        endpoint: Option<String>,
        tuning: dynamo::SdkTuning,
    },
    Sqlite {
        path: PathBuf,
        busy_timeout: std::time::Duration,
    },
}

impl StoreConfig {
    pub fn from_env() -> Result<Self, String> {
        Self::from_lookup(|name| std::env::var(name).ok())
    }

    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Result<Self, String> {
        let set = |name: &str| lookup(name).filter(|v| !v.trim().is_empty());
        Ok(match set("TABLE_NAME") {
            Some(table) => {
                let endpoint = set("DYNAMODB_ENDPOINT");
                let tuning = dynamo::SdkTuning::from_lookup(endpoint.is_some(), &lookup)?;
                StoreConfig::Dynamo {
                    table,
                    endpoint,
                    tuning,
                }
            }
            None => StoreConfig::Sqlite {
                path: PathBuf::from(set("DATA_DIR").unwrap_or_else(|| "./data".to_owned())).join("boards.sqlite3"),
                busy_timeout: match set("SQLITE_BUSY_TIMEOUT_MS") {
                    None => sqlite::DEFAULT_BUSY_TIMEOUT,
                    Some(v) => match v.trim().parse::<u64>() {
                        Ok(ms) if ms > 0 => std::time::Duration::from_millis(ms),
                        _ => {
                            return Err(format!(
                                "SQLITE_BUSY_TIMEOUT_MS must be a positive whole number, not {v:?}"
                            ));
                        }
                    },
                },
            },
        })
    }

    pub async fn open(&self) -> StoreResult<Arc<dyn Store>> {
        Ok(match self {
            StoreConfig::Dynamo {
                table,
                endpoint,
                tuning,
            } => Arc::new(dynamo::DynamoStore::connect(table, endpoint.as_deref(), tuning).await?),
            StoreConfig::Sqlite { path, busy_timeout } => {
                Arc::new(sqlite::SqliteStore::open_with(path, *busy_timeout)?)
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sqlite_is_the_default_and_a_table_name_selects_dynamodb() {
        let none = |_: &str| None;
        assert_eq!(
            StoreConfig::from_lookup(none).unwrap(),
            StoreConfig::Sqlite {
                path: PathBuf::from("./data/boards.sqlite3"),
                busy_timeout: sqlite::DEFAULT_BUSY_TIMEOUT,
            }
        );
        let dynamo = StoreConfig::from_lookup(|name| match name {
            "TABLE_NAME" => Some("boards".into()),
            "DYNAMODB_ENDPOINT" => Some("http://127.0.0.1:8000".into()),
            "DATA_DIR" => Some("/srv".into()),
            "DYNAMODB_ATTEMPT_TIMEOUT_MS" => Some("250".into()),
            _ => None,
        });
        let mut tuning = dynamo::SdkTuning::defaults(true);
        tuning.attempt_timeout = std::time::Duration::from_millis(250);
        assert_eq!(
            dynamo,
            Ok(StoreConfig::Dynamo {
                table: "boards".into(),
                endpoint: Some("http://127.0.0.1:8000".into()),
                tuning,
            })
        );
        let data_dir = StoreConfig::from_lookup(|name| (name == "DATA_DIR").then(|| "/srv/boards".into())).unwrap();
        assert_eq!(
            data_dir,
            StoreConfig::Sqlite {
                path: PathBuf::from("/srv/boards/boards.sqlite3"),
                busy_timeout: sqlite::DEFAULT_BUSY_TIMEOUT,
            }
        );
    }

    #[test]
    fn sdk_timeouts_are_deliberate_and_bad_values_are_refused() {
        let aws = dynamo::SdkTuning::defaults(false);
        assert_eq!(aws.operation_timeout, std::time::Duration::from_secs(3));
        assert_eq!(aws.max_attempts, 3);
        assert!(aws.attempt_timeout * aws.max_attempts >= aws.operation_timeout);
        for bad in ["0", "-1", "soon"] {
            let config = StoreConfig::from_lookup(|name| match name {
                "TABLE_NAME" => Some("boards".into()),
                "DYNAMODB_OPERATION_TIMEOUT_MS" => Some(bad.into()),
                _ => None,
            });
            assert!(config.unwrap_err().contains("DYNAMODB_OPERATION_TIMEOUT_MS"));
        }
    }
}
