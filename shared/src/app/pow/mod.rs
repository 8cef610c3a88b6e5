//! Proof of work for anonymous writes (docs/API.md, Proof of work for
//! anonymous writes): a guest post, comment or vote, an anonymous
//! report or a signup may have to carry a solved ALTCHA challenge
//! ([`altcha`]) in `X-Pow`. The writer's device pays for it; the server
//! pays two SHA-256 and one conditional write to check and spend it.
//!
//! The gate runs after the field rules and bans and before every limit,
//! claim and hash, so a refused write costs no quota and no hash.

pub mod altcha;

use std::fmt;
use std::sync::Arc;

use futures_util::future::join_all;

use super::throttle::{self, Limit};
use super::{App, ClientAddress};
use crate::domain::{BoardSlug, Window};
use crate::error::ApiError;
use crate::store::AttemptKey;
pub use altcha::{Challenge, PowKey};

/// `POW`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PowMode {
    Off,
    Always,
    /// Free writes per address, then solutions; every write on a busy board.
    #[default]
    Auto,
}

impl PowMode {
    pub fn parse(value: &str) -> Result<Self, String> {
        match value.trim().to_ascii_lowercase().as_str() {
            "off" => Ok(PowMode::Off),
            "always" => Ok(PowMode::Always),
            "auto" => Ok(PowMode::Auto),
            other => Err(format!("POW must be off, always or auto; got {other:?}")),
        }
    }
}

impl fmt::Display for PowMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            PowMode::Off => "off",
            PowMode::Always => "always",
            PowMode::Auto => "auto",
        })
    }
}

/// About 0.2 s on average in a headless Chromium solving in a Web Worker
/// with the reference library (16.7 us a try; docs/benchmarks.md,
/// Proof of work), under 1 ms natively. The number is uniform over
/// `0..=maxnumber`, so a solver tries half of them on average.
pub const DEFAULT_MAXNUMBER: u64 = 20_000;

/// `POW`, `POW_FREE_WRITES`, `POW_BOARD_RATE`, `POW_MAXNUMBER`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PowSettings {
    pub mode: PowMode,
    /// Anonymous writes of a client address in 10 minutes that need no solution.
    pub free_writes: u64,
    /// Anonymous writes a minute on a board above which every one needs a solution.
    pub board_rate: u64,
    /// The difficulty of the challenges issued.
    pub maxnumber: u64,
}

impl Default for PowSettings {
    fn default() -> Self {
        PowSettings {
            mode: PowMode::Auto,
            free_writes: 5,
            board_rate: 60,
            maxnumber: DEFAULT_MAXNUMBER,
        }
    }
}

impl fmt::Display for PowSettings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "pow={} pow_free_writes={} pow_board_rate={} pow_maxnumber={}",
            self.mode, self.free_writes, self.board_rate, self.maxnumber
        )
    }
}

/// The window the free writes of an address are counted in.
const FREE_WRITES_WINDOW_SECS: i64 = 600;
/// The window a board's anonymous write rate is counted in.
const BOARD_RATE_WINDOW_SECS: i64 = 60;

/// An anonymous write at the gate: who sends it, on which board (none for a
/// signup), with what `X-Pow`.
#[derive(Debug, Clone, Copy)]
pub struct AnonymousWrite<'a> {
    pub client: &'a ClientAddress,
    pub board: Option<&'a BoardSlug>,
    pub proof: Option<&'a str>,
}

impl App {
    pub fn with_pow_key(mut self, key: PowKey) -> Self {
        self.pow_key = Some(Arc::new(key));
        self
    }

    fn pow_key(&self) -> Result<&PowKey, ApiError> {
        self.pow_key
            .as_deref()
            .ok_or_else(|| ApiError::Internal("this function was built without a proof-of-work key".into()))
    }

    /// `GET /challenge`: a fresh challenge at the configured difficulty.
    pub fn challenge(&self) -> Result<Challenge, ApiError> {
        Ok(self.pow_key()?.issue(throttle::unix_now(), self.pow.maxnumber))
    }

