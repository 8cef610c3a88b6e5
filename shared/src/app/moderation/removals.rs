//! Staff remove a post or a comment, as its author's delete would.

use super::entry;
use crate::app::{Answer, App, IdempotencyKey, SignedIn};
use crate::domain::moderation::Screened;
use crate::domain::{CommentId, CommentKey, LogAction, LogTarget, PostKey, Reason};
use crate::error::ApiError;

/// A removal of a post (`comment: None`) or of a comment.
#[derive(Debug)]
pub struct Removal {
    pub idempotency: Option<IdempotencyKey>,
    pub post: PostKey,
    pub comment: Option<CommentId>,
    pub reason: Reason,
}

impl App {
    /// Removes a post (with its comments and likes) or a comment, as its
    /// author's delete would, resolving its open reports; logged with the
    /// post's title, never its body.
    pub async fn remove(&self, staff: &SignedIn, command: Removal) -> Result<Answer<()>, ApiError> {
        self.require_staff(&command.post.board, staff).await?;
        self.screen(&[(Screened::Reason, command.reason.as_str())]).await?;
        let post = self
            .store
            .post_detail(&command.post)
            .await?
            .ok_or_else(|| self.not_found_post())?;
        let reason = &command.reason;
        match command.comment {
            None => {
                let target = LogTarget::Post {
                    post_id: post.post.summary.id.clone(),
                    title: post.post.summary.title.clone(),
                };
                let entry = entry(LogAction::RemovePost, target, Some(reason), staff);
                let key = &command.post;
                self.once(command.idempotency.as_ref(), |claim| async move {
                    let done = claim.as_ref().map(|c| c.complete_empty());
                    match self.store.remove_post(key, &entry, done.as_ref()).await? {
                        true => {
                            self.purge_soon();
                            self.text_gone(key, None);
                            Ok(())
                        }
                        false => Err(self.not_found_post()),
                    }
                })
                .await
            }
            Some(comment) => {
                let key = CommentKey {
                    post: command.post.clone(),
                    comment,
                };
                let target = LogTarget::Comment {
                    post_id: key.post.post.as_str().to_owned(),
                    comment_id: key.comment.as_str().to_owned(),
                };
                let entry = entry(LogAction::RemoveComment, target, Some(reason), staff);
                let key = &key;
                self.once(command.idempotency.as_ref(), |claim| async move {
                    let done = claim.as_ref().map(|c| c.complete_empty());
                    match self.store.remove_comment(key, &entry, done.as_ref()).await? {
                        true => {
                            self.text_gone(&key.post, Some(&key.comment));
                            Ok(())
                        }
                        false => Err(ApiError::not_found("comment")),
                    }
                })
                .await
            }
        }
    }
}
