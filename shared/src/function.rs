//! The Lambda functions (docs/API.md, Routes), named as their binaries under
//! `functions/`, and what each needs from its deployment.

/// The Lambda functions, named as their binaries under `functions/`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Function {
    Signup,
    Login,
    Read,
    MemberWrite,
    GuestPost,
    GuestComment,
    Like,
    /// Staff routes and reports: tokens and tag keys, no hashing.
    Moderation,
    /// The `/members/me` routes: member hashing and tokens.
    Account,
    /// Image upload grants and their state; on Lambda also the
    /// check of each upload (S3 events) and the sweep (a schedule).
    Media,
}

impl Function {
    pub const ALL: [Function; 10] = [
        Function::Signup,
        Function::Login,
        Function::Read,
        Function::MemberWrite,
        Function::GuestPost,
        Function::GuestComment,
        Function::Like,
        Function::Moderation,
        Function::Account,
        Function::Media,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Function::Signup => "signup",
            Function::Login => "login",
            Function::Read => "read",
            Function::MemberWrite => "member-write",
            Function::GuestPost => "guest-post",
            Function::GuestComment => "guest-comment",
            Function::Like => "like",
            Function::Moderation => "moderation",
            Function::Account => "account",
            Function::Media => "media",
        }
    }

    /// What this function's routes use: a function that neither hashes nor
    /// handles tokens is given neither a pepper nor a JWT secret, and one
    /// that writes nothing on a board no tag key.
    pub fn needs(self) -> Needs {
        // `login` and `account` check and manage TOTP: only they hold its key.
        let totp = matches!(self, Function::Login | Function::Account);
        let (hashing, tokens, tags) = match self {
            // The tag key also derives the proof-of-work key, which
            // signup checks and `read` signs challenges with.
            Function::Signup => (true, false, true),
            Function::GuestPost | Function::GuestComment => (true, false, true),
            Function::Login | Function::Account => (true, true, false),
            Function::MemberWrite | Function::Like | Function::Moderation => (false, true, true),
            // A grant is a write on a board: the ban check and a
            // guest's owner key need the tag key, a member's the token.
            Function::Media => (false, true, true),
            // A bearer token on a read adds `my_vote` and shows staff
            // the dislikes a board hides.
            Function::Read => (false, true, true),
        };
        Needs {
            hashing,
            tokens,
            tags,
            totp,
        }
    }
}

/// Password hashing (tiers, pepper, gate), bearer tokens (JWT secret) and
/// writer keys (the tag key: every write is checked for bans).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Needs {
    pub hashing: bool,
    pub tokens: bool,
    pub tags: bool,
    /// The TOTP key (derived from the pepper unless `TOTP_KEY` is set).
    pub totp: bool,
}

impl Needs {
    pub fn of(functions: &[Function]) -> Self {
        functions.iter().fold(Needs::default(), |all, f| {
            let n = f.needs();
            Needs {
                hashing: all.hashing || n.hashing,
                tokens: all.tokens || n.tokens,
                tags: all.tags || n.tags,
                totp: all.totp || n.totp,
            }
        })
    }
}
