//! The single-table layout: every item type with its keys. See docs/storage.md,
//! "Single-table design", for the access pattern each one serves.
//!
//! | item    | PK                      | SK                  | GSI1PK         | GSI1SK    |
//! |---------|-------------------------|---------------------|----------------|-----------|
//! | member  | `MEMBER#<username>`     | `MEMBER`            |                |           |
//! | post    | `POST#<post id>`        | `POST`              | `BOARD#<slug>` | `<post id>` |
//! | comment | `POST#<post id>`        | `COMMENT#<id>`      |                |           |
//! | counter | `COUNT#<board>#<n>`     | `<post id>`         |                |           |
//! | like    | `LIKES#<post id>#<n>`   | `MEMBER#<member id>`|                |           |
//! | attempt | `ATTEMPT#<key>`         | `WINDOW#<start>`    |                |           |
//!
//! v4 (docs/storage.md, "Boards, numbers, categories and votes"):
//!
//! | item              | PK                    | SK                 | holds |
//! |-------------------|-----------------------|--------------------|-------|
//! | board             | `BOARDS`              | `<slug>`           | `settings` (JSON), `created_at` |
//! | number counter    | `NUMBERS#<slug>`      | `NEXT`             | `next`, `legacy`, `legacy_given` |
//! | live post count   | `POSTS#<slug>`        | `LIVE`             | `posts` |
//! | member vote       | `LIKES#<post id>#<n>` | `MEMBER#<id>`      | a like item; `vote` = `dislike` for a dislike |
//! | guest vote        | `LIKES#<post id>#<n>` | `GUEST#<key>`      | `board`, `vote` |
//! | best gate         | `POST#<post id>`      | `GATE`             | `net`, or `state` `best` / `closed` |
//! | revision          | `POST#<post id>`      | `REVISION#<edit, 10 digits>` | `title`, `body`, `edited_at` |
//! | spent challenge   | `POW#<challenge>`     | `SPENT`            | TTL `expires_at` |
//!
//! A post item also carries `number` ([`BY_NUMBER_INDEX`]: `GSI1PK`,
//! `number`, keys only), `category` with `category_key`
//! ([`BY_CATEGORY_INDEX`]: `category_key`, `GSI1SK`) and, while best,
//! `best_board` ([`BEST_INDEX`]: `best_board`, `GSI1SK`); the two listing
//! indexes project what `GSI1` does. `GATE` sorts between `COMMENT#` and
//! `POST`: the comments Query never reads it and the purge takes it. A
//! post item carries `edits` (absent: 0), the number of its edits: each
//! edit writes the version it replaced as a revision (the newest
//! [`crate::domain::MAX_REVISIONS`] are kept), in the post's partition so
//! that its purge takes them.
//!
//! Moderation. Posts, comments and members carry `id`, which the
//! keys-only index [`BY_ID_INDEX`] (`ById`) is keyed by: a member or a
//! comment known only by its id is one Query on it, then one GetItem. No
//! moderation item has an `id` attribute (they are not in `ById`).
//!
//! | item             | PK                             | SK                                  | holds |
//! |------------------|--------------------------------|-------------------------------------|-------|
//! | moderator        | `MODS#<board>`                 | `<member id>`                       | member fields, `appointed` |
//! | ban record       | `BANS#<board>`                 | `<ban id>`                          | `ban` (JSON), `subject`, `expires`, TTL `expires_at` |
//! | ban subject      | `BAN#<board>#<subject key>`    | `BAN`                               | the same: the ban check's item |
//! | log entry        | `MODLOG#<board>`               | `<entry id>`                        | `entry` (JSON) |
//! | open report      | `REPORTS#<board>`              | `<report id>`                       | `report` (JSON, no count), `reporters` (number) |
//! | report pointer   | `POST#<post id>`               | `REPORT#POST`, `REPORT#COMMENT#<id>`| `report_id`, `report` (JSON) |
//! | reporter         | `POST#<post id>`               | `REPORTER#<report id>#<reporter>`   | TTL `expires_at` (90 days) |
//!
//! A subject key is [`crate::domain::BanSubject::key`] (`member:<id>`,
//! `address:<writer key>`). Pointers and reporters sort after the post item
//! (`COMMENT#` < `POST` < `REPORT#` < `REPORTER#`): the comments Query
//! (`begins_with(SK, "COMMENT#")`) never reads them, and the post's purge
//! (every key under `POST#<post id>`) deletes them with the post. The ban
//! check of a write is one consistent read of its subjects' items (a
//! GetItem, or a BatchGetItem of 2 small items: at most 2 RCU); each
//! operation's requests and units are in docs/storage.md ("Moderation
//! operations").
//!
//! A post's counts are the sum of its counter shards: views, likes and
//! comments in small items of their own, shard n of every post of a board in
//! the partition `COUNT#<board>#<n>`. A post's shards are in n different
//! partitions (its writes spread), and a board page's shards are one Query
//! per partition (its reads are cheap). The post item and the board index
//! hold no count, so a view or a like never writes them. v1 tables
//! kept the counts on the post item: [`LegacyCounts`] still reads them until
//! the backfill (`cargo run -p shared --bin backfill`) folds them into shard 0.
//!
//! Accounts ([`super::accounts`]). The member item carries
//! `session_epoch` (N, absent = 0: what every valid token of the member
//! names; `ADD 1` ends every session). A deleted account's member item
//! stays as a tombstone, so its username stays taken: it keeps `PK`, `SK`,
//! `username` and `session_epoch` (advanced), gains `deleted_at`, and loses
//! `id`, `nickname`, `password_hash`, `created_at` and TOTP (so `ById`
//! no longer finds it). A member's posts, comments and likes carry `owner` (the
//! member id) and `owner_sk`, the keys of the index [`BY_OWNER_INDEX`]
//! (`ByOwner`, INCLUDE of the summary fields, `board`, `post_id` and
//! `parent_id`, never `body`); guests' items and disowned ones carry
//! neither.
//!
//! | item              | PK                 | SK             | owner / owner_sk                  | holds |
//! |-------------------|--------------------|----------------|-----------------------------------|-------|
//! | member            | `MEMBER#<username>`| `MEMBER`       | -                                 | + `session_epoch`, the TOTP attributes; a tombstone: `username`, `session_epoch`, `deleted_at` |
//! | member's post     | `POST#<post id>`   | `POST`         | `<member id>` / `POST#<post id>`  | as any post |
//! | member's comment  | `POST#<post id>`   | `COMMENT#<id>` | `<member id>` / `COMMENT#<id>`    | as any comment |
//! | like              | `LIKES#<post id>#<n>` | `MEMBER#<member id>` | `<member id>` / `LIKE#<post id>` | `board` (so a like is withdrawn by its post's key) |
//! | pending deletion  | `ACCOUNT_PURGE`    | `<member id>`  | -                                 | `member_id`, `delete_content`, `started` |
//!
//! TOTP ([`super::accounts`], `second_factors`) is four attributes
//! of the member item, all absent while it is off: `totp_secret` (S, sealed
//! by the app), `totp_confirmed` (BOOL, false while the enrollment waits;
//! only ever beside `totp_secret`, so the session check reads it alone),
//! `totp_last_step` (N, the last step a code was accepted for) and
//! `totp_recovery` (SS, the hashes of the unused recovery codes; absent when
//! none is left). A tombstone has none of them.
//!
//! `COMMENT#` < `LIKE#` < `POST#`: a member's comments, likes and posts are
//! three runs of one index partition, each in id order (ULIDs: a Query
//! descending reads it newest first).
//!
//! One file per kind: the [`keys`] of every item, the [`content`] items
//! (members, posts, comments, counts) and the [`moderation`] items.

mod content;
mod keys;
mod moderation;

pub(super) use content::*;
pub(super) use keys::*;
/// What the `notify` function's stream filter matches on (tools/sam-template).
pub use keys::{COMMENT_SK_PREFIX, DELETED_MEMBER_KIND, POST_PK_PREFIX, POST_SK};
pub(super) use moderation::*;
