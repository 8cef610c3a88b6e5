//! The embedded adapter: one SQLite file (WAL, foreign keys, migrations at
//! open). All work runs on the blocking pool over one connection behind a
//! mutex: SQLite has one writer anyway, its statements take microseconds, and
//! one connection makes every read-modify-write trivially atomic.
//!
//! When the file is locked or unwritable, every call fails within the busy
//! timeout (`SQLITE_BUSY_TIMEOUT_MS`, default 2 s) counted from when it asked
//! for the connection, so queued requests answer 503 instead of waiting in
//! line for one timeout each.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use rusqlite::{Connection, ErrorCode, OptionalExtension, Row, TransactionBehavior, params};
use rusqlite_migration::{M, Migrations};

use super::Idempotency;
use super::idempotency::{self, Claim, Claimed, Completion, Record, StoredResponse};
use super::{AttemptKey, Attempts, Comments, Likes, Members, PostEdit, Posts, StoreError, StoreResult, cursor};
use crate::domain::{
    Author, BoardSlug, COMMENTS_PAGE, Comment, CommentKey, CommentPage, Guard, LikeState, Member, MemberCredentials,
    MemberId, Page, PageLimit, PasswordHash, Post, PostDetail, PostId, PostKey, PostSummary, Username, Window,
};
use crate::private_files;

const MIGRATIONS: &[M<'static>] = &[
    M::up(
        "CREATE TABLE members (
        id TEXT PRIMARY KEY,
        username TEXT NOT NULL UNIQUE,
        nickname TEXT NOT NULL,
        password_hash TEXT NOT NULL,
        created_at TEXT NOT NULL
    );
    CREATE TABLE posts (
        id TEXT PRIMARY KEY,
        board TEXT NOT NULL,
        title TEXT NOT NULL,
        body TEXT NOT NULL,
        author_kind TEXT NOT NULL CHECK (author_kind IN ('member', 'guest')),
        author_nickname TEXT NOT NULL,
        author_member_id TEXT,
        guest_password_hash TEXT,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        view_count INTEGER NOT NULL DEFAULT 0,
        like_count INTEGER NOT NULL DEFAULT 0,
        comment_count INTEGER NOT NULL DEFAULT 0
    );
    CREATE INDEX posts_by_board ON posts (board, id DESC);
    CREATE TABLE comments (
        id TEXT PRIMARY KEY,
        post_id TEXT NOT NULL REFERENCES posts (id) ON DELETE CASCADE,
        parent_id TEXT,
        body TEXT NOT NULL,
        author_kind TEXT NOT NULL CHECK (author_kind IN ('member', 'guest')),
        author_nickname TEXT NOT NULL,
        author_member_id TEXT,
        guest_password_hash TEXT,
        created_at TEXT NOT NULL
    );
    CREATE INDEX comments_by_post ON comments (post_id, id);
    CREATE TABLE likes (
        post_id TEXT NOT NULL REFERENCES posts (id) ON DELETE CASCADE,
        member_id TEXT NOT NULL,
        PRIMARY KEY (post_id, member_id)
    ) WITHOUT ROWID;
    CREATE TABLE attempts (
        key TEXT NOT NULL,
        window_start INTEGER NOT NULL,
        count INTEGER NOT NULL,
        expires_at INTEGER NOT NULL,
        PRIMARY KEY (key, window_start)
    ) WITHOUT ROWID;
    CREATE INDEX attempts_by_expiry ON attempts (expires_at);",
    ),
    // Idempotency records (docs/API.md, Idempotent creates): `status` and
    // `body` stay NULL while the claiming request runs.
    M::up(
        "CREATE TABLE idempotency (
        key TEXT PRIMARY KEY,
        fingerprint TEXT NOT NULL,
        token TEXT NOT NULL,
        lease_until INTEGER NOT NULL,
        expires_at INTEGER NOT NULL,
        status INTEGER,
        body TEXT
    ) WITHOUT ROWID;
    CREATE INDEX idempotency_by_expiry ON idempotency (expires_at);",
    ),
];

const POST_COLUMNS: &str = "id, board, title, author_kind, author_nickname, author_member_id, created_at, \
                            view_count, like_count, comment_count, body, updated_at";
const COMMENT_COLUMNS: &str =
    "id, post_id, parent_id, body, author_kind, author_nickname, author_member_id, created_at";

