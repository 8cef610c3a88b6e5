//! What each function may do and how it is sized: its DynamoDB actions,
//! its reserved concurrency, the read cache it runs with.

use shared::function::Function;
use shared::hashing::tier_file::TierFile;

/// The `read` function's cache: each execution environment reads a hot
/// post, board page and counts once a second instead of once per request
/// (docs/storage.md, "Single-table design").
pub const READ_CACHE_TTL_MS: u64 = 1_000;

/// DynamoDB actions each function needs, exactly those its code asks for
/// (a transaction needs the per-item actions of its parts).
/// `tests/iam.rs` runs every route of each function against DynamoDB
/// Local, records the actions, and fails when this table grants one more
/// or one less (docs/deploy.md, Permissions).
pub fn dynamodb_actions(function: Function) -> &'static [&'static str] {
    match function {
        // The signup quota (update), the username check and a key's claim
        // (get), the member and the claim (conditional put).
        Function::Signup => &["dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:UpdateItem"],
        // member_credentials, replace_password_hash, attempt counters; a
        // right TOTP code ends the account's run of wrong ones (delete).
        Function::Login => &["dynamodb:DeleteItem", "dynamodb:GetItem", "dynamodb:UpdateItem"],
        // view_post: the post (get) and its comments (query), the view on a
        // counter shard (update, conditioned on the post when it creates the
        // shard), the other shards (batch get); list_posts: query on GSI1.
        // The boards (query), and the first load of a cold start that
        // finds a board `BOARDS` names missing creates it (conditional put).
        Function::Read => &[
            "dynamodb:BatchGetItem",
            "dynamodb:ConditionCheckItem",
            "dynamodb:GetItem",
            "dynamodb:PutItem",
            "dynamodb:Query",
            "dynamodb:UpdateItem",
        ],
        // posts, comments (transaction: put + shard update + condition check),
        // the delete (the post, its shards and its purge marker: the purge
        // function deletes the children), the detail after an edit (its
        // comments: query; shards: batch get), keys' claims and releases.
        Function::MemberWrite => &[
            "dynamodb:BatchGetItem",
            "dynamodb:ConditionCheckItem",
            "dynamodb:DeleteItem",
            "dynamodb:GetItem",
            "dynamodb:PutItem",
            "dynamodb:Query",
            "dynamodb:UpdateItem",
        ],
        // The same for a guest's post, without a comment transaction.
        Function::GuestPost => &[
            "dynamodb:BatchGetItem",
            "dynamodb:DeleteItem",
            "dynamodb:GetItem",
            "dynamodb:PutItem",
            "dynamodb:Query",
            "dynamodb:UpdateItem",
        ],
        // The comment transaction (put + shard update + condition check),
        // the ban check (several subjects, the address and range keys:
        // one batch get), keys' claims. The boards: one query per
        // cold start (and a put where it seeds one).
        Function::GuestComment => &[
            "dynamodb:BatchGetItem",
            "dynamodb:ConditionCheckItem",
            "dynamodb:DeleteItem",
            "dynamodb:GetItem",
            "dynamodb:PutItem",
            "dynamodb:Query",
            "dynamodb:UpdateItem",
        ],
        // Staff routes and reports: moderators, bans and reports are
        // items of their own (get, query, put, update, delete), a removal is
        // the post delete (transaction) plus the log entry, a member or
        // comment by id is a query on ById. Children go by the purge function.
        Function::Moderation => &[
            "dynamodb:BatchGetItem",
            "dynamodb:ConditionCheckItem",
            "dynamodb:DeleteItem",
            "dynamodb:GetItem",
            "dynamodb:PutItem",
            "dynamodb:Query",
            "dynamodb:UpdateItem",
        ],
        // The member's own account: the member item (get, update), the
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
        // like/unlike transaction (put or delete + shard update, conditioned
        // on the post), the post's board (get), the likes of every shard (batch get).
        // Dislikes and guest votes the same way, the best gate (get,
        // and an update in the transaction); the boards: one query per
        // cold start (and a put where it seeds one).
        Function::Like => &[
            "dynamodb:BatchGetItem",
            "dynamodb:ConditionCheckItem",
            "dynamodb:DeleteItem",
            "dynamodb:GetItem",
            "dynamodb:PutItem",
            "dynamodb:Query",
            "dynamodb:UpdateItem",
        ],
        // Images: a grant is the board's settings (the boards: one
        // query per cold start), the ban check (batch get), the quotas
        // (update) and the upload's item with its marker (a transaction of
        // puts); its state is one get; a check one get and one conditional
        // update; the sweep queries the markers due, reads their uploads
        // (batch get) and deletes both (batch writes).
        Function::Media => &[
            "dynamodb:BatchGetItem",
            "dynamodb:BatchWriteItem",
            "dynamodb:GetItem",
            "dynamodb:PutItem",
            "dynamodb:Query",
            "dynamodb:UpdateItem",
        ],
    }
}

/// Whether a route-table function runs on the capacity provider in the
/// managed-instances template. `media` does not: it takes one event at
/// a time (an image check decodes up to 50 megapixels, memory it must not
/// share with other requests' checks), reaches S3, which the capacity
/// provider's VPC has no endpoint for, and is sized by `MediaMemory`; like
/// `purge` and `notify`, it is the same classic Lambda function in both templates.
pub fn on_capacity_provider(function: Function) -> bool {
    function != Function::Media
}

/// Whether a function reads an index: the board index (GSI1), or
/// `ById` (a member or a comment by its id, for appointments and bans),
/// or `ByOwner` (a member's own posts, comments and likes).
/// A post create reads the board index once per board (the first
/// number a board gives starts above its posts that have none yet).
pub(crate) fn uses_index(function: Function) -> bool {
    matches!(
        function,
        Function::Read | Function::Moderation | Function::Account | Function::MemberWrite | Function::GuestPost
    )
}

/// The hashing functions get reserved concurrency: a flood of password
/// attempts is capped in parallel invocations, so it cannot become an
/// unbounded bill (excess requests get 429 from Lambda, 503 to the client).
pub fn reserved_concurrency_default(function: Function) -> Option<u32> {
    match function {
        Function::Signup => Some(20),
        Function::Login => Some(50),
        // Password changes and deletions hash at the member tier too.
        Function::Account => Some(20),
        Function::GuestPost | Function::GuestComment => Some(30),
        _ => None,
    }
}

/// The hashing functions of each tier, `[(tier, [function names])]`, from
/// the tier file (the EMF `function` dimension is the function's name).
pub(crate) fn functions_by_tier(tiers: &TierFile) -> Vec<(&'static str, Vec<&str>)> {
    ["member", "guest"]
        .into_iter()
        .map(|tier| {
            let names = tiers
                .functions
                .iter()
                .filter(|(_, sizing)| sizing.tier.as_deref() == Some(tier))
                .map(|(name, _)| name.as_str())
                .collect();
            (tier, names)
        })
        .filter(|(_, names): &(_, Vec<&str>)| !names.is_empty())
        .collect()
}

/// Every function may send its spans to X-Ray's OTLP endpoint
/// (`TracesEndpoint`; docs/operations.md, Traces), which authorizes them as
/// `xray:PutTraceSegments`, an action with no resource to scope it to.
pub(crate) const TRACES_STATEMENT: &str = "            - Effect: Allow
              Action:
                - xray:PutTraceSegments
              Resource: '*'
";
