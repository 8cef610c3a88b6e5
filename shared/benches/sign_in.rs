//! What the v4 sign-in rules cost the server (docs/benchmarks.md,
//! Passwords and TOTP): the blocklist's first lookup in a fresh process
//! (its pages are mapped from the binary on first touch: nothing is loaded
//! at start) and every later one, and a TOTP code check as a login runs it
//! (a generator for the secret, three steps tried). `cargo bench -p shared
//! --bench sign_in`; in the test run it does a few rounds only.

use std::time::{Duration, Instant};

use shared::domain::fields::blocklist;

/// Resident memory of this process, in KiB (Linux).
fn rss_kib() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    let pages: u64 = statm
        .split_whitespace()
        .nth(1)
        .and_then(|p| p.parse().ok())
        .unwrap_or(0);
    pages * 4
}

fn per_call(rounds: u32, mut f: impl FnMut(u32)) -> Duration {
    let started = Instant::now();
    for i in 0..rounds {
        f(i);
    }
    started.elapsed() / rounds
}

fn main() {
    let bench = std::env::args().any(|a| a == "--bench");
    let rounds = if bench { 200_000 } else { 100 };

    let before = rss_kib();
    let started = Instant::now();
    let listed = blocklist::is_common("password123");
    let first = started.elapsed();
    let after = rss_kib();
    assert!(listed);
    println!(
        "blocklist: {} passwords; first lookup {:.1} us, resident memory {} -> {} KiB (+{} KiB)",
        blocklist::len(),
        first.as_secs_f64() * 1e6,
        before,
        after,
        after.saturating_sub(before)
    );
    let words = [
        "password123",
        "qwerty123",
        "correct horse battery",
        "a rare passphrase 42",
        "iloveyou1",
    ];
    let lookup = per_call(rounds, |i| {
        std::hint::black_box(blocklist::is_common(words[i as usize % words.len()]));
    });
    println!(
        "blocklist: {:.2} us a lookup (NFKC, lower case, binary search)",
        lookup.as_secs_f64() * 1e6
    );

    // The alternative not taken: every password parsed into a set at start.
    let before = rss_kib();
    let started = Instant::now();
    let text = include_str!("../data/common-passwords.txt");
    let set: std::collections::HashSet<String> = text.lines().map(str::to_owned).collect();
    let built = started.elapsed();
    println!(
        "a HashSet of the list instead: {:.1} ms to build, +{} KiB resident ({} passwords)",
        built.as_secs_f64() * 1e3,
        rss_kib().saturating_sub(before),
        set.len()
    );
    drop(set);

    let secret = [7u8; 20];
    let now = 1_796_000_000u64;
    let check = per_call(rounds / 10, |i| {
        let totp = totp_rs::Builder::new()
            .with_secret(secret.to_vec())
            .with_account_name("kim")
            .with_issuer(Some("community-boards"))
            .build()
            .unwrap();
        std::hint::black_box(totp.check(if i % 2 == 0 { "123456" } else { "654321" }, now));
    });
    println!(
        "totp: {:.2} us a code check (a generator, up to three HMAC-SHA-1)",
        check.as_secs_f64() * 1e6
    );
}
