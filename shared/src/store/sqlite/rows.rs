//! Rows: the column lists the ports select, the mappers from rows to domain
//! values, and the post-on-its-board check several ports run first.

use rusqlite::{Connection, Row, params};

use super::sql_error;
use crate::domain::media::{AttachedMedia, from_stored};
use crate::domain::moderation::tag_of;
use crate::domain::{Author, Comment, Guard, PasswordHash, Post, PostSummary, WriterKey};
use crate::store::StoreResult;

/// What [`post_from`] and [`summary_from`] read.
pub(super) const POST_COLUMNS: &str = "id, board, title, author_kind, author_nickname, author_member_id, created_at, \
                            view_count, like_count, comment_count, body, updated_at, writer_key, number, category, \
                            dislike_count, best, revisions, media_count, media";
/// What [`comment_from`] reads.
pub(super) const COMMENT_COLUMNS: &str =
    "id, post_id, parent_id, body, author_kind, author_nickname, author_member_id, created_at, writer_key, media";

/// An author as `author_kind, author_nickname, author_member_id`.
pub(super) fn author_columns(author: &Author) -> (&'static str, &str, Option<&str>) {
    match author {
        Author::Member { member_id, nickname } => ("member", nickname, Some(member_id)),
        Author::Guest { nickname, .. } => ("guest", nickname, None),
        Author::DeletedMember { nickname } => ("member", nickname, None),
    }
}

/// A guest's tag is the prefix of the stored writer key; a member's row
/// without a member id is what a deleted account left (migrations.rs).
fn author_from(kind: String, nickname: String, member_id: Option<String>, writer_key: Option<String>) -> Author {
    match (kind.as_str(), member_id) {
        ("member", Some(member_id)) => Author::Member { member_id, nickname },
        ("member", None) => Author::DeletedMember { nickname },
        _ => Author::Guest {
            nickname,
            tag: writer_key.as_deref().map(tag_of),
        },
    }
}

/// `posts.best` of a best post (0: not best; [`TAKEN_OUT`]: never again).
pub(super) const BEST: i64 = 1;
/// `posts.best` of a post staff took out of the best posts.
pub(super) const TAKEN_OUT: i64 = 2;

/// A count column; below zero reads as zero.
pub(super) fn count(row: &Row<'_>, index: usize) -> rusqlite::Result<u64> {
    Ok(u64::try_from(row.get::<_, i64>(index)?).unwrap_or(0))
}

pub(super) fn summary_from(row: &Row<'_>) -> rusqlite::Result<PostSummary> {
    Ok(PostSummary {
        id: row.get(0)?,
        board: row.get(1)?,
        title: row.get(2)?,
        author: author_from(row.get(3)?, row.get(4)?, row.get(5)?, row.get(12)?),
        created_at: row.get(6)?,
        view_count: count(row, 7)?,
        like_count: count(row, 8)?,
        comment_count: count(row, 9)?,
        number: count(row, 13)?,
        category: row.get(14)?,
        dislike_count: Some(count(row, 15)?),
        best: row.get::<_, i64>(16)? == BEST,
        media_count: u32::try_from(count(row, 18)?).unwrap_or(u32::MAX),
    })
}

pub(super) fn post_from(row: &Row<'_>) -> rusqlite::Result<Post> {
    Ok(Post {
        summary: summary_from(row)?,
        body: row.get(10)?,
        updated_at: row.get(11)?,
        revision_count: u32::try_from(count(row, 17)?).unwrap_or(crate::domain::MAX_REVISIONS),
        media: media_from(row, 19)?,
    })
}

pub(super) fn comment_from(row: &Row<'_>) -> rusqlite::Result<Comment> {
    Ok(Comment {
        id: row.get(0)?,
        post_id: row.get(1)?,
        parent_id: row.get(2)?,
        body: row.get(3)?,
        author: author_from(row.get(4)?, row.get(5)?, row.get(6)?, row.get(8)?),
        created_at: row.get(7)?,
        media: media_from(row, 9)?,
    })
}

/// A `media` column (domain::media::to_stored); a value that does not
/// parse is a conversion error, as a bad column is.
fn media_from(row: &Row<'_>, index: usize) -> rusqlite::Result<Vec<AttachedMedia>> {
    let stored: Option<String> = row.get(index)?;
    from_stored(stored.as_deref()).ok_or_else(|| {
        rusqlite::Error::FromSqlConversionFailure(index, rusqlite::types::Type::Text, "a stored media list".into())
    })
}

/// What [`guard_from`] reads.
pub(super) const GUARD_COLUMNS: &str =
    "author_kind, author_nickname, author_member_id, guest_password_hash, writer_key, writer_range";

pub(super) fn guard_from(row: &Row<'_>) -> rusqlite::Result<Guard> {
    let writer: Option<String> = row.get(4)?;
    Ok(Guard {
        author: author_from(row.get(0)?, row.get(1)?, row.get(2)?, writer.clone()),
        guest_password_hash: row.get::<_, Option<String>>(3)?.map(PasswordHash::new),
        writer: writer.map(WriterKey::new),
        writer_range: row.get::<_, Option<String>>(5)?.map(WriterKey::new),
    })
}

/// Whether `post_id` is a post of `board`.
pub(super) fn post_exists(conn: &Connection, board: &str, post_id: &str) -> StoreResult<bool> {
    conn.query_row(
        "SELECT EXISTS (SELECT 1 FROM posts WHERE id = ?1 AND board = ?2)",
        params![post_id, board],
        |row| row.get(0),
    )
    .map_err(sql_error)
}
