//! [`Accounts`] on SQLite: the epoch and the deletion mark on the member's
//! row, the pending deletions in `account_deletions`, and the member's own
//! posts, comments and likes read through the indexes by author and by liker
//! (migrations.rs, migration 4).

use async_trait::async_trait;
use rusqlite::{OptionalExtension, TransactionBehavior, params};

use super::rows::{COMMENT_COLUMNS, POST_COLUMNS, comment_from, summary_from};
use super::{SqliteStore, sql_error};
use crate::domain::{
    BoardSlug, CommentId, CommentKey, CommentPage, DELETED_MEMBER_NICKNAME, MemberId, Owned, Page, PageLimit,
    PasswordHash, PendingDeletion, PostId, PostKey, SessionState, Username, now,
};
use crate::store::{Accounts, StoreResult, cursor};

/// A live member's row: the id and the username name the same one.
const LIVE: &str = "id = ?1 AND username = ?2 AND deleted_at IS NULL";

fn post_key(board: String, post: String) -> PostKey {
    PostKey {
        board: BoardSlug::from_stored(board),
        post: PostId::from_stored(post),
    }
}

fn limit_of(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

#[async_trait]
impl Accounts for SqliteStore {
    /// Read every time: a primary-key lookup of microseconds, so a change
    /// takes effect at once on the server.
    async fn session_state(&self, id: &MemberId, username: &Username) -> StoreResult<Option<SessionState>> {
        let (id, username) = (id.as_str().to_owned(), username.as_str().to_owned());
        self.read(move |conn| {
            conn.prepare_cached(&format!(
                "SELECT session_epoch, totp_secret IS NOT NULL AND totp_confirmed FROM members WHERE {LIVE}"
            ))
            .and_then(|mut stmt| {
                stmt.query_row(params![id, username], |row| {
                    Ok(SessionState {
                        epoch: u64::try_from(row.get::<_, i64>(0)?).unwrap_or(0),
                        totp: row.get(1)?,
                    })
                })
                .optional()
            })
            .map_err(sql_error)
        })
        .await
    }

    async fn end_sessions(&self, id: &MemberId, username: &Username) -> StoreResult<bool> {
        let (id, username) = (id.as_str().to_owned(), username.as_str().to_owned());
        self.with(move |conn| {
            conn.execute(
                &format!("UPDATE members SET session_epoch = session_epoch + 1 WHERE {LIVE}"),
                params![id, username],
            )
            .map(|changed| changed == 1)
            .map_err(sql_error)
        })
        .await
    }

    async fn change_password(&self, id: &MemberId, username: &Username, new: &PasswordHash) -> StoreResult<bool> {
        let (id, username, new) = (
            id.as_str().to_owned(),
            username.as_str().to_owned(),
            new.as_str().to_owned(),
        );
        self.with(move |conn| {
            conn.execute(
                &format!("UPDATE members SET password_hash = ?3, session_epoch = session_epoch + 1 WHERE {LIVE}"),
                params![id, username, new],
            )
            .map(|changed| changed == 1)
            .map_err(sql_error)
        })
        .await
    }

    async fn close_account(
        &self,
        id: &MemberId,
        username: &Username,
        delete_content: bool,
        _moderates: &[BoardSlug],
    ) -> StoreResult<bool> {
        let (id, username) = (id.as_str().to_owned(), username.as_str().to_owned());
        self.with(move |conn| {
            let tx = conn
                .transaction_with_behavior(TransactionBehavior::Immediate)
                .map_err(sql_error)?;
            // The row stays for its username; nothing else of it is kept.
            let closed = tx
                .execute(
                    &format!(
                        "UPDATE members SET nickname = '', password_hash = '', session_epoch = session_epoch + 1,
                         totp_secret = NULL, totp_confirmed = 0, totp_last_step = 0, totp_recovery = '[]',
                         deleted_at = ?3 WHERE {LIVE}"
                    ),
                    params![id, username, now()],
                )
                .map_err(sql_error)?;
            if closed == 0 {
                return Ok(false);
            }
            // Every appointment, whichever boards the caller knew of.
            tx.execute("DELETE FROM moderators WHERE member_id = ?1", [&id])
                .map_err(sql_error)?;
            tx.execute(
                "INSERT INTO account_deletions (member_id, delete_content, started) VALUES (?1, ?2, ?3)",
                params![id, delete_content, now()],
            )
            .map_err(sql_error)?;
            tx.commit().map_err(sql_error)?;
            Ok(true)
        })
        .await
    }

    async fn pending_deletions(&self, limit: usize) -> StoreResult<Vec<PendingDeletion>> {
        self.read(move |conn| {
            let mut stmt = conn
                .prepare_cached(
                    "SELECT member_id, delete_content FROM account_deletions ORDER BY started, member_id LIMIT ?1",
                )
                .map_err(sql_error)?;
            stmt.query_map([limit_of(limit)], |row| {
                Ok(PendingDeletion {
                    member: MemberId::from_stored(row.get(0)?),
                    delete_content: row.get(1)?,
                })
            })
            .and_then(|rows| rows.collect())
            .map_err(sql_error)
        })
        .await
    }

    async fn owned(&self, member: &MemberId, likes: bool, limit: usize) -> StoreResult<Vec<Owned>> {
        let member = member.as_str().to_owned();
        self.read(move |conn| {
            let n = limit_of(limit);
            let mut found: Vec<Owned> = conn
                .prepare_cached("SELECT board, id FROM posts WHERE author_member_id = ?1 ORDER BY id LIMIT ?2")
                .and_then(|mut stmt| {
                    stmt.query_map(params![member, n], |row| {
                        Ok(Owned::Post(post_key(row.get(0)?, row.get(1)?)))
                    })?
                    .collect()
                })
                .map_err(sql_error)?;
            let left = limit_of(limit.saturating_sub(found.len()));
            let comments: Vec<Owned> = conn
                .prepare_cached(
                    "SELECT p.board, c.post_id, c.id FROM comments c JOIN posts p ON p.id = c.post_id
                     WHERE c.author_member_id = ?1 ORDER BY c.id LIMIT ?2",
                )
                .and_then(|mut stmt| {
                    stmt.query_map(params![member, left], |row| {
                        Ok(Owned::Comment(CommentKey {
                            post: post_key(row.get(0)?, row.get(1)?),
                            comment: CommentId::from_stored(row.get(2)?),
                        }))
                    })?
                    .collect()
                })
                .map_err(sql_error)?;
            found.extend(comments);
            if likes {
                let left = limit_of(limit.saturating_sub(found.len()));
                let liked: Vec<Owned> = conn
                    .prepare_cached(
                        "SELECT p.board, l.post_id FROM likes l JOIN posts p ON p.id = l.post_id
                         WHERE l.member_id = ?1 ORDER BY l.post_id LIMIT ?2",
                    )
                    .and_then(|mut stmt| {
                        stmt.query_map(params![member, left], |row| {
                            Ok(Owned::Like(post_key(row.get(0)?, row.get(1)?)))
                        })?
                        .collect()
                    })
                    .map_err(sql_error)?;
                found.extend(liked);
            }
            Ok(found)
        })
        .await
    }

    /// One transaction for the batch.
    async fn disown(&self, member: &MemberId, items: &[Owned]) -> StoreResult<()> {
        let (member, items) = (member.as_str().to_owned(), items.to_vec());
        self.with(move |conn| {
            let tx = conn
                .transaction_with_behavior(TransactionBehavior::Immediate)
                .map_err(sql_error)?;
            for item in &items {
                let (table, id) = match item {
                    Owned::Post(key) => ("posts", key.post.as_str()),
                    Owned::Comment(key) => ("comments", key.comment.as_str()),
                    Owned::Like(_) => continue,
                };
                tx.execute(
                    &format!(
                        "UPDATE {table} SET author_nickname = ?3, author_member_id = NULL, writer_key = NULL, writer_range = NULL
                         WHERE id = ?1 AND author_member_id = ?2"
                    ),
                    params![id, member, DELETED_MEMBER_NICKNAME],
                )
                .map_err(sql_error)?;
            }
            tx.commit().map_err(sql_error)
        })
        .await
    }

    async fn finish_deletion(&self, member: &MemberId) -> StoreResult<()> {
        let member = member.as_str().to_owned();
        self.with(move |conn| {
            conn.execute("DELETE FROM account_deletions WHERE member_id = ?1", [member])
                .map(|_| ())
                .map_err(sql_error)
        })
        .await
    }

    async fn moderated_boards(&self, member: &MemberId, boards: &[BoardSlug]) -> StoreResult<Vec<BoardSlug>> {
        let (member, boards) = (member.as_str().to_owned(), boards.to_vec());
        self.read(move |conn| {
            let appointed: Vec<String> = conn
                .prepare_cached("SELECT board FROM moderators WHERE member_id = ?1")
                .and_then(|mut stmt| stmt.query_map([member], |row| row.get(0))?.collect())
                .map_err(sql_error)?;
            Ok(boards
                .into_iter()
                .filter(|b| appointed.iter().any(|a| a == b.as_str()))
                .collect())
        })
        .await
    }

    async fn member_posts(&self, member: &MemberId, limit: PageLimit, cursor: Option<&str>) -> StoreResult<Page> {
        let after = cursor.map(cursor::decode).transpose()?;
        let (member, limit) = (member.as_str().to_owned(), limit.get());
        self.read(move |conn| {
            let mut posts = conn
                .prepare_cached(&format!(
                    "SELECT {POST_COLUMNS} FROM posts WHERE author_member_id = ?1 AND (?2 IS NULL OR id < ?2)
                     ORDER BY id DESC LIMIT ?3"
                ))
                .and_then(|mut stmt| {
                    stmt.query_map(params![member, after, limit_of(limit + 1)], summary_from)?
                        .collect::<Result<Vec<_>, _>>()
                })
                .map_err(sql_error)?;
            Ok(cursor::page_of(&mut posts, limit))
        })
        .await
    }

    async fn member_comments(
        &self,
        member: &MemberId,
        limit: PageLimit,
        cursor: Option<&str>,
    ) -> StoreResult<CommentPage> {
        let after = cursor.map(cursor::decode).transpose()?;
        let (member, limit) = (member.as_str().to_owned(), limit.get());
        self.read(move |conn| {
            let comments = conn
                .prepare_cached(&format!(
                    "SELECT {COMMENT_COLUMNS} FROM comments WHERE author_member_id = ?1 AND (?2 IS NULL OR id < ?2)
                     ORDER BY id DESC LIMIT ?3"
                ))
                .and_then(|mut stmt| {
                    stmt.query_map(params![member, after, limit_of(limit + 1)], comment_from)?
                        .collect::<Result<Vec<_>, _>>()
                })
                .map_err(sql_error)?;
            Ok(cursor::comment_page_of(comments, limit, false))
        })
        .await
    }
}
