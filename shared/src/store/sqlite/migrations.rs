//! The schema: one migration per change, applied in order when the store
//! opens (`rusqlite_migration` records which ran).

use rusqlite_migration::M;

pub(super) const MIGRATIONS: &[M<'static>] = &[
    M::up(
        "CREATE TABLE members (
        id TEXT PRIMARY KEY,
        username TEXT NOT NULL UNIQUE,
        nickname TEXT NOT NULL,
        password_hash TEXT NOT NULL,
        created_at TEXT NOT NULL
    );
    CREATE TABLE posts (
        id TEXT PRIMARY KEY,
        board TEXT NOT NULL,
        title TEXT NOT NULL,
        body TEXT NOT NULL,
        author_kind TEXT NOT NULL CHECK (author_kind IN ('member', 'guest')),
        author_nickname TEXT NOT NULL,
        author_member_id TEXT,
        guest_password_hash TEXT,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        view_count INTEGER NOT NULL DEFAULT 0,
        like_count INTEGER NOT NULL DEFAULT 0,
        comment_count INTEGER NOT NULL DEFAULT 0
    );
    CREATE INDEX posts_by_board ON posts (board, id DESC);
    CREATE TABLE comments (
        id TEXT PRIMARY KEY,
        post_id TEXT NOT NULL REFERENCES posts (id) ON DELETE CASCADE,
        parent_id TEXT,
        body TEXT NOT NULL,
        author_kind TEXT NOT NULL CHECK (author_kind IN ('member', 'guest')),
        author_nickname TEXT NOT NULL,
        author_member_id TEXT,
        guest_password_hash TEXT,
        created_at TEXT NOT NULL
    );
    CREATE INDEX comments_by_post ON comments (post_id, id);
    CREATE TABLE likes (
        post_id TEXT NOT NULL REFERENCES posts (id) ON DELETE CASCADE,
        member_id TEXT NOT NULL,
        PRIMARY KEY (post_id, member_id)
    ) WITHOUT ROWID;
    CREATE TABLE attempts (
        key TEXT NOT NULL,
        window_start INTEGER NOT NULL,
        count INTEGER NOT NULL,
        expires_at INTEGER NOT NULL,
        PRIMARY KEY (key, window_start)
    ) WITHOUT ROWID;
    CREATE INDEX attempts_by_expiry ON attempts (expires_at);",
    ),
    // Idempotency records (docs/API.md, Idempotent creates): `status` and
    // `body` stay NULL while the claiming request runs.
    M::up(
        "CREATE TABLE idempotency (
        key TEXT PRIMARY KEY,
        fingerprint TEXT NOT NULL,
        token TEXT NOT NULL,
        lease_until INTEGER NOT NULL,
        expires_at INTEGER NOT NULL,
        status INTEGER,
        body TEXT
    ) WITHOUT ROWID;
    CREATE INDEX idempotency_by_expiry ON idempotency (expires_at);",
    ),
    // Moderation (docs/API.md, Roles and moderation; Guest tag): every
    // post and comment keeps its writer's address key (a keyed hash, never
    // the address); moderators, bans, open reports with their distinct
    // reporters, and the public log. A resolved report is deleted.
    M::up(
        "ALTER TABLE posts ADD COLUMN writer_key TEXT;
    ALTER TABLE comments ADD COLUMN writer_key TEXT;
    CREATE TABLE moderators (
        board TEXT NOT NULL,
        member_id TEXT NOT NULL REFERENCES members (id),
        appointed TEXT NOT NULL,
        PRIMARY KEY (board, member_id)
    ) WITHOUT ROWID;
    CREATE TABLE bans (
        id TEXT PRIMARY KEY,
        board TEXT NOT NULL,
        subject TEXT NOT NULL,
        ban TEXT NOT NULL,
        expires INTEGER
    );
    CREATE UNIQUE INDEX bans_by_subject ON bans (board, subject);
    CREATE INDEX bans_by_board ON bans (board, id);
    CREATE TABLE reports (
        id TEXT PRIMARY KEY,
        board TEXT NOT NULL,
        post_id TEXT NOT NULL,
        target TEXT NOT NULL UNIQUE,
        report TEXT NOT NULL,
        reporters INTEGER NOT NULL
    );
    CREATE INDEX reports_by_board ON reports (board, id);
    CREATE INDEX reports_by_post ON reports (post_id);
    CREATE TABLE reporters (
        report_id TEXT NOT NULL REFERENCES reports (id) ON DELETE CASCADE,
        reporter TEXT NOT NULL,
        PRIMARY KEY (report_id, reporter)
    ) WITHOUT ROWID;
    CREATE TABLE modlog (
        id TEXT PRIMARY KEY,
        board TEXT NOT NULL,
        entry TEXT NOT NULL
    );
    CREATE INDEX modlog_by_board ON modlog (board, id);",
    ),
    // Accounts (docs/API.md, Accounts): the session epoch every token
    // carries; a deleted account keeps its row (the username stays taken)
    // with `deleted_at` set and its credentials blanked; what a deletion
    // still has to do; and the indexes by author and by liker that serve
    // the member's own listings and the deletion. A post or comment whose
    // author deleted their account keeps `author_kind` 'member' with no
    // `author_member_id` (the kind's CHECK cannot change without rebuilding
    // the tables): rows.rs reads that as `deleted_member`.
    M::up(
        "ALTER TABLE members ADD COLUMN session_epoch INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE members ADD COLUMN deleted_at TEXT;
    CREATE TABLE account_deletions (
        member_id TEXT PRIMARY KEY,
        delete_content INTEGER NOT NULL,
        started TEXT NOT NULL
    ) WITHOUT ROWID;
    CREATE INDEX posts_by_author ON posts (author_member_id, id) WHERE author_member_id IS NOT NULL;
    CREATE INDEX comments_by_author ON comments (author_member_id, id) WHERE author_member_id IS NOT NULL;
    CREATE INDEX likes_by_member ON likes (member_id);",
    ),
    // Hardening (docs/API.md): every post and comment keeps the key of
    // its writer's range too (the IPv4 /24 or IPv6 /48 under the tag key),
    // which a `"range"` ban names; a ban keeps a second subject (guest
    // writes from where a banned member's post was written).
    M::up(
        "ALTER TABLE posts ADD COLUMN writer_range TEXT;
    ALTER TABLE comments ADD COLUMN writer_range TEXT;
    ALTER TABLE bans ADD COLUMN also_subject TEXT;
    CREATE INDEX bans_by_also_subject ON bans (board, also_subject) WHERE also_subject IS NOT NULL;",
    ),
    // Boards v4 (docs/API.md, Boards, Categories, Votes and best posts):
    // board settings (JSON, seeded at start from `BOARDS`), each board's
    // number counter and live post count (kept by the triggers, whatever
    // path inserts or deletes a post), post numbers, categories, dislikes
    // and the best mark (0 no, 1 best, 2 taken out by staff: never again),
    // a member's vote (a like row says which), guests' votes. Pre-v4 posts
    // are numbered here once, per board in creation order (ids are ULIDs),
    // before any v4 create can take a number.
    M::up(
        "CREATE TABLE boards (
        slug TEXT PRIMARY KEY,
        settings TEXT NOT NULL
    ) WITHOUT ROWID;
    CREATE TABLE board_counters (
        board TEXT PRIMARY KEY,
        last_number INTEGER NOT NULL DEFAULT 0,
        post_count INTEGER NOT NULL DEFAULT 0
    ) WITHOUT ROWID;
    ALTER TABLE posts ADD COLUMN number INTEGER;
    ALTER TABLE posts ADD COLUMN category TEXT;
    ALTER TABLE posts ADD COLUMN dislike_count INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE posts ADD COLUMN best INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE likes ADD COLUMN vote TEXT NOT NULL DEFAULT 'like' CHECK (vote IN ('like', 'dislike'));
    CREATE TABLE guest_votes (
        post_id TEXT NOT NULL REFERENCES posts (id) ON DELETE CASCADE,
        voter TEXT NOT NULL,
        vote TEXT NOT NULL CHECK (vote IN ('like', 'dislike')),
        PRIMARY KEY (post_id, voter)
    ) WITHOUT ROWID;
    UPDATE posts SET number = (
        SELECT n FROM (SELECT id, ROW_NUMBER() OVER (PARTITION BY board ORDER BY id) AS n FROM posts) AS numbered
        WHERE numbered.id = posts.id
    ) WHERE number IS NULL;
    INSERT INTO board_counters (board, last_number, post_count)
        SELECT board, MAX(number), COUNT(*) FROM posts GROUP BY board;
    CREATE UNIQUE INDEX posts_by_number ON posts (board, number);
    CREATE INDEX posts_by_category ON posts (board, category, id) WHERE category IS NOT NULL;
    CREATE INDEX posts_best ON posts (board, id) WHERE best = 1;
    CREATE TRIGGER posts_counted AFTER INSERT ON posts BEGIN
        INSERT INTO board_counters (board, last_number, post_count) VALUES (NEW.board, COALESCE(NEW.number, 0), 1)
        ON CONFLICT (board) DO UPDATE SET
            last_number = MAX(last_number, COALESCE(NEW.number, 0)),
            post_count = post_count + 1;
    END;
    CREATE TRIGGER posts_uncounted AFTER DELETE ON posts BEGIN
        UPDATE board_counters SET post_count = post_count - 1 WHERE board = OLD.board;
    END;",
    ),
    // Edit history: the versions edits replaced (the newest 50 are
    // kept; `edits` numbers them), and spent proof-of-work challenges,
    // forgotten once they expire.
    M::up(
        "CREATE TABLE post_revisions (
        post_id TEXT NOT NULL REFERENCES posts (id) ON DELETE CASCADE,
        seq INTEGER NOT NULL,
        title TEXT NOT NULL,
        body TEXT NOT NULL,
        edited_at TEXT NOT NULL,
        PRIMARY KEY (post_id, seq)
    ) WITHOUT ROWID;
    ALTER TABLE posts ADD COLUMN edits INTEGER NOT NULL DEFAULT 0;
    CREATE TABLE spent_challenges (
        challenge TEXT PRIMARY KEY,
        expires_at INTEGER NOT NULL
    ) WITHOUT ROWID;
    CREATE INDEX spent_challenges_by_expiry ON spent_challenges (expires_at);",
    ),
    // TOTP on the member's row: the sealed secret (NULL: none), whether
    // it is confirmed, the last time step accepted, and the recovery codes'
    // hashes (a JSON array).
    M::up(
        "ALTER TABLE members ADD COLUMN totp_secret TEXT;
    ALTER TABLE members ADD COLUMN totp_confirmed INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE members ADD COLUMN totp_last_step INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE members ADD COLUMN totp_recovery TEXT NOT NULL DEFAULT '[]';",
    ),
    // Notifications (`id` a ULID: newer is greater; read when at most
    // the member's `read_upto`), the texts that notified (withdrawn ones
    // stay until they expire, so a late add of one changes nothing), and
    // blocks (`blocked` is `member:<id>` or `guest:<tag>`; a member's names
    // as they were when blocked).
    M::up(
        "CREATE TABLE notifications (
        id TEXT PRIMARY KEY,
        member_id TEXT NOT NULL,
        text_id TEXT NOT NULL,
        post_id TEXT NOT NULL,
        board TEXT NOT NULL,
        comment_id TEXT,
        kind TEXT NOT NULL,
        actor TEXT NOT NULL,
        excerpt TEXT NOT NULL,
        created_at TEXT NOT NULL
    ) WITHOUT ROWID;
    CREATE INDEX notifications_by_member ON notifications (member_id, id);
    CREATE INDEX notifications_by_text ON notifications (text_id);
    CREATE INDEX notifications_by_post ON notifications (post_id);
    CREATE TABLE notified_texts (
        text_id TEXT PRIMARY KEY,
        post_id TEXT NOT NULL,
        withdrawn INTEGER NOT NULL,
        created_at TEXT NOT NULL
    ) WITHOUT ROWID;
    CREATE INDEX notified_texts_by_post ON notified_texts (post_id);
    CREATE INDEX notified_texts_by_age ON notified_texts (created_at);
    CREATE TABLE notification_marks (
        member_id TEXT PRIMARY KEY,
        read_upto TEXT NOT NULL
    ) WITHOUT ROWID;
    CREATE TABLE blocks (
        member_id TEXT NOT NULL,
        blocked TEXT NOT NULL,
        username TEXT,
        nickname TEXT,
        member_created_at TEXT,
        created_at TEXT NOT NULL,
        seq INTEGER NOT NULL,
        PRIMARY KEY (member_id, blocked)
    ) WITHOUT ROWID;",
    ),
    // Images (docs/API.md, Images): one row per upload grant; what its
    // check found once it is ready; the post or comment it is attached to.
    // The partial index serves the sweep of uploads never attached.
    M::up(
        "CREATE TABLE media (
        id TEXT PRIMARY KEY,
        board TEXT NOT NULL,
        owner TEXT NOT NULL,
        declared TEXT NOT NULL,
        bytes INTEGER NOT NULL,
        created_at TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('pending', 'ready', 'rejected')),
        content_type TEXT,
        width INTEGER,
        height INTEGER,
        stored_bytes INTEGER,
        thumbnail_type TEXT,
        reason TEXT,
        attached_to TEXT
    ) WITHOUT ROWID;
    CREATE INDEX media_unattached ON media (created_at) WHERE attached_to IS NULL;",
    ),
    // 11: attaching images. Posts and comments keep their images
    // (`media`, JSON: domain::media::to_stored) and posts their count for
    // list pages; an upload names the post it is attached under (the
    // post's own id, or its comment's post) so a post's delete finds its
    // comments' images too; `due_at` is when the sweep deletes an upload
    // attached nowhere (24 hours after its grant, at once when what it was
    // attached to is deleted), and replaces the index on `created_at`.
    M::up(
        "ALTER TABLE posts ADD COLUMN media TEXT;
    ALTER TABLE posts ADD COLUMN media_count INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE comments ADD COLUMN media TEXT;
    ALTER TABLE media ADD COLUMN attached_post TEXT;
    ALTER TABLE media ADD COLUMN due_at TEXT;
    UPDATE media SET due_at = strftime('%Y-%m-%dT%H:%M:%fZ', created_at, '+24 hours') WHERE attached_to IS NULL;
    DROP INDEX media_unattached;
    CREATE INDEX media_due ON media (due_at) WHERE attached_to IS NULL;
    CREATE INDEX media_attached ON media (attached_post) WHERE attached_post IS NOT NULL;",
    ),
    // 12: a revision may be deleted by itself, so a post counts the
    // revisions it keeps (`revision_count`) rather than taking its edits;
    // a closed account's unattached uploads are found by their owner.
    M::up(
        "ALTER TABLE posts ADD COLUMN revisions INTEGER NOT NULL DEFAULT 0;
    UPDATE posts SET revisions = (SELECT COUNT(*) FROM post_revisions WHERE post_id = posts.id);
    CREATE INDEX media_unattached_by_owner ON media (owner) WHERE attached_to IS NULL;",
    ),
];