#[derive(Clone)]
pub struct SqliteStore {
    conn: Arc<tokio::sync::Mutex<Connection>>,
    busy_timeout: Duration,
}

/// How long a call may wait for the connection and the file lock together.
pub const DEFAULT_BUSY_TIMEOUT: Duration = Duration::from_secs(2);

impl std::fmt::Debug for SqliteStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqliteStore").finish_non_exhaustive()
    }
}

impl SqliteStore {
    /// Opens (creating when missing) the database file and brings its schema up to date.
    pub fn open(path: &Path) -> StoreResult<Self> {
        Self::open_with(path, DEFAULT_BUSY_TIMEOUT)
    }

    pub fn open_with(path: &Path, busy_timeout: Duration) -> StoreResult<Self> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            private_files::create_dir(dir)
                .map_err(|e| StoreError::Unavailable(format!("creating {}: {e}", dir.display())))?;
        }
        // Password hashes live here: owner only. SQLite gives its WAL and
        // shared-memory files the database file's permissions.
        let unreadable = |e: std::io::Error| StoreError::Unavailable(format!("{}: {e}", path.display()));
        private_files::create_file(path).map_err(unreadable)?;
        if private_files::shared_bits(path).map_err(unreadable)? != 0 {
            tracing::warn!(path = %path.display(), "the database was readable by group or others: made it owner-only");
            private_files::restrict(path).map_err(unreadable)?;
        }
        let mut conn = Connection::open(path).map_err(sql_error)?;
        conn.busy_timeout(busy_timeout).map_err(sql_error)?;
        conn.pragma_update(None, "journal_mode", "WAL").map_err(sql_error)?;
        conn.pragma_update(None, "synchronous", "NORMAL").map_err(sql_error)?;
        conn.pragma_update(None, "foreign_keys", "ON").map_err(sql_error)?;
        Migrations::from_slice(MIGRATIONS)
            .to_latest(&mut conn)
            .map_err(|e| StoreError::Internal(format!("migrating {}: {e}", path.display())))?;
        Ok(SqliteStore {
            conn: Arc::new(tokio::sync::Mutex::new(conn)),
            busy_timeout,
        })
    }

    async fn with<T, F>(&self, work: F) -> StoreResult<T>
    where
        T: Send + 'static,
        F: FnOnce(&mut Connection) -> StoreResult<T> + Send + 'static,
    {
        let deadline = Instant::now() + self.busy_timeout;
        let mut conn = tokio::time::timeout(self.busy_timeout, Arc::clone(&self.conn).lock_owned())
            .await
            .map_err(|_| {
                StoreError::Unavailable(format!(
                    "the database stayed busy for {} ms",
                    self.busy_timeout.as_millis()
                ))
            })?;
        tokio::task::spawn_blocking(move || {
            let left = deadline.saturating_duration_since(Instant::now());
            conn.busy_timeout(left.max(Duration::from_millis(1)))
                .map_err(sql_error)?;
            work(&mut conn)
        })
        .await
        .map_err(|e| StoreError::Internal(format!("sqlite task failed: {e}")))?
    }
}

/// Disk, lock and permission trouble is "unavailable" (503, retry later); the rest is a bug.
fn sql_error(e: rusqlite::Error) -> StoreError {
    match e.sqlite_error_code() {
        Some(
            ErrorCode::DatabaseBusy
            | ErrorCode::DatabaseLocked
            | ErrorCode::ReadOnly
            | ErrorCode::CannotOpen
            | ErrorCode::DiskFull
            | ErrorCode::SystemIoFailure
            | ErrorCode::PermissionDenied
            | ErrorCode::OutOfMemory,
        ) => StoreError::Unavailable(e.to_string()),
        _ => StoreError::Internal(e.to_string()),
    }
}

fn author_columns(author: &Author) -> (&'static str, &str, Option<&str>) {
    match author {
        Author::Member { member_id, nickname } => ("member", nickname, Some(member_id)),
        Author::Guest { nickname } => ("guest", nickname, None),
    }
}

fn author_from(kind: String, nickname: String, member_id: Option<String>) -> Author {
    match (kind.as_str(), member_id) {
        ("member", Some(member_id)) => Author::Member { member_id, nickname },
        _ => Author::Guest { nickname },
    }
}

