//! ALTCHA v1 proof of work as a client pays it (docs/API.md, Proof of work
//! for anonymous writes): find the number whose SHA-256 of `salt + number`
//! is the challenge, then send it back as `X-Pow`. Native and single
//! threaded: what a bot pays, beside what a browser pays
//! (`scripts/pow-solve-times`).

use std::time::{Duration, Instant};

use base64::Engine as _;
use serde::Deserialize;
use sha2::{Digest, Sha256};

/// A challenge as `GET /challenge` (and a `428`'s `challenge`) carries it.
#[derive(Clone, Debug, Deserialize)]
pub(crate) struct Challenge {
    pub algorithm: String,
    pub challenge: String,
    pub salt: String,
    pub signature: String,
    pub maxnumber: u64,
}

/// A solved challenge: the number and how long the search took.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Solution {
    pub number: u64,
    pub took: Duration,
}

impl Challenge {
    /// Searches 0..=maxnumber as altcha-lib's `solveChallenge` does; `None`
    /// when no number matches (or the algorithm is not SHA-256, the only one
    /// the server issues).
    pub(crate) fn solve(&self) -> Option<Solution> {
        let started = Instant::now();
        if !self.algorithm.eq_ignore_ascii_case("SHA-256") {
            return None;
        }
        let target = decode_hex_32(&self.challenge)?;
        // The salt's bytes go in once; each number continues from a copy.
        let mut salted = Sha256::new();
        salted.update(self.salt.as_bytes());
        let mut digits = [0u8; 20];
        (0..=self.maxnumber)
            .find(|&number| {
                let mut hasher = salted.clone();
                hasher.update(decimal(number, &mut digits));
                hasher.finalize().as_slice() == target
            })
            .map(|number| Solution {
                number,
                took: started.elapsed(),
            })
    }

    /// The `X-Pow` header value for `solution`: standard base64 of the
    /// payload JSON altcha-lib v1's widget sends.
    pub(crate) fn x_pow(&self, solution: Solution) -> String {
        let payload = serde_json::json!({
            "algorithm": self.algorithm,
            "challenge": self.challenge,
            "number": solution.number,
            "salt": self.salt,
            "signature": self.signature,
            "took": solution.took.as_millis() as u64,
        });
        base64::engine::general_purpose::STANDARD.encode(payload.to_string())
    }
}

/// `number` in decimal, written into the end of `buffer` (no allocation
/// per try: the search runs this up to a million times).
fn decimal(mut number: u64, buffer: &mut [u8; 20]) -> &[u8] {
    let mut start = buffer.len();
    loop {
        start -= 1;
        buffer[start] = b'0' + (number % 10) as u8;
        number /= 10;
        if number == 0 {
            return &buffer[start..];
        }
    }
}

/// 64 hex digits (either case) as 32 bytes.
fn decode_hex_32(hex: &str) -> Option<[u8; 32]> {
    let hex = hex.as_bytes();
    if hex.len() != 64 {
        return None;
    }
    let nibble = |c: u8| (c as char).to_digit(16).map(|d| d as u8);
    let mut bytes = [0u8; 32];
    for (byte, pair) in bytes.iter_mut().zip(hex.chunks_exact(2)) {
        *byte = nibble(pair[0])? << 4 | nibble(pair[1])?;
    }
    Some(bytes)
}

/// A challenge for `number` made here as the server makes one (a random
/// salt with an expiry, the number hidden in the hash), unsigned: for
/// measuring solve times without a server.
pub(crate) fn local_challenge(number: u64, maxnumber: u64) -> Challenge {
    let salt_bytes: [u8; 12] = rand::random();
    let expires = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
        + 600;
    let salt = format!("{}?expires={expires}&", hex(&salt_bytes));
    Challenge {
        algorithm: "SHA-256".into(),
        challenge: hex(&Sha256::digest(format!("{salt}{number}"))),
        salt,
        signature: String::new(),
        maxnumber,
    }
}

/// Solve times of one difficulty, in milliseconds.
#[derive(Debug, serde::Serialize)]
pub(crate) struct SolveTimes {
    pub maxnumber: u64,
    pub challenges: usize,
    pub mean_ms: f64,
    pub p50_ms: f64,
    pub p90_ms: f64,
    pub max_ms: f64,
    /// CPU microseconds of one try, measured over the batch.
    pub us_per_try: f64,
}

/// Solves `challenges` local challenges of `maxnumber` one after another on
/// this thread, the number random in 0..=maxnumber as the server picks it.
///
/// A solve takes `number + 1` tries, each the same work, so each solve's
/// time is its tries times the CPU time of one try, measured over the
/// whole batch on this thread (wall time would count whatever else the
/// cores were doing).
pub(crate) fn solve_times(maxnumber: u64, challenges: usize) -> anyhow::Result<SolveTimes> {
    use rand::RngExt as _;
    anyhow::ensure!(challenges > 0, "at least one challenge");
    let made: Vec<(u64, Challenge)> = (0..challenges)
        .map(|_| {
            let number = rand::rng().random_range(0..=maxnumber);
            (number, local_challenge(number, maxnumber))
        })
        .collect();
    let cpu_before = crate::cpu::this_thread();
    let wall_before = Instant::now();
    for (number, challenge) in &made {
        let solution = challenge
            .solve()
            .ok_or_else(|| anyhow::anyhow!("no solution found for number {number}"))?;
        anyhow::ensure!(solution.number == *number, "solved as {} not {number}", solution.number);
    }
    let spent = match (cpu_before, crate::cpu::this_thread()) {
        (Some(before), Some(after)) => after.saturating_sub(before),
        _ => wall_before.elapsed(),
    };
    let tries: u64 = made.iter().map(|(number, _)| number + 1).sum();
    let ms_per_try = spent.as_secs_f64() * 1000.0 / tries as f64;
    let mut took_ms: Vec<f64> = made
        .iter()
        .map(|(number, _)| (number + 1) as f64 * ms_per_try)
        .collect();
    took_ms.sort_by(f64::total_cmp);
    Ok(SolveTimes {
        maxnumber,
        challenges,
        mean_ms: took_ms.iter().sum::<f64>() / challenges as f64,
        p50_ms: nearest_rank(&took_ms, 0.5),
        p90_ms: nearest_rank(&took_ms, 0.9),
        max_ms: took_ms[challenges - 1],
        us_per_try: ms_per_try * 1000.0,
    })
}

