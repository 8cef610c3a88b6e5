//! A moderator's removal of a post or comment: the delete a writer's own
//! delete is, with the log entry (and completion) in its transaction.

use crate::domain::{CommentKey, LogEntry, PostKey};
use crate::store::dynamo::DynamoStore;
use crate::store::dynamo::attributes::key;
use crate::store::dynamo::comments::CommentDeleted;
use crate::store::dynamo::items::reports_pk;
use crate::store::dynamo::purges::Marked;
use crate::store::dynamo::transact::failed_at;
use crate::store::{Completion, StoreError, StoreResult};

/// As [`crate::store::Posts::delete_post`], step 1 also carrying the log
/// entry, the deletes of the post's open reports and its comments' (a Query
/// of the pointers in its partition first) and the completion. Reports
/// beyond the transaction's room, and any opened between that Query and
/// step 1, are resolved by the purge (step 2, off the request), as a
/// delete's are (after step 1 no report of the post can be opened).
pub(super) async fn remove_post(
    store: &DynamoStore,
    post_key: &PostKey,
    entry: &LogEntry,
    done: Option<&Completion>,
) -> StoreResult<bool> {
    let (board, post_id) = (post_key.board.as_str(), post_key.post.as_str());
    let pointers = store.report_pointers(post_id).await?;
    let mut extra = vec![store.log_put(board, entry)?];
    let claim_at = extra.len();
    if let Some(done) = done {
        extra.push(store.complete(done)?);
    }
    let room = store.mark_room().saturating_sub(extra.len());
    for pointer in pointers.into_iter().take(room) {
        extra.push(store.delete(key(reports_pk(board), pointer.report_id), None)?);
    }
    let removed = match store.mark_post_deleted_with(board, post_id, false, extra).await? {
        Marked::Deleted => true,
        Marked::NoSuchPost | Marked::Answered => false,
        Marked::ExtraFailed(failed) if done.is_some() && failed_at(&failed, claim_at) => {
            return Err(StoreError::ClaimLost);
        }
        Marked::ExtraFailed(_) => return Err(StoreError::Internal("log entry id collision".into())),
    };
    // Step 2 runs off the request ([`crate::store::Purges`]).
    Ok(removed)
}

/// As [`crate::store::Comments::delete_comment`] (the pointer's GetItem,
/// then one transaction of the comment's delete, its count, and the delete
/// of its open report and pointer or the check that it has none:
/// [`DynamoStore::delete_comment_with`]), here with the log entry and the
/// completion in the transaction.
pub(super) async fn remove_comment(
    store: &DynamoStore,
    comment_key: &CommentKey,
    entry: &LogEntry,
    done: Option<&Completion>,
) -> StoreResult<bool> {
    let mut extra = vec![store.log_put(comment_key.post.board.as_str(), entry)?];
    let claim_at = extra.len();
    if let Some(done) = done {
        extra.push(store.complete(done)?);
    }
    match store.delete_comment_with(comment_key, extra).await? {
        CommentDeleted::Deleted => Ok(true),
        CommentDeleted::NoSuchComment => Ok(false),
        CommentDeleted::ExtraFailed(failed) if done.is_some() && failed_at(&failed, claim_at) => {
            Err(StoreError::ClaimLost)
        }
        CommentDeleted::ExtraFailed(_) => Err(StoreError::Internal("log entry id collision".into())),
    }
}