fn count(row: &Row<'_>, index: usize) -> rusqlite::Result<u64> {
    Ok(u64::try_from(row.get::<_, i64>(index)?).unwrap_or(0))
}

fn summary_from(row: &Row<'_>) -> rusqlite::Result<PostSummary> {
    Ok(PostSummary {
        id: row.get(0)?,
        board: row.get(1)?,
        title: row.get(2)?,
        author: author_from(row.get(3)?, row.get(4)?, row.get(5)?),
        created_at: row.get(6)?,
        view_count: count(row, 7)?,
        like_count: count(row, 8)?,
        comment_count: count(row, 9)?,
    })
}

fn post_from(row: &Row<'_>) -> rusqlite::Result<Post> {
    Ok(Post {
        summary: summary_from(row)?,
        body: row.get(10)?,
        updated_at: row.get(11)?,
    })
}

fn comment_from(row: &Row<'_>) -> rusqlite::Result<Comment> {
    Ok(Comment {
        id: row.get(0)?,
        post_id: row.get(1)?,
        parent_id: row.get(2)?,
        body: row.get(3)?,
        author: author_from(row.get(4)?, row.get(5)?, row.get(6)?),
        created_at: row.get(7)?,
    })
}

fn guard_from(row: &Row<'_>) -> rusqlite::Result<Guard> {
    Ok(Guard {
        author: author_from(row.get(0)?, row.get(1)?, row.get(2)?),
        guest_password_hash: row.get::<_, Option<String>>(3)?.map(PasswordHash::new),
    })
}

fn post_exists(conn: &Connection, board: &str, post_id: &str) -> StoreResult<bool> {
    conn.query_row(
        "SELECT EXISTS (SELECT 1 FROM posts WHERE id = ?1 AND board = ?2)",
        params![post_id, board],
        |row| row.get(0),
    )
    .map_err(sql_error)
}

/// A page of a post's comments, oldest first, strictly after `after`: one
/// range read of `comments_by_post (post_id, id)`, `limit + 1` rows.
fn comments_page(conn: &Connection, post_id: &str, limit: usize, after: Option<&str>) -> StoreResult<CommentPage> {
    let fetch = i64::try_from(limit + 1).unwrap_or(i64::MAX);
    // Every id sorts after "": the first page is the same range read.
    let after = after.unwrap_or_default();
    let comments = conn
        .prepare_cached(&format!(
            "SELECT {COMMENT_COLUMNS} FROM comments WHERE post_id = ?1 AND id > ?2 ORDER BY id LIMIT ?3"
        ))
        .and_then(|mut stmt| {
            stmt.query_map(params![post_id, after, fetch], comment_from)?
                .collect::<Result<Vec<_>, _>>()
        })
        .map_err(sql_error)?;
    Ok(cursor::comment_page_of(comments, limit, false))
}

fn like_count(conn: &Connection, post_id: &str) -> StoreResult<u64> {
    conn.query_row("SELECT like_count FROM posts WHERE id = ?1", [post_id], |row| {
        count(row, 0)
    })
    .map_err(sql_error)
}

#[async_trait]
impl Members for SqliteStore {
    async fn create_member(
        &self,
        member: &Member,
        password_hash: &PasswordHash,
        done: Option<&Completion>,
    ) -> StoreResult<()> {
        let (member, hash, done) = (member.clone(), password_hash.as_str().to_owned(), done.cloned());
        self.with(move |conn| {
            let tx = conn
                .transaction_with_behavior(TransactionBehavior::Immediate)
                .map_err(sql_error)?;
            tx.execute(
                "INSERT INTO members (id, username, nickname, password_hash, created_at) VALUES (?1, ?2, ?3, ?4, ?5)",
                params![member.id, member.username, member.nickname, hash, member.created_at],
            )
            .map_err(|e| match e.sqlite_error_code() {
                Some(ErrorCode::ConstraintViolation) => StoreError::UsernameTaken,
                _ => sql_error(e),
            })?;
            complete(&tx, done.as_ref())?;
            tx.commit().map_err(sql_error)
        })
        .await
    }

