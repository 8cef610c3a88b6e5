//! Numbers a request names within bounds: ban durations and page sizes.

use crate::error::ApiError;

/// How long a ban lasts: 60 seconds to one year; `None` is permanent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BanDuration(Option<i64>);

impl BanDuration {
    pub const MIN_SECS: i64 = 60;
    pub const MAX_SECS: i64 = 31_536_000;

    pub fn parse(seconds: Option<i64>) -> Result<Self, ApiError> {
        match seconds {
            None => Ok(BanDuration(None)),
            Some(s) if (Self::MIN_SECS..=Self::MAX_SECS).contains(&s) => Ok(BanDuration(Some(s))),
            Some(_) => Err(ApiError::invalid(
                "duration_s",
                format_args!(
                    "must be {} to {} seconds, or null for a permanent ban",
                    Self::MIN_SECS,
                    Self::MAX_SECS
                ),
            )),
        }
    }

    pub fn seconds(self) -> Option<i64> {
        self.0
    }
}

/// A page size: 1-100; the default depends on what is listed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageLimit(usize);

pub const MAX_PAGE: usize = 100;

impl PageLimit {
    pub fn parse(s: Option<&str>, default: usize) -> Result<Self, ApiError> {
        match s {
            None => Ok(PageLimit(default)),
            Some(s) => match s.parse::<usize>() {
                Ok(n) if (1..=MAX_PAGE).contains(&n) => Ok(PageLimit(n)),
                _ => Err(ApiError::invalid(
                    "limit",
                    format_args!("must be a whole number from 1 to {MAX_PAGE}"),
                )),
            },
        }
    }

    pub fn get(self) -> usize {
        self.0
    }
}
