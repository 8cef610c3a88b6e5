//! [`Posts`] on SQLite: the `posts` table with its counts, and the first
//! page of comments read in the same transaction.

mod edits;

use async_trait::async_trait;
use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};

use super::cascade::delete_post_row;
use super::idempotency::complete;
use super::moderation::log;
use super::rows::{
    COMMENT_COLUMNS, GUARD_COLUMNS, POST_COLUMNS, TAKEN_OUT, author_columns, comment_from, guard_from, post_exists,
    post_from, summary_from,
};
use super::{SqliteStore, media, sql_error};
use crate::domain::media::{MediaOwner, to_stored};
use crate::domain::{
    BoardSlug, COMMENTS_PAGE, Category, CommentPage, Guard, LogEntry, Page, PageLimit, PasswordHash, Post, PostDetail,
    PostId, PostKey, Revision, Revisions, Writer,
};
use crate::store::{Completion, Edited, PostEdit, Posts, StoreError, StoreResult, cursor};
use edits::count_revisions;

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

impl SqliteStore {
    /// A page of the board's posts that match `filter` (which may name
    /// `?4`, bound to `value`), newest first: one range read of the
    /// filter's partial index.
    async fn page_where<V: rusqlite::ToSql + Send + 'static>(
        &self,
        filter: &'static str,
        value: V,
        board: &BoardSlug,
        limit: PageLimit,
        cursor: Option<&str>,
    ) -> StoreResult<Page> {
        let after = cursor.map(cursor::decode).transpose()?;
        let (board, limit) = (board.as_str().to_owned(), limit.get());
        self.read(move |conn| {
            let mut stmt = conn
                .prepare_cached(&format!(
                    "SELECT {POST_COLUMNS} FROM posts WHERE board = ?1 AND (?2 IS NULL OR id < ?2) AND {filter}
                     ORDER BY id DESC LIMIT ?3"
                ))
                .map_err(sql_error)?;
            let fetch = i64::try_from(limit + 1).unwrap_or(i64::MAX);
            let mut posts = stmt
                .query_map(params![board, after, fetch, value], summary_from)
                .and_then(|rows| rows.collect::<Result<Vec<_>, _>>())
                .map_err(sql_error)?;
            Ok(cursor::page_of(&mut posts, limit))
        })
        .await
    }

    /// One change of a post by staff (`change` binds the post's id, its
    /// board and `value`), with its log entry; false when no such post.
    async fn change_with_entry<V: rusqlite::ToSql + Send + 'static>(
        &self,
        key: &PostKey,
        entry: &LogEntry,
        change: &'static str,
        value: V,
    ) -> StoreResult<bool> {
        let (board, post_id, entry) = (
            key.board.as_str().to_owned(),
            key.post.as_str().to_owned(),
            entry.clone(),
        );
        self.with(move |conn| {
            let tx = conn
                .transaction_with_behavior(TransactionBehavior::Immediate)
                .map_err(sql_error)?;
            if tx.execute(change, params![post_id, board, value]).map_err(sql_error)? == 0 {
                return Ok(false);
            }
            log(&tx, &board, &entry)?;
            tx.commit().map_err(sql_error)?;
            Ok(true)
        })
        .await
    }
}