    async fn member_credentials(&self, username: &Username) -> StoreResult<Option<MemberCredentials>> {
        let username = username.as_str().to_owned();
        self.with(move |conn| {
            conn.query_row(
                "SELECT id, username, nickname, created_at, password_hash FROM members WHERE username = ?1",
                [username],
                |row| {
                    Ok(MemberCredentials {
                        member: Member {
                            id: row.get(0)?,
                            username: row.get(1)?,
                            nickname: row.get(2)?,
                            created_at: row.get(3)?,
                        },
                        password_hash: PasswordHash::new(row.get(4)?),
                    })
                },
            )
            .optional()
            .map_err(sql_error)
        })
        .await
    }

    async fn replace_password_hash(
        &self,
        username: &Username,
        old: &PasswordHash,
        new: &PasswordHash,
    ) -> StoreResult<bool> {
        let (username, old, new) = (
            username.as_str().to_owned(),
            old.as_str().to_owned(),
            new.as_str().to_owned(),
        );
        self.with(move |conn| {
            let changed = conn
                .execute(
                    "UPDATE members SET password_hash = ?1 WHERE username = ?2 AND password_hash = ?3",
                    params![new, username, old],
                )
                .map_err(sql_error)?;
            Ok(changed == 1)
        })
        .await
    }
}

