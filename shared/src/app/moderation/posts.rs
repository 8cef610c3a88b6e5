//! Staff sort a board's posts: change a post's category
//! (`recategorize`) and take a post out of the best posts for good (`unbest`),
//! each with its entry in the public log.

use super::entry;
use crate::app::{App, SignedIn};
use crate::domain::{LogAction, LogTarget, PostKey, PostSummary};
use crate::error::ApiError;

impl App {
    /// `PUT .../posts/{post_id}/category`: null, or one of the board's
    /// categories now; answers the post's summary.
    pub async fn recategorize(
        &self,
        staff: &SignedIn,
        key: &PostKey,
        category: Option<String>,
    ) -> Result<PostSummary, ApiError> {
        let board = self.board_settings(key.board.as_str()).await?;
        let category = board.category(category)?;
        self.require_staff(&key.board, staff).await?;
        let target = self.post_target(key).await?;
        let entry = entry(LogAction::Recategorize, target, None, staff);
        if !self.store.set_category(key, category.as_ref(), &entry).await? {
            return Err(self.not_found_post());
        }
        let mut summary = self
            .store
            .post_detail(key)
            .await?
            .ok_or_else(|| self.not_found_post())?
            .post
            .summary;
        self.shown_to(&mut summary, Some(staff)).await?;
        Ok(summary)
    }

    /// `DELETE /boards/{slug}/best/{post_id}`: the post leaves the best
    /// posts and never becomes best again, whatever the votes do.
    pub async fn unbest(&self, staff: &SignedIn, key: &PostKey) -> Result<(), ApiError> {
        self.require_staff(&key.board, staff).await?;
        let target = self.post_target(key).await?;
        let entry = entry(LogAction::Unbest, target, None, staff);
        match self.store.unbest(key, &entry).await? {
            true => Ok(()),
            false => Err(self.not_found_post()),
        }
    }

    /// The log's target for a post: its id and title, or `404`.
    pub(super) async fn post_target(&self, key: &PostKey) -> Result<LogTarget, ApiError> {
        let post = self
            .store
            .post_detail(key)
            .await?
            .ok_or_else(|| self.not_found_post())?;
        Ok(LogTarget::Post {
            post_id: post.post.summary.id,
            title: post.post.summary.title,
        })
    }
}
