//! Blocks (docs/API.md, Notifications and blocks): a member's list of
//! members and guest tags they no longer see or hear from. Reads filter by
//! it after the read cache, so a board page stays one cached page for
//! everyone; the set is read once per request and kept in the process for
//! [`SESSION_TTL`], as the session epoch is (this process's own block and
//! unblock replace it at once).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use super::{App, SignedIn};
use crate::domain::{
    BlockEntry, BlockList, BlockSet, Blocked, BlockedGuest, BlockedMember, Blocking, CommentPage, GuestTag, MemberId,
    Page, PostDetail,
};
use crate::error::ApiError;
use crate::store::SESSION_TTL;

/// Block sets as last read, by member id.
#[derive(Debug, Default)]
pub(crate) struct BlockCache {
    sets: Mutex<HashMap<String, (Instant, Arc<BlockSet>)>>,
}

/// Members whose sets one process keeps at most; past it, the expired go.
const CACHED_SETS: usize = 10_000;

impl BlockCache {
    fn get(&self, member: &MemberId) -> Option<Arc<BlockSet>> {
        let sets = self.sets.lock().unwrap_or_else(PoisonError::into_inner);
        sets.get(member.as_str())
            .filter(|(read_at, _)| read_at.elapsed() < SESSION_TTL)
            .map(|(_, set)| Arc::clone(set))
    }

    fn keep(&self, member: &MemberId, set: Arc<BlockSet>) {
        let mut sets = self.sets.lock().unwrap_or_else(PoisonError::into_inner);
        if sets.len() >= CACHED_SETS {
            sets.retain(|_, (read_at, _)| read_at.elapsed() < SESSION_TTL);
        }
        sets.insert(member.as_str().to_owned(), (Instant::now(), set));
    }

    fn forget(&self, member: &MemberId) {
        self.sets
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(member.as_str());
    }
}

impl App {
    /// Whom `viewer` blocks: empty for an anonymous reader.
    pub async fn block_set(&self, viewer: Option<&SignedIn>) -> Result<Arc<BlockSet>, ApiError> {
        let Some(member) = viewer else {
            return Ok(Arc::default());
        };
        if let Some(set) = self.block_cache.get(&member.id) {
            return Ok(set);
        }
        let set = Arc::new(BlockSet::of(&self.store.blocks(&member.id).await?));
        self.block_cache.keep(&member.id, Arc::clone(&set));
        Ok(set)
    }

    /// `PUT /members/me/blocks/members/{member_id}`.
    pub async fn block_member(&self, member: &SignedIn, blocked: &str) -> Result<(), ApiError> {
        let blocked = MemberId::parse(blocked)?;
        if blocked == member.id {
            return Err(ApiError::invalid("member_id", "is you: you cannot block yourself"));
        }
        let found = self
            .store
            .member_by_id(&blocked)
            .await?
            .ok_or_else(|| ApiError::not_found("member"))?;
        let entry = BlockEntry {
            blocked: Blocked::Member(blocked),
            created_at: crate::domain::now(),
            member: Some(found),
        };
        self.add_block(member, &entry, "member_id").await
    }

    /// `PUT /members/me/blocks/guests/{tag}`.
    pub async fn block_guest(&self, member: &SignedIn, tag: &str) -> Result<(), ApiError> {
        let entry = BlockEntry {
            blocked: Blocked::Guest(GuestTag::parse(tag.to_owned())?),
            created_at: crate::domain::now(),
            member: None,
        };
        self.add_block(member, &entry, "tag").await
    }

    async fn add_block(&self, member: &SignedIn, entry: &BlockEntry, field: &str) -> Result<(), ApiError> {
        let done = self.store.block(&member.id, entry).await;
        self.block_cache.forget(&member.id);
        match done? {
            Blocking::Added | Blocking::Already => Ok(()),
            Blocking::Full => Err(ApiError::invalid(
                field,
                format_args!(
                    "cannot be blocked: you block {} already, the most there may be; unblock someone first",
                    crate::domain::notifications::MAX_BLOCKS
                ),
            )),
        }
    }

    /// `DELETE /members/me/blocks/members/{member_id}` (and guests): done
    /// whether or not the block was there.
    pub async fn unblock_member(&self, member: &SignedIn, blocked: &str) -> Result<(), ApiError> {
        let blocked = Blocked::Member(MemberId::parse(blocked)?);
        self.remove_block(member, &blocked).await
    }

    pub async fn unblock_guest(&self, member: &SignedIn, tag: &str) -> Result<(), ApiError> {
        let blocked = Blocked::Guest(GuestTag::parse(tag.to_owned())?);
        self.remove_block(member, &blocked).await
    }

    async fn remove_block(&self, member: &SignedIn, blocked: &Blocked) -> Result<(), ApiError> {
        let done = self.store.unblock(&member.id, blocked).await;
        self.block_cache.forget(&member.id);
        done?;
        Ok(())
    }

    /// `GET /members/me/blocks`: oldest block first.
    pub async fn block_list(&self, member: &SignedIn) -> Result<BlockList, ApiError> {
        let entries = self.store.blocks(&member.id).await?;
        let mut list = BlockList {
            members: Vec::new(),
            guests: Vec::new(),
        };
        for entry in entries {
            match (entry.blocked, entry.member) {
                (Blocked::Member(id), found) => list.members.push(BlockedMember {
                    id: id.as_str().to_owned(),
                    nickname: found.map(|m| m.nickname).unwrap_or_default(),
                    created_at: entry.created_at,
                }),
                (Blocked::Guest(tag), _) => list.guests.push(BlockedGuest {
                    tag: tag.as_str().to_owned(),
                    created_at: entry.created_at,
                }),
            }
        }
        Ok(list)
    }
}

/// Leaves out what `blocks` hides: the page keeps its cursor, so paging
/// still goes through everything (a page may hold fewer than its limit).
pub(crate) fn filter_page(page: &mut Page, blocks: &BlockSet) {
    if !blocks.is_empty() {
        page.posts.retain(|post| !blocks.hides(&post.author));
    }
}

pub(crate) fn filter_comments(page: &mut CommentPage, blocks: &BlockSet) {
    if !blocks.is_empty() {
        page.comments.retain(|comment| !blocks.hides(&comment.author));
    }
}

/// A post detail's first comments without the blocked: the post itself
/// stays (the reader asked for it by its id).
pub(crate) fn filter_detail(detail: &mut PostDetail, blocks: &BlockSet) {
    if !blocks.is_empty() {
        detail.comments.retain(|comment| !blocks.hides(&comment.author));
    }
}