#[async_trait]
impl Posts for SqliteStore {
    async fn create_post(
        &self,
        post: &Post,
        guest_password_hash: Option<&PasswordHash>,
        done: Option<&Completion>,
    ) -> StoreResult<()> {
        let (post, hash, done) = (
            post.clone(),
            guest_password_hash.map(|h| h.as_str().to_owned()),
            done.cloned(),
        );
        self.with(move |conn| {
            let s = &post.summary;
            let (kind, nickname, member_id) = author_columns(&s.author);
            let tx = conn
                .transaction_with_behavior(TransactionBehavior::Immediate)
                .map_err(sql_error)?;
            tx.execute(
                "INSERT INTO posts (id, board, title, body, author_kind, author_nickname, author_member_id,
                    guest_password_hash, created_at, updated_at, view_count, like_count, comment_count)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, 0, 0, 0)",
                params![
                    s.id,
                    s.board,
                    s.title,
                    post.body,
                    kind,
                    nickname,
                    member_id,
                    hash,
                    s.created_at,
                    post.updated_at
                ],
            )
            .map_err(sql_error)?;
            complete(&tx, done.as_ref())?;
            tx.commit().map_err(sql_error)
        })
        .await
    }

    async fn post_detail(&self, key: &PostKey) -> StoreResult<Option<PostDetail>> {
        let (board, post_id) = (key.board.as_str().to_owned(), key.post.as_str().to_owned());
        self.with(move |conn| {
            let tx = conn.transaction().map_err(sql_error)?;
            let post = tx
                .query_row(
                    &format!("SELECT {POST_COLUMNS} FROM posts WHERE id = ?1 AND board = ?2"),
                    params![post_id, board],
                    post_from,
                )
                .optional()
                .map_err(sql_error)?;
            let Some(post) = post else { return Ok(None) };
            let page = comments_page(&tx, &post_id, COMMENTS_PAGE, None)?;
            Ok(Some(PostDetail {
                post,
                comments: page.comments,
                comments_next_cursor: page.next_cursor,
            }))
        })
        .await
    }

    async fn list_comments(
        &self,
        key: &PostKey,
        limit: PageLimit,
        cursor: Option<&str>,
    ) -> StoreResult<Option<CommentPage>> {
        let after = cursor.map(cursor::decode).transpose()?;
        let (board, post_id, limit) = (key.board.as_str().to_owned(), key.post.as_str().to_owned(), limit.get());
        self.with(move |conn| {
            // One read transaction: the post check and the page see the same snapshot.
            let tx = conn.transaction().map_err(sql_error)?;
            if !post_exists(&tx, &board, &post_id)? {
                return Ok(None);
            }
            comments_page(&tx, &post_id, limit, after.as_deref()).map(Some)
        })
        .await
    }

    /// The view and the read in one transaction: the detail shows the count
    /// this view left.
    async fn view_post(&self, key: &PostKey) -> StoreResult<Option<PostDetail>> {
        let (board, post_id) = (key.board.as_str().to_owned(), key.post.as_str().to_owned());
        self.with(move |conn| {
            let tx = conn.transaction().map_err(sql_error)?;
            let counted = tx
                .execute(
                    "UPDATE posts SET view_count = view_count + 1 WHERE id = ?1 AND board = ?2",
                    params![post_id, board],
                )
                .map_err(sql_error)?;
            if counted == 0 {
                return Ok(None);
            }
            let post = tx
                .query_row(
                    &format!("SELECT {POST_COLUMNS} FROM posts WHERE id = ?1"),
                    params![post_id],
                    post_from,
                )
                .map_err(sql_error)?;
            let page = comments_page(&tx, &post_id, COMMENTS_PAGE, None)?;
            tx.commit().map_err(sql_error)?;
            Ok(Some(PostDetail {
                post,
                comments: page.comments,
                comments_next_cursor: page.next_cursor,
            }))
        })
        .await
    }

    async fn list_posts(&self, board: &BoardSlug, limit: PageLimit, cursor: Option<&str>) -> StoreResult<Page> {
        let after = cursor.map(cursor::decode).transpose()?;
        let (board, limit) = (board.as_str().to_owned(), limit.get());
        self.with(move |conn| {
            let mut stmt = conn
                .prepare_cached(&format!(
                    "SELECT {POST_COLUMNS} FROM posts WHERE board = ?1 AND (?2 IS NULL OR id < ?2)
                     ORDER BY id DESC LIMIT ?3"
                ))
                .map_err(sql_error)?;
            let fetch = i64::try_from(limit + 1).unwrap_or(i64::MAX);
            let mut posts = stmt
                .query_map(params![board, after, fetch], summary_from)
                .and_then(|rows| rows.collect::<Result<Vec<_>, _>>())
                .map_err(sql_error)?;
            Ok(cursor::page_of(&mut posts, limit))
        })
        .await
    }

    async fn post_guard(&self, key: &PostKey) -> StoreResult<Option<Guard>> {
        let (board, post_id) = (key.board.as_str().to_owned(), key.post.as_str().to_owned());
        self.with(move |conn| {
            conn.query_row(
                "SELECT author_kind, author_nickname, author_member_id, guest_password_hash
                 FROM posts WHERE id = ?1 AND board = ?2",
                params![post_id, board],
                guard_from,
            )
            .optional()
            .map_err(sql_error)
        })
        .await
    }

    async fn update_post(&self, key: &PostKey, edit: &PostEdit) -> StoreResult<bool> {
        let (board, post_id, title, body, updated_at) = (
            key.board.as_str().to_owned(),
            key.post.as_str().to_owned(),
            edit.title.as_str().to_owned(),
            edit.body.as_str().to_owned(),
            edit.updated_at.clone(),
        );
        self.with(move |conn| {
            let changed = conn
                .execute(
                    "UPDATE posts SET title = ?1, body = ?2, updated_at = ?3 WHERE id = ?4 AND board = ?5",
                    params![title, body, updated_at, post_id, board],
                )
                .map_err(sql_error)?;
            Ok(changed == 1)
        })
        .await
    }

    async fn delete_post(&self, key: &PostKey) -> StoreResult<bool> {
        let (board, post_id) = (key.board.as_str().to_owned(), key.post.as_str().to_owned());
        self.with(move |conn| {
            // Comments and likes go with it (ON DELETE CASCADE), in the same statement.
            let deleted = conn
                .execute(
                    "DELETE FROM posts WHERE id = ?1 AND board = ?2",
                    params![post_id, board],
                )
                .map_err(sql_error)?;
            Ok(deleted == 1)
        })
        .await
    }

    async fn replace_post_guest_hash(
        &self,
        key: &PostKey,
        old: &PasswordHash,
        new: &PasswordHash,
    ) -> StoreResult<bool> {
        let (board, post_id, old, new) = (
            key.board.as_str().to_owned(),
            key.post.as_str().to_owned(),
            old.as_str().to_owned(),
            new.as_str().to_owned(),
        );
        self.with(move |conn| {
            let changed = conn
                .execute(
                    "UPDATE posts SET guest_password_hash = ?1
                     WHERE id = ?2 AND board = ?3 AND guest_password_hash = ?4",
                    params![new, post_id, board, old],
                )
                .map_err(sql_error)?;
            Ok(changed == 1)
        })
        .await
    }
}

