//! A post's edit in SQLite: the version check, the revision it keeps, its
//! images and the revision count, in one IMMEDIATE transaction.

use rusqlite::{Connection, OptionalExtension, Transaction, TransactionBehavior, params};

use super::super::{media, sql_error};
use crate::domain::media::{AttachedMedia, from_stored, to_stored};
use crate::domain::{MAX_REVISIONS, PostKey, PostVersion};
use crate::store::{Edited, MediaEdit, PostEdit, StoreError, StoreResult};

/// Edits the post unless the edit's conditions refuse it.
pub(super) fn edit_post(conn: &mut Connection, key: &PostKey, edit: &PostEdit) -> StoreResult<Edited> {
    let (board, post_id, title, body, updated_at) = (
        key.board.as_str().to_owned(),
        key.post.as_str().to_owned(),
        edit.title.as_str().to_owned(),
        edit.body.as_str().to_owned(),
        edit.updated_at.clone(),
    );
    let (if_version, unless_answered) = (edit.if_version.clone(), edit.unless_answered);
    let media_edit = edit.media.clone();
    let category = edit
        .category
        .as_ref()
        .map(|c| c.as_ref().map(|c| c.as_str().to_owned()));
    // The check and the change in one transaction: no edit between them.
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(sql_error)?;
    if unless_answered && super::super::comments::answered(&tx, &post_id)? {
        return Ok(Edited::Answered);
    }
    if let Some(versions) = &if_version {
        let current: Option<(String, String)> = tx
            .query_row(
                "SELECT title, body FROM posts WHERE id = ?1 AND board = ?2",
                params![post_id, board],
                |row| Ok((row.get(0)?, row.get(1)?)),
            )
            .optional()
            .map_err(sql_error)?;
        let Some((old_title, old_body)) = current else {
            return Ok(Edited::NoSuchPost);
        };
        if !versions.contains(&PostVersion::of(&old_title, &old_body)) {
            return Ok(Edited::OtherVersion);
        }
    }
    // The version being replaced becomes the next revision.
    let kept = tx
        .execute(
            "INSERT INTO post_revisions (post_id, seq, title, body, edited_at)
             SELECT id, edits + 1, title, body, updated_at FROM posts WHERE id = ?1 AND board = ?2",
            params![post_id, board],
        )
        .map_err(sql_error)?;
    if kept == 0 {
        return Ok(Edited::NoSuchPost);
    }
    match &category {
        None => tx.execute(
            "UPDATE posts SET title = ?1, body = ?2, updated_at = ?3, edits = edits + 1
             WHERE id = ?4 AND board = ?5",
            params![title, body, updated_at, post_id, board],
        ),
        Some(category) => tx.execute(
            "UPDATE posts SET title = ?1, body = ?2, updated_at = ?3, category = ?6, edits = edits + 1
             WHERE id = ?4 AND board = ?5",
            params![title, body, updated_at, post_id, board, category],
        ),
    }
    .map_err(sql_error)?;
    if let Some(edit) = &media_edit {
        edit_media(&tx, &board, &post_id, edit, &updated_at)?;
    }
    tx.execute(
        "DELETE FROM post_revisions WHERE post_id = ?1
         AND seq <= (SELECT edits FROM posts WHERE id = ?1) - ?2",
        params![post_id, MAX_REVISIONS],
    )
    .map_err(sql_error)?;
    count_revisions(&tx, &post_id)?;
    tx.commit().map_err(sql_error)?;
    Ok(Edited::Done)
}

/// An edit's images inside its transaction: those dropped are due at
/// `now`, those added attached, and the post keeps the new list.
fn edit_media(tx: &Transaction<'_>, board: &str, post_id: &str, edit: &MediaEdit, now: &str) -> StoreResult<()> {
    let stored: Option<String> = tx
        .query_row("SELECT media FROM posts WHERE id = ?1", params![post_id], |row| {
            row.get(0)
        })
        .map_err(sql_error)?;
    let before = from_stored(stored.as_deref())
        .ok_or_else(|| StoreError::Internal("a stored media list does not parse".into()))?;
    let dropped: Vec<&str> = before
        .iter()
        .filter(|old| !edit.media.iter().any(|new| new.id == old.id))
        .map(|old| old.id.as_str())
        .collect();
    let added: Vec<AttachedMedia> = edit
        .media
        .iter()
        .filter(|new| !before.iter().any(|old| old.id == new.id))
        .cloned()
        .collect();
    media::detach(tx, &dropped, post_id, now)?;
    media::attach(tx, &added, post_id, post_id, board, &edit.owner, now)?;
    tx.execute(
        "UPDATE posts SET media = ?2, media_count = ?3 WHERE id = ?1",
        params![post_id, to_stored(&edit.media), edit.media.len() as i64],
    )
    .map_err(sql_error)?;
    Ok(())
}

/// The post's `revisions` (its `revision_count`) set to what it keeps,
/// inside the write that changed them.
pub(super) fn count_revisions(tx: &Transaction<'_>, post_id: &str) -> StoreResult<()> {
    tx.execute(
        "UPDATE posts SET revisions = (SELECT COUNT(*) FROM post_revisions WHERE post_id = ?1) WHERE id = ?1",
        params![post_id],
    )
    .map_err(sql_error)?;
    Ok(())
}
