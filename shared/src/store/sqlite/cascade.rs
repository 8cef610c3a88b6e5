//! The deletes a writer's own delete and a moderator's removal share: a
//! post's or comment's row with the open reports of what goes with it, and
//! its images released to the sweep, inside the caller's transaction.

use rusqlite::{Transaction, params};

use super::rows::post_exists;
use super::sql_error;
use crate::store::StoreResult;

/// Deletes a post on `board` inside `tx`, its comments and likes with it
/// (ON DELETE CASCADE, in the same statement), and resolves its open
/// reports and its comments' (their reporters cascade); false when there was
/// none. An author's delete and a moderator's removal both go through it.
pub(super) fn delete_post_row(tx: &Transaction<'_>, board: &str, post_id: &str) -> StoreResult<bool> {
    let deleted = tx
        .execute(
            "DELETE FROM posts WHERE id = ?1 AND board = ?2",
            params![post_id, board],
        )
        .map_err(sql_error)?;
    if deleted == 1 {
        resolve_reports_of(tx, post_id, None)?;
        super::media::release(tx, post_id, None, &crate::domain::now())?;
    }
    Ok(deleted == 1)
}

/// Deletes a comment of a post on `board`, uncounts it and resolves its
/// open report (its reporters cascade), inside `tx`; false when there was
/// none. An author's delete and a moderator's removal both go through it.
pub(super) fn delete_comment_row(
    tx: &Transaction<'_>,
    board: &str,
    post_id: &str,
    comment_id: &str,
) -> StoreResult<bool> {
    if !post_exists(tx, board, post_id)? {
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
            [post_id],
        )
        .map_err(sql_error)?;
        resolve_reports_of(tx, post_id, Some(comment_id))?;
        super::media::release(tx, post_id, Some(comment_id), &crate::domain::now())?;
    }
    Ok(deleted == 1)
}

/// Resolves (deletes) the open reports of `post_id` itself and of its
/// comments; or, with `comment_id`, of that one comment. Their reporters go
/// with them (ON DELETE CASCADE). A delete or removal calls it in its own
/// transaction, so a report of what it deletes is never left open.
pub(super) fn resolve_reports_of(tx: &Transaction<'_>, post_id: &str, comment_id: Option<&str>) -> StoreResult<()> {
    match comment_id {
        None => tx.execute("DELETE FROM reports WHERE post_id = ?1", [post_id]),
        Some(comment) => tx.execute("DELETE FROM reports WHERE target = ?1", [format!("comment:{comment}")]),
    }
    .map_err(sql_error)?;
    Ok(())
}