#[async_trait]
impl Comments for SqliteStore {
    async fn create_comment(
        &self,
        board: &BoardSlug,
        comment: &Comment,
        guest_password_hash: Option<&PasswordHash>,
        done: Option<&Completion>,
    ) -> StoreResult<()> {
        let (board, c, hash, done) = (
            board.as_str().to_owned(),
            comment.clone(),
            guest_password_hash.map(|h| h.as_str().to_owned()),
            done.cloned(),
        );
        self.with(move |conn| {
            let tx = conn
                .transaction_with_behavior(TransactionBehavior::Immediate)
                .map_err(sql_error)?;
            if !post_exists(&tx, &board, &c.post_id)? {
                return Err(StoreError::NotFound);
            }
            if let Some(parent) = &c.parent_id {
                let top_level_sibling: bool = tx
                    .query_row(
                        "SELECT EXISTS (SELECT 1 FROM comments WHERE id = ?1 AND post_id = ?2 AND parent_id IS NULL)",
                        params![parent, c.post_id],
                        |row| row.get(0),
                    )
                    .map_err(sql_error)?;
                if !top_level_sibling {
                    return Err(StoreError::InvalidParent);
                }
            }
            let (kind, nickname, member_id) = author_columns(&c.author);
            tx.execute(
                "INSERT INTO comments (id, post_id, parent_id, body, author_kind, author_nickname, author_member_id,
                    guest_password_hash, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
                params![
                    c.id,
                    c.post_id,
                    c.parent_id,
                    c.body,
                    kind,
                    nickname,
                    member_id,
                    hash,
                    c.created_at
                ],
            )
            .map_err(sql_error)?;
            tx.execute(
                "UPDATE posts SET comment_count = comment_count + 1 WHERE id = ?1",
                [&c.post_id],
            )
            .map_err(sql_error)?;
            complete(&tx, done.as_ref())?;
            tx.commit().map_err(sql_error)
        })
        .await
    }

    async fn comment_guard(&self, key: &CommentKey) -> StoreResult<Option<Guard>> {
        let (board, post_id, comment_id) = (
            key.post.board.as_str().to_owned(),
            key.post.post.as_str().to_owned(),
            key.comment.as_str().to_owned(),
        );
        self.with(move |conn| {
            conn.query_row(
                "SELECT c.author_kind, c.author_nickname, c.author_member_id, c.guest_password_hash
                 FROM comments c JOIN posts p ON p.id = c.post_id
                 WHERE c.id = ?1 AND c.post_id = ?2 AND p.board = ?3",
                params![comment_id, post_id, board],
                guard_from,
            )
            .optional()
            .map_err(sql_error)
        })
        .await
    }

    async fn delete_comment(&self, key: &CommentKey) -> StoreResult<bool> {
        let (board, post_id, comment_id) = (
            key.post.board.as_str().to_owned(),
            key.post.post.as_str().to_owned(),
            key.comment.as_str().to_owned(),
        );
        self.with(move |conn| {
            let tx = conn
                .transaction_with_behavior(TransactionBehavior::Immediate)
                .map_err(sql_error)?;
            if !post_exists(&tx, &board, &post_id)? {
                return Ok(false);
            }
            let deleted = tx
                .execute(
                    "DELETE FROM comments WHERE id = ?1 AND post_id = ?2",
                    params![comment_id, post_id],
                )
                .map_err(sql_error)?;
            if deleted == 1 {
                tx.execute(
                    "UPDATE posts SET comment_count = comment_count - 1 WHERE id = ?1",
                    [&post_id],
                )
                .map_err(sql_error)?;
            }
            tx.commit().map_err(sql_error)?;
            Ok(deleted == 1)
        })
        .await
    }

    async fn replace_comment_guest_hash(
        &self,
        key: &CommentKey,
        old: &PasswordHash,
        new: &PasswordHash,
    ) -> StoreResult<bool> {
        let (board, post_id, comment_id, old, new) = (
            key.post.board.as_str().to_owned(),
            key.post.post.as_str().to_owned(),
            key.comment.as_str().to_owned(),
            old.as_str().to_owned(),
            new.as_str().to_owned(),
        );
        self.with(move |conn| {
            let changed = conn
                .execute(
                    "UPDATE comments SET guest_password_hash = ?1
                     WHERE id = ?2 AND post_id = ?3 AND guest_password_hash = ?4
                       AND post_id IN (SELECT id FROM posts WHERE board = ?5)",
                    params![new, comment_id, post_id, old, board],
                )
                .map_err(sql_error)?;
            Ok(changed == 1)
        })
        .await
    }
}