#[async_trait]
impl Posts for SqliteStore {
    async fn create_post(
        &self,
        post: &Post,
        writer: &Writer,
        guest_password_hash: Option<&PasswordHash>,
        done: Option<&Completion>,
    ) -> StoreResult<()> {
        let (post, writer, range, hash, done) = (
            post.clone(),
            writer.clone(),
            writer.range.as_str().to_owned(),
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
                    guest_password_hash, created_at, updated_at, view_count, like_count, comment_count, writer_key,
                    writer_range, number, category, media, media_count)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, 0, 0, 0, ?11, ?12, ?13, ?14, ?15, ?16)",
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
                    post.updated_at,
                    writer.key.as_str(),
                    range,
                    i64::try_from(s.number).unwrap_or(i64::MAX),
                    s.category,
                    to_stored(&post.media),
                    post.media.len() as i64
                ],
            )
            .map_err(sql_error)?;
            let owner = MediaOwner::writing(&s.author, &writer);
            media::attach(&tx, &post.media, &s.id, &s.id, &s.board, &owner, &s.created_at)?;
            complete(&tx, done.as_ref())?;
            tx.commit().map_err(sql_error)
        })
        .await
    }

    async fn post_detail(&self, key: &PostKey) -> StoreResult<Option<PostDetail>> {
        let (board, post_id) = (key.board.as_str().to_owned(), key.post.as_str().to_owned());
        self.read(move |conn| {
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
                my_vote: None,
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
        self.read(move |conn| {
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
                my_vote: None,
            }))
        })
        .await
    }

    async fn list_posts(&self, board: &BoardSlug, limit: PageLimit, cursor: Option<&str>) -> StoreResult<Page> {
        let after = cursor.map(cursor::decode).transpose()?;
        let (board, limit) = (board.as_str().to_owned(), limit.get());
        self.read(move |conn| {
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

    async fn list_category(
        &self,
        board: &BoardSlug,
        category: &Category,
        limit: PageLimit,
        cursor: Option<&str>,
    ) -> StoreResult<Page> {
        let category = category.as_str().to_owned();
        self.page_where("category = ?4", Some(category), board, limit, cursor)
            .await
    }

    async fn list_best(
        &self,
        board: &BoardSlug,
        category: Option<&Category>,
        limit: PageLimit,
        cursor: Option<&str>,
    ) -> StoreResult<Page> {
        let category = category.map(|c| c.as_str().to_owned());
        self.page_where(
            "best = 1 AND (?4 IS NULL OR category = ?4)",
            category,
            board,
            limit,
            cursor,
        )
        .await
    }

    async fn post_by_number(&self, board: &BoardSlug, number: u64) -> StoreResult<Option<PostId>> {
        let (board, number) = (board.as_str().to_owned(), i64::try_from(number).unwrap_or(i64::MAX));
        let id: Option<String> = self
            .read(move |conn| {
                conn.query_row(
                    "SELECT id FROM posts WHERE board = ?1 AND number = ?2",
                    params![board, number],
                    |row| row.get(0),
                )
                .optional()
                .map_err(sql_error)
            })
            .await?;
        Ok(id.map(PostId::from_stored))
    }

    async fn set_category(&self, key: &PostKey, category: Option<&Category>, entry: &LogEntry) -> StoreResult<bool> {
        let category = category.map(|c| c.as_str().to_owned());
        self.change_with_entry(
            key,
            entry,
            "UPDATE posts SET category = ?3 WHERE id = ?1 AND board = ?2",
            category,
        )
        .await
    }

    async fn unbest(&self, key: &PostKey, entry: &LogEntry) -> StoreResult<bool> {
        self.change_with_entry(
            key,
            entry,
            "UPDATE posts SET best = ?3 WHERE id = ?1 AND board = ?2",
            TAKEN_OUT,
        )
        .await
    }

    /// One transaction for the whole batch. Views change only counts, which
    /// the view buffer adds to what readers cached: no generation change.
    async fn add_views(&self, views: &[(PostKey, u64)]) -> StoreResult<()> {
        let views: Vec<(String, String, i64)> = views
            .iter()
            .map(|(key, n)| {
                let n = i64::try_from(*n).unwrap_or(i64::MAX);
                (key.board.as_str().to_owned(), key.post.as_str().to_owned(), n)
            })
            .collect();
        self.with_unseen(move |conn| {
            let tx = conn.transaction().map_err(sql_error)?;
            {
                let mut add = tx
                    .prepare_cached("UPDATE posts SET view_count = view_count + ?3 WHERE id = ?2 AND board = ?1")
                    .map_err(sql_error)?;
                for (board, post_id, n) in &views {
                    add.execute(params![board, post_id, n]).map_err(sql_error)?;
                }
            }
            tx.commit().map_err(sql_error)
        })
        .await
    }

    async fn post_guard(&self, key: &PostKey) -> StoreResult<Option<Guard>> {
        let (board, post_id) = (key.board.as_str().to_owned(), key.post.as_str().to_owned());
        self.read(move |conn| {
            conn.query_row(
                &format!("SELECT {GUARD_COLUMNS} FROM posts WHERE id = ?1 AND board = ?2"),
                params![post_id, board],
                guard_from,
            )
            .optional()
            .map_err(sql_error)
        })
        .await
    }

    async fn update_post(&self, key: &PostKey, edit: &PostEdit) -> StoreResult<Edited> {
        let (key, edit) = (key.clone(), edit.clone());
        self.with(move |conn| edits::edit_post(conn, &key, &edit)).await
    }

    async fn revisions(&self, key: &PostKey, limit: PageLimit, before: Option<u64>) -> StoreResult<Option<Revisions>> {
        let (board, post_id) = (key.board.as_str().to_owned(), key.post.as_str().to_owned());
        let before = before.map_or(i64::MAX, |n| i64::try_from(n).unwrap_or(i64::MAX));
        self.read(move |conn| {
            if !post_exists(conn, &board, &post_id)? {
                return Ok(None);
            }
            let mut statement = conn
                .prepare_cached(
                    "SELECT seq, title, body, edited_at FROM post_revisions
                     WHERE post_id = ?1 AND seq < ?2 ORDER BY seq DESC LIMIT ?3",
                )
                .map_err(sql_error)?;
            let revisions = statement
                .query_map(params![post_id, before, limit.get() as i64 + 1], |row| {
                    Ok(Revision {
                        number: row.get::<_, i64>(0)?.try_into().unwrap_or_default(),
                        title: row.get(1)?,
                        body: row.get(2)?,
                        edited_at: row.get(3)?,
                    })
                })
                .map_err(sql_error)?
                .collect::<rusqlite::Result<Vec<_>>>()
                .map_err(sql_error)?;
            Ok(Some(cursor::revisions_page(revisions, limit.get())))
        })
        .await
    }

    async fn delete_revision(&self, key: &PostKey, number: u64, entry: Option<&LogEntry>) -> StoreResult<bool> {
        let (board, post_id, entry) = (
            key.board.as_str().to_owned(),
            key.post.as_str().to_owned(),
            entry.cloned(),
        );
        let number = i64::try_from(number).unwrap_or(i64::MAX);
        self.with(move |conn| {
            let tx = conn
                .transaction_with_behavior(TransactionBehavior::Immediate)
                .map_err(sql_error)?;
            let deleted = tx
                .execute(
                    "DELETE FROM post_revisions WHERE post_id = ?1 AND seq = ?2
                     AND post_id IN (SELECT id FROM posts WHERE board = ?3)",
                    params![post_id, number, board],
                )
                .map_err(sql_error)?;
            if deleted == 0 {
                return Ok(false);
            }
            count_revisions(&tx, &post_id)?;
            if let Some(entry) = &entry {
                log(&tx, &board, entry)?;
            }
            tx.commit().map_err(sql_error)?;
            Ok(true)
        })
        .await
    }

    /// One transaction: the post with its comments and likes, and its open
    /// reports and its comments' ([`delete_post_row`]).
    async fn delete_post(&self, key: &PostKey, unless_answered: bool) -> StoreResult<bool> {
        let (board, post_id) = (key.board.as_str().to_owned(), key.post.as_str().to_owned());
        self.with(move |conn| {
            let tx = conn
                .transaction_with_behavior(TransactionBehavior::Immediate)
                .map_err(sql_error)?;
            if unless_answered && super::comments::answered(&tx, &post_id)? {
                return Err(StoreError::Answered);
            }
            let deleted = delete_post_row(&tx, &board, &post_id)?;
            tx.commit().map_err(sql_error)?;
            Ok(deleted)
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
        self.with_unseen(move |conn| {
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

#[cfg(test)]
mod tests {
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
