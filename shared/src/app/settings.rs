//! The application's settings: the boards it serves and every limit
//! (docs/API.md, Throttling and quotas). Read from the environment by the
//! composition root; printed at start.

use std::fmt;

use super::throttle::Limits;
use crate::domain::{BlockedWords, Boards};

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AppSettings {
    pub boards: Boards,
    pub limits: Limits,
    /// (v3) `ADMIN_USERNAMES`: the members who are staff of every board.
    pub admins: Vec<String>,
    /// (v3) `BLOCKED_WORDS`.
    pub blocked_words: BlockedWords,
}

impl fmt::Display for AppSettings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "boards={}", self.boards.names().join(","))?;
        write!(f, " admins={}", self.admins.len())?;
        write!(f, " blocked_words={}", self.blocked_words.len())?;
        let mut limits = self.limits;
        for (name, limit) in limits.named() {
            match limit {
                Some(limit) => write!(f, " {}={limit}", name.to_ascii_lowercase())?,
                None => write!(f, " {}=off", name.to_ascii_lowercase())?,
            }
        }
        Ok(())
    }
}