#[async_trait]
impl Likes for SqliteStore {
    async fn like(&self, key: &PostKey, member: &MemberId) -> StoreResult<Option<LikeState>> {
        self.set_like(key.board.as_str(), key.post.as_str(), member.as_str(), true)
            .await
    }

    async fn unlike(&self, key: &PostKey, member: &MemberId) -> StoreResult<Option<LikeState>> {
        self.set_like(key.board.as_str(), key.post.as_str(), member.as_str(), false)
            .await
    }

    async fn has_liked(&self, post: &PostId, member: &MemberId) -> StoreResult<bool> {
        let (post_id, member_id) = (post.as_str().to_owned(), member.as_str().to_owned());
        self.with(move |conn| {
            conn.query_row(
                "SELECT EXISTS (SELECT 1 FROM likes WHERE post_id = ?1 AND member_id = ?2)",
                params![post_id, member_id],
                |row| row.get(0),
            )
            .map_err(sql_error)
        })
        .await
    }
}

impl SqliteStore {
    async fn set_like(
        &self,
        board: &str,
        post_id: &str,
        member_id: &str,
        liked: bool,
    ) -> StoreResult<Option<LikeState>> {
        let (board, post_id, member_id) = (board.to_owned(), post_id.to_owned(), member_id.to_owned());
        self.with(move |conn| {
            let tx = conn
                .transaction_with_behavior(TransactionBehavior::Immediate)
                .map_err(sql_error)?;
            if !post_exists(&tx, &board, &post_id)? {
                return Ok(None);
            }
            let (change, delta) = if liked {
                (
                    "INSERT OR IGNORE INTO likes (post_id, member_id) VALUES (?1, ?2)",
                    "+ 1",
                )
            } else {
                ("DELETE FROM likes WHERE post_id = ?1 AND member_id = ?2", "- 1")
            };
            if tx.execute(change, params![post_id, member_id]).map_err(sql_error)? == 1 {
                tx.execute(
                    &format!("UPDATE posts SET like_count = like_count {delta} WHERE id = ?1"),
                    [&post_id],
                )
                .map_err(sql_error)?;
            }
            let like_count = like_count(&tx, &post_id)?;
            tx.commit().map_err(sql_error)?;
            Ok(Some(LikeState { liked, like_count }))
        })
        .await
    }
}

#[async_trait]
impl Attempts for SqliteStore {
    async fn record_failure(&self, key: &AttemptKey, window: Window) -> StoreResult<u64> {
        let key = key.as_str().to_owned();
        self.with(move |conn| {
            // Old windows are useless once over; sweep them as we go.
            conn.execute("DELETE FROM attempts WHERE expires_at < ?1", [window.start])
                .map_err(sql_error)?;
            conn.query_row(
                "INSERT INTO attempts (key, window_start, count, expires_at) VALUES (?1, ?2, 1, ?3)
                 ON CONFLICT (key, window_start) DO UPDATE SET count = count + 1
                 RETURNING count",
                params![key, window.start, window.end()],
                |row| count(row, 0),
            )
            .map_err(sql_error)
        })
        .await
    }

    async fn forgive_failure(&self, key: &AttemptKey, window: Window) -> StoreResult<()> {
        let key = key.as_str().to_owned();
        self.with(move |conn| {
            conn.execute(
                "UPDATE attempts SET count = count - 1 WHERE key = ?1 AND window_start = ?2 AND count > 0",
                params![key, window.start],
            )
            .map_err(sql_error)?;
            Ok(())
        })
        .await
    }

    async fn failures(&self, key: &AttemptKey, window: Window) -> StoreResult<u64> {
        let key = key.as_str().to_owned();
        self.with(move |conn| {
            conn.query_row(
                "SELECT count FROM attempts WHERE key = ?1 AND window_start = ?2",
                params![key, window.start],
                |row| count(row, 0),
            )
            .optional()
            .map(Option::unwrap_or_default)
            .map_err(sql_error)
        })
        .await
    }
}

