//! (v3) Moderation (docs/API.md, Roles and moderation): admins appoint
//! moderators; staff (admins and a board's moderators) remove posts and
//! comments, ban writers and answer reports; anyone reports; everything
//! staff do goes to the board's public log.

use super::{Answer, App, ClientAddress, IdempotencyKey, SignedIn, throttle};
use crate::domain::moderation::Screened;
use crate::domain::{
    Author, Ban, BanDuration, BanId, BanPage, BanRecord, BanScope, BanSubject, BanTarget, BoardSlug, CommentId,
    CommentKey, Guard, LogAction, LogEntry, LogPage, LogTarget, MemberId, Moderators, PageLimit, PostId, PostKey,
    Reason, Report, ReportId, ReportPage, ReportTarget, Reported, new_id, now, timestamp,
};
use crate::error::ApiError;
use throttle::Refusal;

/// What a ban names: exactly one of these (docs/API.md, Bans).
#[derive(Debug)]
pub enum BanBy {
    Member(MemberId),
    /// The writer of this post: its member, or a guest's address key.
    Post(PostId),
    /// The writer of this comment.
    Comment(CommentId),
}

#[derive(Debug)]
pub struct BanCommand {
    pub idempotency: Option<IdempotencyKey>,
    pub board: BoardSlug,
    pub by: BanBy,
    pub reason: Reason,
    pub duration: BanDuration,
    /// (v4) How wide the address part reaches; absent: `address`.
    pub scope: Option<BanScope>,
}

/// Whom a ban stops: its subject, (v4) a second one, and how it is shown.
struct Banned {
    subject: BanSubject,
    also: Option<BanSubject>,
    target: BanTarget,
}

/// A removal of a post (`comment: None`) or of a comment.
#[derive(Debug)]
pub struct Removal {
    pub idempotency: Option<IdempotencyKey>,
    pub post: PostKey,
    pub comment: Option<CommentId>,
    pub reason: Reason,
}

#[derive(Debug)]
pub struct ReportCommand {
    pub idempotency: Option<IdempotencyKey>,
    pub client: ClientAddress,
    pub post: PostKey,
    pub comment: Option<CommentId>,
    pub reason: Reason,
}

#[derive(Debug)]
pub struct ModPage {
    pub board: BoardSlug,
    pub limit: PageLimit,
    pub cursor: Option<String>,
}

impl ModPage {
    fn cursor(&self) -> Option<&str> {
        self.cursor.as_deref().filter(|c| !c.is_empty())
    }
}

fn entry(action: LogAction, target: LogTarget, reason: Option<&Reason>, by: &SignedIn) -> LogEntry {
    LogEntry {
        id: new_id(),
        action,
        target,
        reason: reason.map(|r| r.as_str().to_owned()),
        by: by.author(),
        at: now(),
    }
}

impl App {
    /// `403 forbidden` unless the member is staff of the board.
    async fn require_staff(&self, board: &BoardSlug, member: &SignedIn) -> Result<(), ApiError> {
        if self.is_staff(board, member).await? {
            Ok(())
        } else {
            Err(ApiError::Forbidden(format!(
                "only staff of board {} may do this",
                board.as_str()
            )))
        }
    }

    fn require_admin(&self, member: &SignedIn) -> Result<(), ApiError> {
        if self.is_admin(member) {
            Ok(())
        } else {
            Err(ApiError::Forbidden(
                "only admins may appoint or dismiss moderators".into(),
            ))
        }
    }

    pub async fn list_moderators(&self, board: &BoardSlug) -> Result<Moderators, ApiError> {
        Ok(Moderators {
            moderators: self.store.moderators(board).await?,
        })
    }

