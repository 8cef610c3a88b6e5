//! What each function may do and how it is sized: its DynamoDB actions,
//! its reserved concurrency, the read cache it runs with.

use shared::function::Function;

/// The `read` function's cache: each execution environment reads a hot
/// post, board page and counts once a second instead of once per request
/// (docs/storage.md, "Single-table design").
pub const READ_CACHE_TTL_MS: u64 = 1_000;

/// DynamoDB actions each function needs, from what its handlers call in the
/// adapter (transactions need the per-item actions of their parts).
pub fn dynamodb_actions(function: Function) -> &'static [&'static str] {
    match function {
        // create_member: conditional put.
        Function::Signup => &["dynamodb:PutItem"],
        // member_credentials, replace_password_hash, attempt counters.
        Function::Login => &["dynamodb:GetItem", "dynamodb:UpdateItem"],
        // view_post: the post (get) and its comments (query), the view on a
        // counter shard (update, which also creates the shard), the other
        // shards (batch get); list_posts: query on GSI1 and the shards.
        Function::Read => &[
            "dynamodb:GetItem",
            "dynamodb:Query",
            "dynamodb:UpdateItem",
            "dynamodb:BatchGetItem",
        ],
        // posts, comments (transaction: put + shard update + condition check),
        // delete with shards and children, the detail after an edit (shards).
        Function::MemberWrite => &[
            "dynamodb:BatchGetItem",
            "dynamodb:PutItem",
            "dynamodb:GetItem",
            "dynamodb:UpdateItem",
            "dynamodb:DeleteItem",
            "dynamodb:ConditionCheckItem",
            "dynamodb:Query",
            "dynamodb:BatchWriteItem",
        ],
        Function::GuestPost => &[
            "dynamodb:BatchGetItem",
            "dynamodb:PutItem",
            "dynamodb:GetItem",
            "dynamodb:UpdateItem",
            "dynamodb:DeleteItem",
            "dynamodb:Query",
            "dynamodb:BatchWriteItem",
        ],
        Function::GuestComment => &[
            "dynamodb:PutItem",
            "dynamodb:GetItem",
            "dynamodb:UpdateItem",
            "dynamodb:DeleteItem",
            "dynamodb:ConditionCheckItem",
        ],
        // (v3) Staff routes and reports: moderators, bans and reports are
        // items of their own (get, query, put, update, delete), removals are
        // the post delete's two steps plus the log entry (transaction,
        // batch write), a member or comment by id is a query on ById.
        Function::Moderation => &[
            "dynamodb:BatchGetItem",
            "dynamodb:BatchWriteItem",
            "dynamodb:ConditionCheckItem",
            "dynamodb:DeleteItem",
            "dynamodb:GetItem",
            "dynamodb:PutItem",
            "dynamodb:Query",
            "dynamodb:UpdateItem",
        ],
        // (v3) The member's own account: the member item (get, update), the
        // deletion's step 1 (a transaction of update, put and deletes), its
        // step 2 (the index by owner, the post purge's batch writes, the
        // comment delete and unlike transactions), `ById` for the member.
        Function::Account => &[
            "dynamodb:BatchGetItem",
            "dynamodb:BatchWriteItem",
            "dynamodb:ConditionCheckItem",
            "dynamodb:DeleteItem",
            "dynamodb:GetItem",
            "dynamodb:PutItem",
            "dynamodb:Query",
            "dynamodb:UpdateItem",
        ],
        // like/unlike transaction (put or delete + shard update), the post's
        // board before a shard's first write (get), the likes of every shard (batch get).
        Function::Like => &[
            "dynamodb:PutItem",
            "dynamodb:DeleteItem",
            "dynamodb:UpdateItem",
            "dynamodb:GetItem",
            "dynamodb:BatchGetItem",
        ],
    }
}

/// Whether a function reads an index: the board index (GSI1), or (v3)
/// `ById` (a member or a comment by its id, for appointments and bans),
/// or (v3) `ByOwner` (a member's own posts, comments and likes).
pub(crate) fn uses_index(function: Function) -> bool {
    matches!(function, Function::Read | Function::Moderation | Function::Account)
}

/// The hashing functions get reserved concurrency: a flood of password
/// attempts is capped in parallel invocations, so it cannot become an
/// unbounded bill (excess requests get 429 from Lambda, 503 to the client).
pub fn reserved_concurrency_default(function: Function) -> Option<u32> {
    match function {
        Function::Signup => Some(20),
        Function::Login => Some(50),
        // (v3) Password changes and deletions hash at the member tier too.
        Function::Account => Some(20),
        Function::GuestPost | Function::GuestComment => Some(30),
        _ => None,
    }
}
