//! [`Comments`] on SQLite: the `comments` table, each write counted on its
//! post in the same transaction.

use async_trait::async_trait;
use rusqlite::{OptionalExtension, TransactionBehavior, params};

use super::cascade::delete_comment_row;
use super::idempotency::complete;
use super::rows::{COMMENT_COLUMNS, author_columns, comment_from, guard_from, post_exists};
use super::{SqliteStore, media, sql_error};
use crate::domain::media::{MediaOwner, to_stored};
use crate::domain::{Author, BoardSlug, Comment, CommentId, CommentKey, Guard, PasswordHash, PostId, PostKey, Writer};
use crate::store::{Comments, Completion, StoreError, StoreResult};

#[async_trait]
impl Comments for SqliteStore {
    async fn create_comment(
        &self,
        board: &BoardSlug,
        comment: &Comment,
        writer: &Writer,
        guest_password_hash: Option<&PasswordHash>,
        _answers: bool,
        done: Option<&Completion>,
    ) -> StoreResult<()> {
        let owner = MediaOwner::writing(&comment.author, writer);
        let (board, c, writer, range, hash, done) = (
            board.as_str().to_owned(),
            comment.clone(),
            writer.key.as_str().to_owned(),
            writer.range.as_str().to_owned(),
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
                    guest_password_hash, created_at, writer_key, writer_range, media)
                    VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
                params![
                    c.id,
                    c.post_id,
                    c.parent_id,
                    c.body,
                    kind,
                    nickname,
                    member_id,
                    hash,
                    c.created_at,
                    writer,
                    range,
                    to_stored(&c.media)
                ],
            )
            .map_err(sql_error)?;
            media::attach(&tx, &c.media, &c.id, &c.post_id, &board, &owner, &c.created_at)?;
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

    /// One lookup of the primary key, its post's board checked in the same query.
    async fn comment(&self, key: &CommentKey) -> StoreResult<Option<Comment>> {
        let (board, post_id, comment_id) = (
            key.post.board.as_str().to_owned(),
            key.post.post.as_str().to_owned(),
            key.comment.as_str().to_owned(),
        );
        self.read(move |conn| {
            conn.query_row(
                &format!(
                    "SELECT {COMMENT_COLUMNS} FROM comments
                     WHERE id = ?1 AND post_id = ?2 AND post_id IN (SELECT id FROM posts WHERE board = ?3)"
                ),
                params![comment_id, post_id, board],
                comment_from,
            )
            .optional()
            .map_err(sql_error)
        })
        .await
    }

    async fn answered_by_others(&self, key: &PostKey, guard: &Guard) -> StoreResult<bool> {
        let post_id = key.post.as_str().to_owned();
        // Who counts as the author: their member id, or a guest's address key.
        let (member, guest_writer) = match &guard.author {
            Author::Member { member_id, .. } => (Some(member_id.clone()), None),
            _ => (None, guard.writer.as_ref().map(|w| w.as_str().to_owned())),
        };
        self.read(move |conn| {
            conn.query_row(
                "SELECT EXISTS (SELECT 1 FROM comments WHERE post_id = ?1 AND NOT (
                    (?2 IS NOT NULL AND author_member_id IS ?2)
                    OR (?2 IS NULL AND ?3 IS NOT NULL AND author_member_id IS NULL AND writer_key IS ?3)))",
                params![post_id, member, guest_writer],
                |row| row.get(0),
            )
            .map_err(sql_error)
        })
        .await
    }

    async fn comment_guard(&self, key: &CommentKey) -> StoreResult<Option<Guard>> {
        let (board, post_id, comment_id) = (
            key.post.board.as_str().to_owned(),
            key.post.post.as_str().to_owned(),
            key.comment.as_str().to_owned(),
        );
        self.read(move |conn| {
            conn.query_row(
                "SELECT c.author_kind, c.author_nickname, c.author_member_id, c.guest_password_hash, c.writer_key,
                    c.writer_range
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

    async fn find_comment(&self, board: &BoardSlug, comment: &CommentId) -> StoreResult<Option<CommentKey>> {
        let (board_slug, comment_id) = (board.clone(), comment.clone());
        let (board, comment) = (board.as_str().to_owned(), comment.as_str().to_owned());
        let post_id: Option<String> = self
            .read(move |conn| {
                conn.query_row(
                    "SELECT c.post_id FROM comments c JOIN posts p ON p.id = c.post_id WHERE c.id = ?1 AND p.board = ?2",
                    params![comment, board],
                    |row| row.get(0),
                )
                .optional()
                .map_err(sql_error)
            })
            .await?;
        Ok(post_id.map(|post| CommentKey {
            post: PostKey {
                board: board_slug,
                post: PostId::from_stored(post),
            },
            comment: comment_id,
        }))
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
            let deleted = delete_comment_row(&tx, &board, &post_id, &comment_id)?;
            tx.commit().map_err(sql_error)?;
            Ok(deleted)
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
        self.with_unseen(move |conn| {
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

/// Whether the post has a comment by anyone other than its author: another
/// member, or any guest, on a member's post; a member, or a guest of
/// another address key, on a guest's post (the post's own row says who its
/// author is). Run inside an edit's or delete's transaction, it decides the
/// edit lock in that write (docs/API.md, Edit history and edit locks).
pub(super) fn answered(conn: &rusqlite::Connection, post_id: &str) -> StoreResult<bool> {
    conn.query_row(
        "SELECT EXISTS (SELECT 1 FROM comments c JOIN posts p ON p.id = c.post_id
         WHERE c.post_id = ?1 AND NOT (
            (p.author_member_id IS NOT NULL AND c.author_member_id IS p.author_member_id)
            OR (p.author_member_id IS NULL AND p.writer_key IS NOT NULL
                AND c.author_member_id IS NULL AND c.writer_key IS p.writer_key)))",
        params![post_id],
        |row| row.get(0),
    )
    .map_err(sql_error)
}