    /// Idempotent: appointing a moderator again changes nothing and logs nothing.
    pub async fn appoint_moderator(
        &self,
        admin: &SignedIn,
        board: &BoardSlug,
        member: &MemberId,
    ) -> Result<(), ApiError> {
        self.require_admin(admin)?;
        let member = self
            .store
            .member_by_id(member)
            .await?
            .ok_or_else(|| ApiError::not_found("member"))?;
        // (v4) Else the appointment would lift the ban: staff are never
        // stopped, and may lift bans (docs/API.md, Hardening, Bans).
        let subject = [BanSubject::Member(member.id.clone())];
        if self
            .store
            .active_ban(board, &subject, throttle::unix_now())
            .await?
            .is_some()
        {
            return Err(ApiError::Forbidden(
                "a member banned on this board cannot be appointed its moderator".into(),
            ));
        }
        let target = LogTarget::Member {
            member_id: member.id.clone(),
            nickname: member.nickname.clone(),
            scope: None,
        };
        let entry = entry(LogAction::AddModerator, target, None, admin);
        self.store.add_moderator(board, &member, &entry).await?;
        Ok(())
    }

    pub async fn dismiss_moderator(
        &self,
        admin: &SignedIn,
        board: &BoardSlug,
        member: &MemberId,
    ) -> Result<(), ApiError> {
        self.require_admin(admin)?;
        let found = self
            .store
            .member_by_id(member)
            .await?
            .ok_or_else(|| ApiError::not_found("member"))?;
        let target = LogTarget::Member {
            member_id: found.id,
            nickname: found.nickname,
            scope: None,
        };
        let entry = entry(LogAction::RemoveModerator, target, None, admin);
        self.store.remove_moderator(board, member, &entry).await?;
        Ok(())
    }

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
                        true => Ok(()),
                        false => Err(ApiError::not_found("comment")),
                    }
                })
                .await
            }
        }
    }

    /// Whom a ban through a post or comment (`field` names it) stops: its
    /// member author and (v4) guest writes from where it was written, or a
    /// guest's address or range key.
    fn writer_of(&self, field: &str, guard: Guard, scope: Option<BanScope>) -> Result<Banned, ApiError> {
        let scope = scope.unwrap_or_default();
        let keyed = |key: Option<crate::domain::WriterKey>| {
            key.ok_or_else(|| {
                ApiError::validation(match scope {
                    BanScope::Address => format!(
                        "{field}: this was written before writer keys were kept: ban its writer some other way"
                    ),
                    BanScope::Range => format!(
                        "{field}: this was written before range keys were kept (v4): ban its address instead (scope \"address\")"
                    ),
                })
            })
        };
        let tag = guard.writer.as_ref().map(crate::domain::WriterKey::tag);
        let key = match scope {
            BanScope::Address => guard.writer,
            BanScope::Range => guard.writer_range,
        };
        match guard.author {
            Author::Member { member_id, nickname } => {
                // What a member wrote before writer keys were kept bans the member alone.
                let also = match (scope, key) {
                    (BanScope::Address, Some(key)) => Some(BanSubject::GuestAddress(key)),
                    (BanScope::Range, key) => Some(BanSubject::GuestRange(keyed(key)?)),
                    (BanScope::Address, None) => None,
                };
                Ok(Banned {
                    subject: BanSubject::Member(member_id.clone()),
                    target: BanTarget::Member {
                        member_id,
                        nickname,
                        scope: also.is_some().then_some(scope),
                    },
                    also,
                })
            }
            Author::Guest { .. } => {
                let key = keyed(key)?;
                Ok(Banned {
                    subject: match scope {
                        BanScope::Address => BanSubject::Address(key),
                        BanScope::Range => BanSubject::Range(key),
                    },
                    also: None,
                    target: BanTarget::Guest {
                        tag: tag.unwrap_or_default(),
                        scope,
                    },
                })
            }
            // (v4) Deleting an account erases its writer keys: nothing of
            // it is left to ban (docs/API.md, Hardening, Bans).
            Author::DeletedMember { .. } => Err(ApiError::validation(format!(
                "{field}: its writer deleted their account; there is no one left to ban"
            ))),
        }
    }

    /// Bans a member or a writer; replaces an earlier ban of the same
    /// writer. Staff of the board cannot be banned.
    pub async fn ban(&self, staff: &SignedIn, command: BanCommand) -> Result<Answer<Ban>, ApiError> {
        let board = &command.board;
        self.require_staff(board, staff).await?;
        self.screen(&[(Screened::Reason, command.reason.as_str())]).await?;
        let Banned { subject, also, target } = match &command.by {
            BanBy::Member(id) => {
                if command.scope == Some(BanScope::Range) {
                    return Err(ApiError::validation(
                        r#"scope "range" needs a post_id or comment_id: a member_id names no address"#,
                    ));
                }
                let member = self
                    .store
                    .member_by_id(id)
                    .await?
                    .ok_or_else(|| ApiError::not_found("member"))?;
                Banned {
                    subject: BanSubject::Member(member.id.clone()),
                    also: None,
                    target: BanTarget::Member {
                        member_id: member.id,
                        nickname: member.nickname,
                        scope: None,
                    },
                }
            }
            BanBy::Post(post) => {
                let key = PostKey {
                    board: board.clone(),
                    post: post.clone(),
                };
                let guard = self.require_post(&key).await?;
                self.writer_of("post_id", guard, command.scope)?
            }
            BanBy::Comment(comment) => {
                let key = self
                    .store
                    .find_comment(board, comment)
                    .await?
                    .ok_or_else(|| ApiError::not_found("comment"))?;
                let guard = self
                    .store
                    .comment_guard(&key)
                    .await?
                    .ok_or_else(|| ApiError::not_found("comment"))?;
                self.writer_of("comment_id", guard, command.scope)?
            }
        };
        if let BanSubject::Member(id) = &subject
            && self.member_is_staff(board, &MemberId::from_stored(id.clone())).await?
        {
            return Err(ApiError::Forbidden("staff of this board cannot be banned".into()));
        }
        let at = chrono::Utc::now();
        let expires = command.duration.seconds().map(|s| at.timestamp() + s);
        let ban = Ban {
            id: BanId::generate().into_inner(),
            board: board.as_str().to_owned(),
            target: target.clone(),
            reason: command.reason.as_str().to_owned(),
            created_at: timestamp(at),
            expires_at: expires
                .and_then(|end| chrono::DateTime::from_timestamp(end, 0))
                .map(timestamp),
            by: staff.author(),
        };
        let record = BanRecord {
            ban,
            subject,
            also,
            expires,
        };
        let entry = entry(LogAction::Ban, target.into(), Some(&command.reason), staff);
        self.once(command.idempotency.as_ref(), |claim| async move {
            let done = super::completion(claim.as_ref(), &record.ban)?;
            self.store.ban(&record, &entry, done.as_ref()).await?;
            Ok(record.ban)
        })
        .await
    }

    /// Whether a member (not the caller) is staff of the board: an admin
    /// by username, or a moderator.
    async fn member_is_staff(&self, board: &BoardSlug, id: &MemberId) -> Result<bool, ApiError> {
        if self.store.is_moderator(board, id).await? {
            return Ok(true);
        }
        if self.admins.is_empty() {
            return Ok(false);
        }
        let member = self.store.member_by_id(id).await?;
        Ok(member.is_some_and(|m| self.admins.contains(&m.username)))
    }

    pub async fn list_bans(&self, staff: &SignedIn, page: ModPage) -> Result<BanPage, ApiError> {
        self.require_staff(&page.board, staff).await?;
        let now = throttle::unix_now();
        let mut bans = self
            .store
            .list_bans(&page.board, page.limit, page.cursor(), now)
            .await?;
        let named = named_members(bans.bans.iter().map(|ban| {
            let target = match &ban.target {
                BanTarget::Member { member_id, .. } => Some(member_id.as_str()),
                _ => None,
            };
            (target, &ban.by)
        }));
        let deleted = self.deleted_members(named).await?;
        for ban in &mut bans.bans {
            if matches!(&ban.target, BanTarget::Member { member_id, .. } if deleted.contains(member_id)) {
                ban.target = BanTarget::DeletedMember {};
            }
            shown_as_deleted(&mut ban.by, &deleted);
        }
        Ok(bans)
    }

    /// (v4) Which of the members a page names have deleted their account
    /// since: the log and the bans show them as `deleted_member`, as posts
    /// do (docs/API.md, Hardening, Bans). One lookup per distinct member on
    /// the page, at once.
    async fn deleted_members(
        &self,
        named: std::collections::BTreeSet<String>,
    ) -> Result<std::collections::HashSet<String>, ApiError> {
        let found = futures_util::future::try_join_all(named.into_iter().map(|id| async move {
            let live = self.store.member_by_id(&MemberId::from_stored(id.clone())).await?;
            Ok::<_, ApiError>(live.is_none().then_some(id))
        }))
        .await?;
        Ok(found.into_iter().flatten().collect())
    }

    /// Lifts a ban at once: the writer's next write goes through.
    pub async fn unban(&self, staff: &SignedIn, board: &BoardSlug, id: &BanId) -> Result<(), ApiError> {
        self.require_staff(board, staff).await?;
        let record = self
            .store
            .ban_by_id(board, id)
            .await?
            .ok_or_else(|| ApiError::not_found("ban"))?;
        // (v4) A member made staff while banned (an admin name added later)
        // must not free themselves (docs/API.md, Hardening, Bans).
        if record.subject == BanSubject::Member(staff.id.as_str().to_owned()) {
            return Err(ApiError::Forbidden("nobody lifts a ban of themselves".into()));
        }
        let entry = entry(LogAction::Unban, record.ban.target.clone().into(), None, staff);
        if self.store.unban(&record, &entry).await? {
            Ok(())
        } else {
            Err(ApiError::not_found("ban"))
        }
    }

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
        let keys = throttle::report_keys(&self.limits, &command.client.0);
        let reservation = throttle::reserve(&*self.store, &keys, Refusal::RateLimited).await?;
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
                let claim = claim.as_ref().map(super::IdempotencyClaim::claim);
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

    /// The public log: never an address, never a removed body.
    pub async fn modlog(&self, page: ModPage) -> Result<LogPage, ApiError> {
        let mut log = self.store.modlog(&page.board, page.limit, page.cursor()).await?;
        let named = named_members(log.entries.iter().map(|entry| {
            let target = match &entry.target {
                LogTarget::Member { member_id, .. } => Some(member_id.as_str()),
                _ => None,
            };
            (target, &entry.by)
        }));
        let deleted = self.deleted_members(named).await?;
        for entry in &mut log.entries {
            if matches!(&entry.target, LogTarget::Member { member_id, .. } if deleted.contains(member_id)) {
                entry.target = LogTarget::DeletedMember {};
            }
            shown_as_deleted(&mut entry.by, &deleted);
        }
        Ok(log)
    }
}

/// The distinct members a page names, as its target or as who acted:
/// collected before any await, so nothing borrowed is held across one.
fn named_members<'a>(named: impl Iterator<Item = (Option<&'a str>, &'a Author)>) -> std::collections::BTreeSet<String> {
    named
        .flat_map(|(target, by)| target.into_iter().chain(member_of(by)))
        .map(str::to_owned)
        .collect()
}

/// The member an author object names, if any.
fn member_of(author: &Author) -> Option<&str> {
    match author {
        Author::Member { member_id, .. } => Some(member_id.as_str()),
        _ => None,
    }
}

/// A deleted member's author object, as what they wrote shows it.
fn shown_as_deleted(author: &mut Author, deleted: &std::collections::HashSet<String>) {
    if member_of(author).is_some_and(|id| deleted.contains(id)) {
        *author = Author::deleted_member();
    }
}
