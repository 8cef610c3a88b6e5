//! The ports: every store trait, each method declared once in `ports!`.

use crate::domain::media::{MediaOutcome, MediaOwner, MediaRecord, NewMedia};
use crate::domain::{
    BanId, BanPage, BanRecord, BanSubject, BoardSettings, BoardSlug, Category, Comment, CommentId, CommentKey,
    CommentPage, Guard, LogEntry, LogPage, Member, MemberCredentials, MemberId, Owned, Page, PageLimit, PasswordHash,
    PendingDeletion, Post, PostDetail, PostId, PostKey, Report, ReportId, ReportPage, Reported, Revisions,
    SessionState, Tally, TotpStart, Username, Vote, VoteChange, Window, Writer, WriterKey,
};
use crate::domain::{BlockEntry, Blocked, Blocking, MediaId, NewNotification, NotificationPage, TextRef};

use super::idempotency::Claimed;
use super::{AttemptKey, Claim, Completion, Edited, GuestVoted, PendingPurge, PostEdit, StoreResult};

/// Every port, each method declared once, handed to `$then!`, which
/// expands the list: into the traits below (`declare_ports!`) and into
/// `TracedStore`'s forwarders (`traced.rs`, with the `traces` feature). A
/// new port method is one declaration here; both adapters then implement it.
macro_rules! ports {
    ($then:ident) => {
        $then! {
            pub trait Members {
                /// Fails with [`StoreError::UsernameTaken`] when the username exists.
                /// With `done`, completes that idempotency record in the same write.
                async fn create_member(
                    &self,
                    member: &Member,
                    password_hash: &PasswordHash,
                    done: Option<&Completion>,
                ) -> StoreResult<()>;
                async fn member_credentials(&self, username: &Username) -> StoreResult<Option<MemberCredentials>>;
                /// Whether a signup with `username` would be refused: a member
                /// has it, or had it (a deleted account keeps its username taken).
                async fn username_taken(&self, username: &Username) -> StoreResult<bool>;
                /// The member with this id (moderator appointments, bans).
                async fn member_by_id(&self, id: &MemberId) -> StoreResult<Option<Member>>;
                /// Stores `new` only if the stored hash is still `old` (a rehash after
                /// login); false when it changed meanwhile.
                async fn replace_password_hash(
                    &self,
                    username: &Username,
                    old: &PasswordHash,
                    new: &PasswordHash,
                ) -> StoreResult<bool>;
            }

            /// Boards as data (docs/API.md, Boards): their settings, live post
            /// counts and post number counters.
            pub trait BoardDirectory {
                /// Every board's settings, in slug order: one small read.
                async fn boards(&self) -> StoreResult<Vec<BoardSettings>>;
                /// The live posts of each of `boards`, in the same order (0 for an unknown board).
                async fn post_counts(&self, boards: &[BoardSlug]) -> StoreResult<Vec<u64>>;
                /// Creates the board with its log entry (none when `BOARDS` seeds it);
                /// false, and nothing written, when it exists.
                async fn create_board(&self, settings: &BoardSettings, entry: Option<&LogEntry>) -> StoreResult<bool>;
                /// Replaces the settings (all but `created_at`) with the log entry;
                /// false, and nothing written, when there is no such board.
                async fn update_board(&self, settings: &BoardSettings, entry: &LogEntry) -> StoreResult<bool>;
                /// The next post number of `board` (docs/API.md, Boards): never given
                /// twice under any concurrency; a number no create used is a gap.
                async fn allocate_post_number(&self, board: &BoardSlug) -> StoreResult<u64>;
            }

            pub trait Posts {
                /// The post carries its number ([`BoardDirectory::allocate_post_number`])
                /// and category. With `done`, completes that idempotency record in the same write.
                async fn create_post(
                    &self,
                    post: &Post,
                    writer: &Writer,
                    guest_password_hash: Option<&PasswordHash>,
                    done: Option<&Completion>,
                ) -> StoreResult<()>;
                /// The post with its first [`crate::domain::COMMENTS_PAGE`] comments
                /// (oldest first) and the cursor to the rest: a bounded number of store
                /// requests whatever the comment count.
                async fn post_detail(&self, key: &PostKey) -> StoreResult<Option<PostDetail>>;
                /// A page of the post's comments, oldest first, strictly after `cursor`
                /// (a `comments_next_cursor` or `next_cursor`); `None` when there is no
                /// such post.
                async fn list_comments(
                    &self,
                    key: &PostKey,
                    limit: PageLimit,
                    cursor: Option<&str>,
                ) -> StoreResult<Option<CommentPage>>;
                /// Counts one view and returns the post as [`Posts::post_detail`] does,
                /// its `view_count` including this view (docs/API.md, Counting); `None`
                /// when there is no such post. May serve the post and the other views'
                /// count from a short-lived cache (DynamoDB's `READ_CACHE_TTL_MS`).
                async fn view_post(&self, key: &PostKey) -> StoreResult<Option<PostDetail>>;
                /// Newest first; `cursor` is a page's `next_cursor`.
                async fn list_posts(&self, board: &BoardSlug, limit: PageLimit, cursor: Option<&str>) -> StoreResult<Page>;
                /// The posts of one category, newest first, paged as [`Posts::list_posts`];
                /// reads no post of another category (on DynamoDB an index of its own).
                async fn list_category(
                    &self,
                    board: &BoardSlug,
                    category: &Category,
                    limit: PageLimit,
                    cursor: Option<&str>,
                ) -> StoreResult<Page>;
                /// The board's best posts (of one category, with `category`), newest
                /// first, paged as [`Posts::list_posts`] (on DynamoDB an index of its own).
                async fn list_best(
                    &self,
                    board: &BoardSlug,
                    category: Option<&Category>,
                    limit: PageLimit,
                    cursor: Option<&str>,
                ) -> StoreResult<Page>;
                /// The id of the post numbered `number` on `board`, if it is still there.
                async fn post_by_number(&self, board: &BoardSlug, number: u64) -> StoreResult<Option<PostId>>;
                /// Staff change a post's category, with the log entry; false when no such post.
                async fn set_category(&self, key: &PostKey, category: Option<&Category>, entry: &LogEntry) -> StoreResult<bool>;
                /// Staff take a post out of the best posts for good (it never becomes
                /// best again), with the log entry; false when no such post.
                async fn unbest(&self, key: &PostKey, entry: &LogEntry) -> StoreResult<bool>;
                /// Adds views counted elsewhere (the server's view buffer,
                /// `app::views`) in one write: `(post, how many)`, each post
                /// once. A post that is gone takes nothing.
                async fn add_views(&self, views: &[(PostKey, u64)]) -> StoreResult<()>;
                async fn post_guard(&self, key: &PostKey) -> StoreResult<Option<Guard>>;
                /// Changes title and body, atomically with the version check when the
                /// edit has one. In the same write the version it replaces
                /// becomes a revision (title, body, its `updated_at`), and the oldest
                /// goes once the post keeps more than [`crate::domain::MAX_REVISIONS`].
                async fn update_post(&self, key: &PostKey, edit: &PostEdit) -> StoreResult<Edited>;
                /// A page of the post's kept revisions, newest first, those
                /// numbered below `before` (all, without); `None` when there is
                /// no such post.
                async fn revisions(&self, key: &PostKey, limit: PageLimit, before: Option<u64>)
                -> StoreResult<Option<Revisions>>;
                /// Deletes one kept revision (and, for staff, writes `entry` in
                /// the same write); false when the post or the revision is not there.
                async fn delete_revision(&self, key: &PostKey, number: u64, entry: Option<&LogEntry>)
                -> StoreResult<bool>;
                /// Deletes the post with its comments and likes; false when there was none.
                /// Resolves (deletes) the open reports of the post and of its
                /// comments with it, including any opened while it runs, so staff do
                /// not see a report of something gone (on DynamoDB in the second step
                /// of the delete, which resumes after an interruption).
                /// `unless_answered` (the board's edit lock, for its author):
                /// [`StoreError::Answered`] when someone else has commented,
                /// decided in the delete's own write.
                async fn delete_post(&self, key: &PostKey, unless_answered: bool) -> StoreResult<bool>;
                async fn replace_post_guest_hash(&self, key: &PostKey, old: &PasswordHash, new: &PasswordHash)
                -> StoreResult<bool>;
            }

            pub trait Comments {
                /// Adds the comment and counts it on its post (and, with `done`,
                /// completes that idempotency record), together or not at all.
                /// [`StoreError::NotFound`] when the post is not on `board`.
                /// `answers`: it is by someone other than the post's author, on
                /// a board with the edit lock ([`crate::domain::Guard::answered_by`]);
                /// a store that cannot query inside a write counts it, so the
                /// author's edits and deletes see it in theirs.
                async fn create_comment(
                    &self,
                    board: &BoardSlug,
                    comment: &Comment,
                    writer: &Writer,
                    guest_password_hash: Option<&PasswordHash>,
                    answers: bool,
                    done: Option<&Completion>,
                ) -> StoreResult<()>;
                /// The comment as its post's pages show it, read by its key (not by
                /// paging); `None` when the post, on the key's board, has no such
                /// comment: deleted, removed or never there.
                async fn comment(&self, key: &CommentKey) -> StoreResult<Option<Comment>>;
                async fn comment_guard(&self, key: &CommentKey) -> StoreResult<Option<Guard>>;
                /// Whether the post has a standing comment by anyone other
                /// than the author `guard` names (another member, or any guest for a
                /// member's post; a member, or a guest of another address key, for
                /// a guest's post): what `lock_after_comments` locks on.
                async fn answered_by_others(&self, key: &PostKey, guard: &Guard) -> StoreResult<bool>;
                /// The key of a comment on `board` known only by its id (a ban
                /// through a comment).
                async fn find_comment(&self, board: &BoardSlug, comment: &CommentId) -> StoreResult<Option<CommentKey>>;
                /// Removes the comment and uncounts it; false when there was none.
                /// Its replies stay (their `parent_id` names the removed comment).
                /// Resolves (deletes) the comment's open report in the same write;
                /// a report of the comment racing it is either resolved with it or
                /// answers [`StoreError::NotFound`].
                async fn delete_comment(&self, key: &CommentKey) -> StoreResult<bool>;
                async fn replace_comment_guest_hash(
                    &self,
                    key: &CommentKey,
                    old: &PasswordHash,
                    new: &PasswordHash,
                ) -> StoreResult<bool>;
            }

            /// Likes and dislikes (docs/API.md, Votes and best posts). Counts are
            /// exact under any concurrency; the change that first brings
            /// `like_count - dislike_count` to `best_at` marks the post best in the
            /// same write, unless staff took it out before.
            pub trait Votes {
                /// The member's change, idempotent (a like and a dislike exclude each
                /// other, switched in one write); `None` when there is no such post.
                async fn vote(
                    &self,
                    key: &PostKey,
                    member: &MemberId,
                    change: VoteChange,
                    best_at: Option<u32>,
                ) -> StoreResult<Option<Tally>>;
                /// A guest's vote, once per post per address key, never withdrawn.
                async fn guest_vote(&self, key: &PostKey, voter: &WriterKey, vote: Vote, best_at: Option<u32>) -> StoreResult<GuestVoted>;
                /// The member's vote on the post, if any.
                async fn member_vote(&self, post: &PostId, member: &MemberId) -> StoreResult<Option<Vote>>;
                async fn has_liked(&self, post: &PostId, member: &MemberId) -> StoreResult<bool>;
            }

            /// The idempotency records of creates sent with an `Idempotency-Key`
            /// ([`idempotency`]).
            pub trait Idempotency {
                /// Claims `claim.key` for this request, or says why not.
                async fn claim(&self, claim: &Claim) -> StoreResult<Claimed>;
                /// Gives the key up (the request failed, nothing was created): only if
                /// `token` still holds it and it is not completed.
                async fn release(&self, key: &str, token: &str) -> StoreResult<()>;
            }

            /// Moderators, bans, removals, reports and the moderation log
            /// (docs/API.md, Roles and moderation). Every change a moderator makes is
            /// written together with its log entry, or not at all.
            pub trait Moderation {
                async fn is_moderator(&self, board: &BoardSlug, member: &MemberId) -> StoreResult<bool>;
                /// The board's moderators, in the order they were appointed.
                async fn moderators(&self, board: &BoardSlug) -> StoreResult<Vec<Member>>;
                /// Appoints `member`; false, and no entry written, when they already are one.
                async fn add_moderator(&self, board: &BoardSlug, member: &Member, entry: &LogEntry) -> StoreResult<bool>;
                /// Dismisses `member`; false, and no entry written, when they were not one.
                async fn remove_moderator(&self, board: &BoardSlug, member: &MemberId, entry: &LogEntry) -> StoreResult<bool>;
                /// The ban, active at `now` (Unix seconds), of any of `subjects` on
                /// `board`: the ban check every write makes, one small read.
                async fn active_ban(&self, board: &BoardSlug, subjects: &[BanSubject], now: i64) -> StoreResult<Option<BanRecord>>;
                /// Stores the ban with its entry (and, with `done`, that idempotency
                /// record); an earlier ban of the same subject on the board is replaced.
                async fn ban(&self, ban: &BanRecord, entry: &LogEntry, done: Option<&Completion>) -> StoreResult<()>;
                async fn ban_by_id(&self, board: &BoardSlug, id: &BanId) -> StoreResult<Option<BanRecord>>;
                /// Lifts the ban with its entry; false when it was lifted already.
                async fn unban(&self, ban: &BanRecord, entry: &LogEntry) -> StoreResult<bool>;
                /// Bans active at `now`, newest first, strictly after `cursor`.
                async fn list_bans(
                    &self,
                    board: &BoardSlug,
                    limit: PageLimit,
                    cursor: Option<&str>,
                    now: i64,
                ) -> StoreResult<BanPage>;
                /// Deletes the post as [`Posts::delete_post`] does, resolves its open
                /// reports and those of its comments, and writes `entry`; false when
                /// there was no such post.
                async fn remove_post(&self, key: &PostKey, entry: &LogEntry, done: Option<&Completion>) -> StoreResult<bool>;
                /// Deletes the comment as [`Comments::delete_comment`] does (its
                /// replies stay), resolves its open report and writes `entry`.
                async fn remove_comment(&self, key: &CommentKey, entry: &LogEntry, done: Option<&Completion>) -> StoreResult<bool>;
                /// Opens `report` on its target, or counts `reporter` (`member:<id>`
                /// or `address:<key>`) on the target's open report, once per reporter.
                /// [`StoreError::NotFound`] when the target is not on `board`. With
                /// `claim`, its record is completed with the answer (`201` opened,
                /// `200` joined) in the same write.
                async fn report(
                    &self,
                    board: &BoardSlug,
                    report: &Report,
                    reporter: &str,
                    claim: Option<&Claim>,
                ) -> StoreResult<Reported>;
                /// Open reports with their reporter counts, newest first.
                async fn list_reports(&self, board: &BoardSlug, limit: PageLimit, cursor: Option<&str>) -> StoreResult<ReportPage>;
                /// Closes an open report; false when there is no such open report.
                async fn resolve_report(&self, board: &BoardSlug, id: &ReportId, done: Option<&Completion>) -> StoreResult<bool>;
                /// The board's moderation log, newest first.
                async fn modlog(&self, board: &BoardSlug, limit: PageLimit, cursor: Option<&str>) -> StoreResult<LogPage>;
            }

            /// A member's control of their own account (docs/API.md, Accounts).
            /// A member is named by both id and username: the id is what their content
            /// is indexed by, the username what their record is keyed by on DynamoDB.
            /// A deleted account is gone for every method here: its username stays
            /// taken, and nothing else of it is found.
            pub trait Accounts {
                /// The session epoch every valid token of the member carries and
                /// whether their TOTP is confirmed; `None` when there is no
                /// such (live) account. DynamoDB may answer from this process's memory
                /// of the last [`SESSION_TTL`].
                async fn session_state(&self, id: &MemberId, username: &Username) -> StoreResult<Option<SessionState>>;
                /// Advances the epoch, so every token issued before stops; false when
                /// there is no such account.
                async fn end_sessions(&self, id: &MemberId, username: &Username) -> StoreResult<bool>;
                /// Stores `new` and advances the epoch, together.
                async fn change_password(&self, id: &MemberId, username: &Username, new: &PasswordHash) -> StoreResult<bool>;
                /// Step 1 of a deletion, in one write: the account's credentials,
                /// nickname and its appointments on `moderates` (what
                /// [`Accounts::moderated_boards`] found) go (its username stays, taken),
                /// its epoch advances, and a [`PendingDeletion`] is recorded. False when
                /// the account was gone already.
                async fn close_account(
                    &self,
                    id: &MemberId,
                    username: &Username,
                    delete_content: bool,
                    moderates: &[BoardSlug],
                ) -> StoreResult<bool>;
                /// Deletions whose step 2 has not finished, oldest first.
                async fn pending_deletions(&self, limit: usize) -> StoreResult<Vec<PendingDeletion>>;
                /// Up to `limit` of the posts and comments the member is still the
                /// author of, and with `likes` their likes: the work step 2 has left.
                /// What was deleted or disowned is no longer found (on DynamoDB once
                /// the index has caught up: an item may be found again a moment after).
                async fn owned(&self, member: &MemberId, likes: bool, limit: usize) -> StoreResult<Vec<Owned>>;
                /// Makes `deleted_member` the author of these posts and comments and
                /// erases their writer keys (likes are left as they are). Idempotent.
                async fn disown(&self, member: &MemberId, items: &[Owned]) -> StoreResult<()>;
                /// Ends a pending deletion (step 2 done).
                async fn finish_deletion(&self, member: &MemberId) -> StoreResult<()>;
                /// The boards among `boards` the member moderates.
                async fn moderated_boards(&self, member: &MemberId, boards: &[BoardSlug]) -> StoreResult<Vec<BoardSlug>>;
                /// The member's posts on every board, newest first.
                async fn member_posts(&self, member: &MemberId, limit: PageLimit, cursor: Option<&str>) -> StoreResult<Page>;
                /// The member's comments on every post, newest first.
                async fn member_comments(
                    &self,
                    member: &MemberId,
                    limit: PageLimit,
                    cursor: Option<&str>,
                ) -> StoreResult<CommentPage>;
            }

            /// A member's TOTP (docs/API.md, Passwords and staff sign-in):
            /// the secret arrives sealed and recovery codes hashed; the store never
            /// sees either in the clear. It is read with the credentials
            /// ([`Members::member_credentials`]). A closed account loses it.
            pub trait SecondFactors {
                /// Stores `sealed` as an enrollment waiting for its first code,
                /// replacing one that waits; nothing changes when TOTP is on already.
                async fn start_totp(&self, id: &MemberId, username: &Username, sealed: &str) -> StoreResult<TotpStart>;
                /// Turns the waiting enrollment `sealed` on, with the recovery codes'
                /// hashes and the step its first code was for: false when it is no
                /// longer the one waiting (replaced, removed, or confirmed already).
                async fn confirm_totp(
                    &self,
                    id: &MemberId,
                    username: &Username,
                    sealed: &str,
                    recovery_codes: &[String],
                    step: u64,
                ) -> StoreResult<bool>;
                /// Accepts a code's time step once: true, and recorded, when `step` is
                /// later than the last one accepted for the member's confirmed TOTP;
                /// false for a replay (or no TOTP). One conditional write.
                async fn spend_totp_step(&self, username: &Username, step: u64) -> StoreResult<bool>;
                /// Spends the recovery code with this hash: true once, false after.
                async fn spend_recovery_code(&self, username: &Username, hash: &str) -> StoreResult<bool>;
                /// Replaces a secret sealed under an earlier key by the same secret
                /// sealed under the current one, if it is still `old` (after a key
                /// rotation; best effort).
                async fn reseal_totp(&self, username: &Username, old: &str, new: &str) -> StoreResult<bool>;
                /// Removes the member's TOTP, on or waiting: false when there is no
                /// such live account.
                async fn end_totp(&self, id: &MemberId, username: &Username) -> StoreResult<bool>;
            }

            /// Notifications (docs/API.md, Notifications and blocks): written
            /// off the request path from what was posted ([`crate::app::notify`]),
            /// read and marked by their member. A notification is read when its id is
            /// at most the member's read mark; the unread count is exact under
            /// racing adds, withdrawals and marks.
            pub trait Notifications {
                /// Stores the notifications of `text` (each for another member), once:
                /// false, and nothing written, when this text notified before (a
                /// redelivery), or its notifications were withdrawn already. Each
                /// recipient keeps their newest [`crate::domain::notifications::MAX_NOTIFICATIONS`].
                async fn add_notifications(&self, text: &TextRef, notifications: &[NewNotification]) -> StoreResult<bool>;
                /// Deletes the notifications of `text`, and of every comment on the
                /// post when `text` is the post; later adds for them change nothing.
                async fn withdraw_notifications(&self, text: &TextRef) -> StoreResult<()>;
                /// The notifications of `text` show `deleted_member` as their actor.
                async fn disown_notifications(&self, text: &TextRef) -> StoreResult<()>;
                /// The member's notifications, newest first, strictly after `cursor`.
                async fn notifications(&self, member: &MemberId, limit: PageLimit, cursor: Option<&str>) -> StoreResult<NotificationPage>;
                /// How many of the member's notifications are unread: one small read.
                async fn unread_notifications(&self, member: &MemberId) -> StoreResult<u64>;
                /// Marks read every notification up to the id `up_to` (every one, with
                /// `None`); a mark never moves back. Answers the unread count after.
                async fn mark_notifications_read(&self, member: &MemberId, up_to: Option<&str>) -> StoreResult<u64>;
                /// Deletes notifications created before `before` (RFC 3339), a batch
                /// at a time; how many. (DynamoDB's TTL deletes them there: 0.)
                async fn expire_notifications(&self, before: &str) -> StoreResult<u64>;
                /// Deletes the member's notifications, read mark and blocks: an
                /// account deletion's step 2. Idempotent.
                async fn forget_member(&self, member: &MemberId) -> StoreResult<()>;
            }

            /// Whom a member blocks (docs/API.md, Notifications and blocks).
            pub trait Blocks {
                /// Adds the block (with the blocked member's names, for the list).
                async fn block(&self, member: &MemberId, entry: &BlockEntry) -> StoreResult<Blocking>;
                /// Removes it; false when there was none.
                async fn unblock(&self, member: &MemberId, blocked: &Blocked) -> StoreResult<bool>;
                /// Every block of the member, oldest first: one small read.
                async fn blocks(&self, member: &MemberId) -> StoreResult<Vec<BlockEntry>>;
            }

            /// Uploaded images (docs/API.md, Images): a record per grant,
            /// pending until its file is checked, then ready or rejected, once.
            /// Attaching happens inside the post's or comment's own write
            /// ([`Posts::create_post`], [`Posts::update_post`],
            /// [`Comments::create_comment`]: [`StoreError::MediaUnavailable`]
            /// when an image is not attachable, and nothing is written).
            pub trait Media {
                /// Records a grant (pending, attached nowhere, due at its
                /// `due_at`); false when the id is taken.
                async fn create_media(&self, media: &NewMedia) -> StoreResult<bool>;
                async fn media(&self, id: &MediaId) -> StoreResult<Option<MediaRecord>>;
                /// The records of these ids that exist, in no particular order:
                /// one read (a post's images are checked before its write).
                async fn media_batch(&self, ids: &[MediaId]) -> StoreResult<Vec<MediaRecord>>;
                /// Ends a pending upload's check: false (nothing changed) when it
                /// is not pending, so a redelivered check changes nothing.
                async fn finish_media(&self, id: &MediaId, outcome: &MediaOutcome) -> StoreResult<bool>;
                /// The images attached to `text` (a post's: with its comments')
                /// are attached nowhere from now on, due at `at`: what a delete
                /// or removal of the text does to them. Idempotent; how many.
                async fn release_media(&self, text: &TextRef, at: &str) -> StoreResult<u64>;
                /// Every upload granted to `owner` that is attached nowhere is
                /// due at `at` from now on (what deleting the account does to
                /// them; the sweep then deletes them with their files). How many.
                async fn release_unattached(&self, owner: &MediaOwner, at: &str) -> StoreResult<u64>;
                /// Up to `limit` uploads attached nowhere and due at `now` or
                /// before (RFC 3339), the earliest first: the sweep deletes them
                /// with their files.
                async fn due_media(&self, now: &str, limit: usize) -> StoreResult<Vec<MediaRecord>>;
                /// Deletes these records if they are still attached nowhere
                /// (after their files). Idempotent.
                async fn delete_media(&self, ids: &[MediaId]) -> StoreResult<()>;
            }

            /// Proof-of-work solutions spent (docs/API.md, Proof of work for
            /// anonymous writes): each challenge is accepted once.
            pub trait Challenges {
                /// Records `challenge` as spent until `expires_at` (Unix seconds; it is
                /// refused anyway after that, so it may be forgotten): true the first
                /// time, false when it was spent before. One conditional write.
                async fn spend_challenge(&self, challenge: &str, expires_at: i64) -> StoreResult<bool>;
            }

            pub trait Attempts {
                /// Counts one failure for `key` in `window` and returns the window's count.
                async fn record_failure(&self, key: &AttemptKey, window: Window) -> StoreResult<u64>;
                /// Takes one counted failure back (never below zero): an attempt counted
                /// before hashing turned out to be a success.
                async fn forgive_failure(&self, key: &AttemptKey, window: Window) -> StoreResult<()>;
                async fn failures(&self, key: &AttemptKey, window: Window) -> StoreResult<u64>;
                /// Sets `key`'s count in `window` back to zero: a run of
                /// failures ended by a success (wrong TOTP codes, then a right one).
                async fn reset_failures(&self, key: &AttemptKey, window: Window) -> StoreResult<()>;
            }

            /// The second step of a post's delete, off the request (docs/storage.md,
            /// Deleting a post): on DynamoDB a delete or removal writes the post's
            /// removal and a purge marker, and the children go later (the `purge`
            /// function on the table's stream, or the server's background task). SQLite
            /// deletes everything in the post's own transaction: nothing is ever pending.
            pub trait Purges {
                /// Up to `limit` deleted posts whose children are still stored.
                async fn pending_purges(&self, limit: usize) -> StoreResult<Vec<PendingPurge>>;
                /// Deletes the children of a deleted post, then its marker. Idempotent:
                /// a purge done already, or cut short anywhere, is finished by running
                /// it again. A post that is not deleted is left alone.
                async fn purge(&self, pending: &PendingPurge) -> StoreResult<()>;
            }
        }
    };
}
#[cfg(feature = "traces")]
pub(crate) use ports;

ports!(declare_ports);