/// Completes an idempotency record inside the create's transaction, only if
/// the request still holds its claim (else the whole create rolls back).
fn complete(tx: &rusqlite::Transaction<'_>, done: Option<&Completion>) -> StoreResult<()> {
    let Some(done) = done else { return Ok(()) };
    let completed = tx
        .execute(
            "UPDATE idempotency SET status = ?1, body = ?2, expires_at = ?3
             WHERE key = ?4 AND token = ?5 AND status IS NULL",
            params![
                done.response.status,
                done.response.body,
                done.expires_at,
                done.key,
                done.token
            ],
        )
        .map_err(sql_error)?;
    if completed == 1 {
        Ok(())
    } else {
        Err(StoreError::ClaimLost)
    }
}

#[async_trait]
impl Idempotency for SqliteStore {
    async fn claim(&self, claim: &Claim) -> StoreResult<Claimed> {
        let claim = claim.clone();
        self.with(move |conn| {
            let tx = conn
                .transaction_with_behavior(TransactionBehavior::Immediate)
                .map_err(sql_error)?;
            let record = tx
                .query_row(
                    "SELECT fingerprint, token, lease_until, expires_at, status, body FROM idempotency WHERE key = ?1",
                    [&claim.key],
                    |row| {
                        let status: Option<u16> = row.get(4)?;
                        let body: Option<String> = row.get(5)?;
                        Ok(Record {
                            fingerprint: row.get(0)?,
                            token: row.get(1)?,
                            lease_until: row.get(2)?,
                            expires_at: row.get(3)?,
                            response: status.zip(body).map(|(status, body)| StoredResponse { status, body }),
                        })
                    },
                )
                .optional()
                .map_err(sql_error)?;
            if let Some(decided) = idempotency::decide(record.as_ref(), &claim) {
                return Ok(decided);
            }
            tx.execute(
                "INSERT OR REPLACE INTO idempotency (key, fingerprint, token, lease_until, expires_at, status, body)
                 VALUES (?1, ?2, ?3, ?4, ?5, NULL, NULL)",
                params![
                    claim.key,
                    claim.fingerprint,
                    claim.token,
                    claim.lease_until(),
                    claim.expires_at()
                ],
            )
            .map_err(sql_error)?;
            // Expired records go as new ones come: no sweeper needed.
            tx.execute("DELETE FROM idempotency WHERE expires_at <= ?1", [claim.now])
                .map_err(sql_error)?;
            tx.commit().map_err(sql_error)?;
            Ok(Claimed::Fresh)
        })
        .await
    }

    async fn release(&self, key: &str, token: &str) -> StoreResult<()> {
        let (key, token) = (key.to_owned(), token.to_owned());
        self.with(move |conn| {
            conn.execute(
                "DELETE FROM idempotency WHERE key = ?1 AND token = ?2 AND status IS NULL",
                params![key, token],
            )
            .map_err(sql_error)?;
            Ok(())
        })
        .await
    }
}

#[cfg(test)]
mod tests {

    #[cfg(unix)]
    #[test]
    fn the_database_is_owner_only_even_when_an_older_version_made_it_readable() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("new").join("boards.sqlite3");
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        drop(SqliteStore::open(&path).unwrap());
        assert_eq!(mode(path.parent().unwrap()), 0o700);
        assert_eq!(mode(&path), 0o600);
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        drop(SqliteStore::open(&path).unwrap());
        assert_eq!(mode(&path), 0o600);
        let wal = path.with_extension("sqlite3-wal");
        if wal.exists() {
            assert_eq!(mode(&wal) & 0o077, 0);
        }
    }
    use super::*;

    /// A comments page is a range read of `comments_by_post`, already in id
    /// order: no scan of the post's other comments, no sort.
    #[test]
    fn comment_pages_read_a_range_of_the_post_index() {
        let dir = tempfile::tempdir().unwrap();
        let store = SqliteStore::open(&dir.path().join("plan.sqlite3")).unwrap();
        let conn = store.conn.try_lock().unwrap();
        let plan: Vec<String> = conn
            .prepare(&format!(
                "EXPLAIN QUERY PLAN SELECT {COMMENT_COLUMNS} FROM comments
                 WHERE post_id = ?1 AND id > ?2 ORDER BY id LIMIT ?3"
            ))
            .unwrap()
            .query_map(params!["p", "", 51], |row| row.get::<_, String>(3))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(
            plan,
            vec!["SEARCH comments USING INDEX comments_by_post (post_id=? AND id>?)".to_owned()],
            "{plan:?}"
        );
    }
}
