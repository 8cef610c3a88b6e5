//! Staff ban writers (a member, or where a post or comment was written
//! from), list the active bans and lift them.

use super::{ModPage, entry, named_members, shown_as_deleted};
use crate::app::{Answer, App, IdempotencyKey, SignedIn, throttle};
use crate::domain::moderation::Screened;
use crate::domain::{
    Author, Ban, BanDuration, BanId, BanPage, BanRecord, BanScope, BanSubject, BanTarget, BoardSlug, CommentId, Guard,
    LogAction, MemberId, PostId, PostKey, Reason, timestamp,
};
use crate::error::ApiError;

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
    /// How wide the address part reaches; absent: `address`.
    pub scope: Option<BanScope>,
}

/// Whom a ban stops: its subject, a second one, and how it is shown.
struct Banned {
    subject: BanSubject,
    also: Option<BanSubject>,
    target: BanTarget,
}

impl App {
    /// Whom a ban through a post or comment (`field` names it) stops: its
    /// member author and guest writes from where it was written, or a
    /// guest's address or range key.
    fn writer_of(&self, field: &str, guard: Guard, scope: Option<BanScope>) -> Result<Banned, ApiError> {
        let scope = scope.unwrap_or_default();
        let keyed = |key: Option<crate::domain::WriterKey>| {
            key.ok_or_else(|| {
                ApiError::invalid(
                    field,
                    match scope {
                        BanScope::Address => {
                            "names a text written before writer keys were kept: ban its writer some other way"
                        }
                        BanScope::Range => {
                            "names a text written before range keys were kept: ban its address instead (scope \"address\")"
                        }
                    },
                )
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
            // Deleting an account erases its writer keys: nothing of
            // it is left to ban (docs/API.md, Hardening, Bans).
            Author::DeletedMember { .. } => Err(ApiError::invalid(
                field,
                "names a text whose writer deleted their account; there is no one left to ban",
            )),
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
                    return Err(ApiError::invalid(
                        "scope",
                        r#""range" needs a post_id or comment_id: a member_id names no address"#,
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
            let done = crate::app::completion(claim.as_ref(), &record.ban)?;
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

    /// Lifts a ban at once: the writer's next write goes through.
    pub async fn unban(&self, staff: &SignedIn, board: &BoardSlug, id: &BanId) -> Result<(), ApiError> {
        self.require_staff(board, staff).await?;
        let record = self
            .store
            .ban_by_id(board, id)
            .await?
            .ok_or_else(|| ApiError::not_found("ban"))?;
        // A member made staff while banned (an admin name added later)
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
}