/// The nearest-rank percentile of sorted values.
fn nearest_rank(sorted: &[f64], quantile: f64) -> f64 {
    let rank = (quantile * sorted.len() as f64).ceil().max(1.0) as usize;
    sorted[rank.min(sorted.len()) - 1]
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_number_hidden_in_the_challenge() {
        for number in [0, 1, 9, 10, 4_321, 49_999] {
            let challenge = local_challenge(number, 50_000);
            assert_eq!(challenge.solve().map(|s| s.number), Some(number), "{challenge:?}");
        }
    }

    #[test]
    fn solves_a_challenge_altcha_lib_made() {
        // altcha-lib 2.8.0, v1: createChallenge({hmacKey: "k", number: 31337,
        // salt: "0123456789abcdef01234567", expires: 1900000000 s, maxnumber: 50000}).
        let challenge: Challenge = serde_json::from_str(
            r#"{"algorithm":"SHA-256","challenge":"cdbc488852a7f62268bcbcd1e615801afeba721fd8364a533c08dcd9e47bfc5a","maxnumber":50000,"salt":"0123456789abcdef01234567?expires=1900000000&","signature":"7125664bb7656633bb4239a7fcbaa6405c44a9f5b6d7608437a6994aab06286a"}"#,
        )
        .expect("a challenge");
        assert_eq!(challenge.solve().map(|s| s.number), Some(31_337));
    }

    #[test]
    fn maxnumber_is_the_last_number_tried() {
        let at_the_end = local_challenge(1_000, 1_000);
        assert_eq!(at_the_end.solve().map(|s| s.number), Some(1_000));
        let beyond = local_challenge(1_001, 1_000);
        assert!(beyond.solve().is_none());
    }

    #[test]
    fn an_upper_case_challenge_is_the_same_challenge() {
        let mut challenge = local_challenge(77, 100);
        challenge.challenge = challenge.challenge.to_uppercase();
        assert_eq!(challenge.solve().map(|s| s.number), Some(77));
    }

    #[test]
    fn refuses_what_it_cannot_solve() {
        let mut other_algorithm = local_challenge(5, 10);
        other_algorithm.algorithm = "SHA-512".into();
        assert!(other_algorithm.solve().is_none());
        let mut short = local_challenge(5, 10);
        short.challenge.pop();
        assert!(short.solve().is_none());
        let mut not_hex = local_challenge(5, 10);
        not_hex.challenge.replace_range(0..1, "g");
        assert!(not_hex.solve().is_none());
    }

    #[test]
    fn the_header_is_base64_of_the_altcha_payload() {
        let mut challenge = local_challenge(123, 1_000);
        challenge.signature = "a-signature".into();
        let solution = challenge.solve().expect("a solution");
        let decoded = base64::engine::general_purpose::STANDARD
            .decode(challenge.x_pow(solution))
            .expect("standard base64");
        let payload: serde_json::Value = serde_json::from_slice(&decoded).expect("JSON");
        assert_eq!(payload["algorithm"], "SHA-256");
        assert_eq!(payload["challenge"], challenge.challenge.as_str());
        assert_eq!(payload["number"], 123);
        assert_eq!(payload["salt"], challenge.salt.as_str());
        assert_eq!(payload["signature"], "a-signature");
        assert!(payload["took"].is_u64());
        // What the server recomputes from the payload is the challenge.
        let recomputed = hex(&Sha256::digest(format!(
            "{}{}",
            payload["salt"].as_str().unwrap(),
            payload["number"]
        )));
        assert_eq!(recomputed, challenge.challenge);
    }

    #[test]
    fn nearest_rank_percentiles() {
        let values: Vec<f64> = (1..=10).map(f64::from).collect();
        assert_eq!(nearest_rank(&values, 0.5), 5.0);
        assert_eq!(nearest_rank(&values, 0.9), 9.0);
        assert_eq!(nearest_rank(&values, 1.0), 10.0);
        assert_eq!(nearest_rank(&[3.0], 0.9), 3.0);
    }

    #[test]
    fn solve_times_are_ordered() {
        let times = solve_times(2_000, 20).expect("solved");
        assert_eq!((times.maxnumber, times.challenges), (2_000, 20));
        assert!(times.p50_ms <= times.p90_ms && times.p90_ms <= times.max_ms);
        assert!(times.mean_ms <= times.max_ms);
    }

    #[test]
    fn decimal_digits_match_the_formatter() {
        let mut buffer = [0u8; 20];
        for number in [0, 7, 10, 99, 100, 123_456, u64::MAX] {
            assert_eq!(decimal(number, &mut buffer), number.to_string().as_bytes());
        }
    }
}
