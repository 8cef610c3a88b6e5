//! Anyone reports a post or comment; staff list and resolve the reports.

use super::ModPage;
use crate::app::{Answer, App, ClientAddress, IdempotencyClaim, IdempotencyKey, SignedIn, throttle};
use crate::domain::moderation::Screened;
use crate::domain::{BoardSlug, CommentId, PostKey, Reason, Report, ReportId, ReportPage, ReportTarget, Reported, now};
use crate::error::ApiError;
use throttle::Refusal;

#[derive(Debug)]
pub struct ReportCommand {
    pub idempotency: Option<IdempotencyKey>,
    pub client: ClientAddress,
    pub post: PostKey,
    pub comment: Option<CommentId>,
    pub reason: Reason,
    /// The request's `X-Pow`, if it came with one: an anonymous
    /// report may need it.
    pub pow: Option<String>,
}

impl App {
    /// Reports a post or comment: one report per target, each reporter (a
    /// member, or an anonymous client's address key) counted once. Counted
    /// against the reports quota of the address (docs/API.md, Throttling).
    pub async fn report(
        &self,
        member: Option<&SignedIn>,
        command: ReportCommand,
    ) -> Result<Answer<Reported>, ApiError> {
        let board = &command.post.board;
        let writer = self.require_not_banned(board, &command.client, member).await?;
        let counted = match member {
            Some(_) => throttle::Reservation::none(),
            None => {
                self.require_pow(crate::app::pow::AnonymousWrite {
                    client: &command.client,
                    board: Some(board),
                    proof: command.pow.as_deref(),
                })
                .await?
            }
        };
        let keys = throttle::report_keys(&self.limits, &command.client.0);
        let reservation = throttle::reserve_after(&*self.store, &keys, Refusal::RateLimited, counted).await?;
        let reservation = self
            .screen_counted(&[(Screened::Reason, command.reason.as_str())], reservation)
            .await?;
        let reporter = match member {
            Some(member) => format!("member:{}", member.id.as_str()),
            None => format!("address:{}", writer.key.as_str()),
        };
        let target = match &command.comment {
            None => ReportTarget::Post {
                post_id: command.post.post.as_str().to_owned(),
            },
            Some(comment) => ReportTarget::Comment {
                post_id: command.post.post.as_str().to_owned(),
                comment_id: comment.as_str().to_owned(),
            },
        };
        let what = if command.comment.is_some() { "comment" } else { "post" };
        let report = Report {
            id: ReportId::generate().into_inner(),
            board: board.as_str().to_owned(),
            target,
            reason: command.reason.as_str().to_owned(),
            created_at: now(),
            reporters: None,
        };
        let reported = self
            .once(command.idempotency.as_ref(), |claim| async move {
                let claim = claim.as_ref().map(IdempotencyClaim::claim);
                self.store
                    .report(board, &report, &reporter, claim)
                    .await
                    .map_err(|e| match e {
                        crate::store::StoreError::NotFound => ApiError::not_found(what),
                        e => e.into(),
                    })
            })
            .await;
        if !matches!(reported, Ok(Answer::Created(_))) {
            throttle::forgive(&*self.store, reservation).await;
        }
        reported
    }

    pub async fn list_reports(&self, staff: &SignedIn, page: ModPage) -> Result<ReportPage, ApiError> {
        self.require_staff(&page.board, staff).await?;
        Ok(self.store.list_reports(&page.board, page.limit, page.cursor()).await?)
    }

    pub async fn resolve_report(
        &self,
        staff: &SignedIn,
        board: &BoardSlug,
        id: &ReportId,
        idempotency: Option<IdempotencyKey>,
    ) -> Result<Answer<()>, ApiError> {
        self.require_staff(board, staff).await?;
        self.once(idempotency.as_ref(), |claim| async move {
            let done = claim.as_ref().map(|c| c.complete_empty());
            match self.store.resolve_report(board, id, done.as_ref()).await? {
                true => Ok(()),
                false => Err(ApiError::not_found("report")),
            }
        })
        .await
    }
}
