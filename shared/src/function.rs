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
}

impl Function {
    pub const ALL: [Function; 7] = [
        Function::Signup,
        Function::Login,
        Function::Read,
        Function::MemberWrite,
        Function::GuestPost,
        Function::GuestComment,
        Function::Like,
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
        }
    }

    /// What this function's routes use: a function that neither hashes nor
    /// handles tokens is given neither a pepper nor a JWT secret.
    pub fn needs(self) -> Needs {
        match self {
            Function::Signup | Function::GuestPost | Function::GuestComment => Needs {
                hashing: true,
                tokens: false,
            },
            Function::Login => Needs {
                hashing: true,
                tokens: true,
            },
            Function::MemberWrite | Function::Like => Needs {
                hashing: false,
                tokens: true,
            },
            Function::Read => Needs::default(),
        }
    }
}

/// Password hashing (tiers, pepper, gate) and bearer tokens (JWT secret).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Needs {
    pub hashing: bool,
    pub tokens: bool,
}

impl Needs {
    pub fn of(functions: &[Function]) -> Self {
        functions.iter().fold(Needs::default(), |all, f| {
            let n = f.needs();
            Needs {
                hashing: all.hashing || n.hashing,
                tokens: all.tokens || n.tokens,
            }
        })
    }
}
