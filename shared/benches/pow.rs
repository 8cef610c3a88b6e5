//! What a proof of work costs the server (docs/security.md, Proof of work):
//! issuing a challenge and verifying a solution (two SHA-256 and an HMAC),
//! each timed over many rounds, beside what the client pays to solve one at
//! the default difficulty with a native solver. `cargo bench -p shared
//! --bench pow`; in the test run (`cargo test --all-targets`) it does a few
//! rounds only.

use std::time::{Duration, Instant};

use base64::Engine as _;
use sha2::{Digest, Sha256};
use shared::app::pow::altcha::{Solution, parse_header};
use shared::app::pow::{DEFAULT_MAXNUMBER, PowKey};

/// A native solver, as a bot would write it: the salt hashed once, each
/// number's digest compared as bytes, digits written without allocating.
fn solve(salt: &str, challenge: &str, max: u64) -> u64 {
    let target: Vec<u8> = (0..challenge.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&challenge[i..i + 2], 16).unwrap())
        .collect();
    let salted = Sha256::new().chain_update(salt);
    let mut digits = [0u8; 20];
    (0..=max)
        .find(|n| {
            let mut at = digits.len();
            let mut rest = *n;
            loop {
                at -= 1;
                digits[at] = b'0' + (rest % 10) as u8;
                rest /= 10;
                if rest == 0 {
                    break;
                }
            }
            salted.clone().chain_update(&digits[at..]).finalize().as_slice() == target.as_slice()
        })
        .expect("an issued challenge has a number")
}

fn per(total: Duration, rounds: u32) -> f64 {
    total.as_secs_f64() * 1e6 / f64::from(rounds)
}

fn main() {
    let benching = std::env::args().any(|a| a == "--bench");
    let (rounds, solves) = if benching { (20_000, 100) } else { (50, 2) };
    let key = PowKey::new(b"a proof-of-work key for the benchmark....");
    let now = 1_780_000_000;

    let started = Instant::now();
    let challenges: Vec<_> = (0..rounds).map(|_| key.issue(now, DEFAULT_MAXNUMBER)).collect();
    let issue = per(started.elapsed(), rounds);

    let mut solve_times = Vec::new();
    let mut headers = Vec::new();
    for challenge in challenges.iter().take(solves) {
        let started = Instant::now();
        let number = solve(&challenge.salt, &challenge.challenge, challenge.maxnumber);
        solve_times.push(started.elapsed());
        let payload = serde_json::json!({"algorithm": challenge.algorithm, "challenge": challenge.challenge,
            "number": number, "salt": challenge.salt, "signature": challenge.signature});
        headers.push(base64::engine::general_purpose::STANDARD.encode(payload.to_string()));
    }
    let solutions: Vec<Solution> = headers.iter().map(|h| parse_header(h).unwrap()).collect();
    let started = Instant::now();
    for i in 0..rounds {
        let header = &headers[i as usize % headers.len()];
        let solution = parse_header(header).unwrap();
        assert!(key.verify(&solution, now).is_ok());
    }
    let verify = per(started.elapsed(), rounds);
    assert_eq!(solutions.len(), solves);

    solve_times.sort();
    let mean = solve_times.iter().sum::<Duration>().as_secs_f64() * 1e3 / solve_times.len() as f64;
    let p90 = solve_times[solve_times.len() * 9 / 10].as_secs_f64() * 1e3;
    println!("| what | per operation |");
    println!("|---|---|");
    println!("| server: issue a challenge (`GET /challenge`) | {issue:.1} us |");
    println!("| server: parse and verify an `X-Pow` | {verify:.1} us |");
    println!(
        "| client: solve one at maxnumber {DEFAULT_MAXNUMBER} natively, one core (mean / P90 of {solves}) | {mean:.1} / {p90:.1} ms |"
    );
    println!("| ratio: client solve / server verify | {:.0}x |", mean * 1e3 / verify);
}