    /// Lets an anonymous write through, or answers `428 pow_required` with a
    /// fresh challenge. With `auto`, the write is counted first, per address
    /// and its /48 as the quotas are, whatever its proof: a client that keeps
    /// sending without one keeps its address asking for solutions. It is
    /// counted on its board too, but only a write that is accepted stays
    /// counted there: the answer is that count, which the caller keeps with
    /// its quota's reservation (kept on success, given back on any refusal),
    /// so unsolved or refused requests never make a board's writers solve.
    pub(crate) async fn require_pow(&self, write: AnonymousWrite<'_>) -> Result<throttle::Reservation, ApiError> {
        let (needed, counted) = match self.pow.mode {
            PowMode::Off => (false, throttle::Reservation::none()),
            PowMode::Always => (true, throttle::Reservation::none()),
            PowMode::Auto => self.count_anonymous_write(write).await?,
        };
        if !needed {
            return Ok(counted);
        }
        match self.check_proof(write).await {
            Ok(()) => Ok(counted),
            Err(refused) => {
                throttle::forgive(&*self.store, counted).await;
                Err(refused)
            }
        }
    }

    /// `write`'s `X-Pow`: a valid, unused solution of a challenge this
    /// deployment signed, spent here; else `428` with a fresh challenge.
    async fn check_proof(&self, write: AnonymousWrite<'_>) -> Result<(), ApiError> {
        let key = self.pow_key()?;
        let refused = |message: &str| {
            Ok::<_, ApiError>(ApiError::PowRequired {
                message: message.to_owned(),
                challenge: serde_json::to_value(self.challenge()?).map_err(|e| ApiError::Internal(e.to_string()))?,
            })
        };
        let Some(proof) = write.proof else {
            return Err(refused(
                "this write needs a proof of work: solve the challenge and send it in X-Pow",
            )?);
        };
        let now = throttle::unix_now();
        let verified = match altcha::parse_header(proof).and_then(|solution| key.verify(&solution, now)) {
            Ok(verified) => verified,
            Err(why) => return Err(refused(why.message())?),
        };
        if !self
            .store
            .spend_challenge(&verified.challenge, verified.expires_at)
            .await?
        {
            return Err(refused("X-Pow solves a challenge that was used already")?);
        }
        Ok(())
    }

    /// Counts the write on its address (and /48) and its board; whether one
    /// of them is over what is free, and the board's count (to give back
    /// unless the write is accepted).
    async fn count_anonymous_write(
        &self,
        write: AnonymousWrite<'_>,
    ) -> Result<(bool, throttle::Reservation), ApiError> {
        let now = throttle::unix_now();
        let free = Limit::new(self.pow.free_writes, FREE_WRITES_WINDOW_SECS);
        let mut keys = throttle::per_address_keys(&write.client.0, "pow:address:{address}", Some(free));
        let board_key = write.board.map(|board| {
            (
                AttemptKey(format!("pow:board:{board}")),
                Limit::new(self.pow.board_rate, BOARD_RATE_WINDOW_SECS),
            )
        });
        keys.extend(board_key.clone());
        let counts = join_all(keys.iter().map(|(key, limit)| async move {
            let window = Window::containing(now, limit.window_secs);
            self.store
                .record_failure(key, window)
                .await
                .map(|count| (key, window, count > limit.max))
        }))
        .await;
        let (mut over, mut board_count, mut failed) = (false, Vec::new(), None);
        for count in counts {
            match count {
                Ok((key, window, past)) => {
                    over |= past;
                    if board_key.as_ref().is_some_and(|(board, _)| board == key) {
                        board_count.push((key.clone(), window));
                    }
                }
                Err(e) => failed = Some(e),
            }
        }
        let counted = throttle::Reservation::of(board_count);
        if let Some(e) = failed {
            throttle::forgive(&*self.store, counted).await;
            return Err(e.into());
        }
        Ok((over, counted))
    }
}
