//! What screening for blocked words costs (docs/API.md, Hardening):
//! 3,000 blocked words against a 20,000-character body, plain Hangul beside
//! one of U+FDFA (18 characters each under NFKC), and beside a body of the
//! same length that does not fold at all. The audit measured 123-128 ms for
//! the expanded body before the single automaton; the goal is that it
//! costs no more than twice a plain one. Prints the ratio of medians from
//! one run, then criterion's figures.
//! `cargo bench -p shared --bench blocked_words`

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use shared::domain::BlockedWords;
use shared::domain::moderation::Screened;

const WORDS: usize = 3_000;
const BODY_CHARS: usize = 20_000;

fn words() -> BlockedWords {
    // Distinct Hangul and Latin words, none of which is in the bodies.
    let list: Vec<String> = (0..WORDS)
        .map(|i| {
            format!(
                "금지{}word{i:04}",
                char::from_u32(0xAC00 + (i as u32 % 11_000)).unwrap()
            )
        })
        .collect();
    BlockedWords::parse_list(&list.join(","))
}

fn bodies() -> [(&'static str, String); 3] {
    [
        ("plain Hangul", "가나다라마바사아자차".repeat(BODY_CHARS / 10)),
        ("plain ASCII", "abcdefghij".repeat(BODY_CHARS / 10)),
        ("expanded U+FDFA", "\u{FDFA}".repeat(BODY_CHARS)),
    ]
}

fn median_of(words: &BlockedWords, body: &str) -> Duration {
    let mut runs: Vec<Duration> = (0..15)
        .map(|_| {
            let started = Instant::now();
            let _ = black_box(words.check(Screened::PostBody, black_box(body)));
            started.elapsed()
        })
        .collect();
    runs.sort();
    runs[runs.len() / 2]
}

fn screening(c: &mut Criterion) {
    let words = words();
    let bodies = bodies();
    let plain = median_of(&words, &bodies[0].1);
    println!("blocked words: {WORDS} words, {BODY_CHARS}-character bodies, median of 15 each");
    for (name, body) in &bodies {
        let took = median_of(&words, body);
        println!(
            "  {name:<16} {:>8.2} ms  {:>5.2}x plain Hangul",
            took.as_secs_f64() * 1e3,
            took.as_secs_f64() / plain.as_secs_f64()
        );
    }
    let mut group = c.benchmark_group("blocked words (3,000) on a 20,000-character body");
    group.sample_size(10).measurement_time(Duration::from_secs(3));
    for (name, body) in &bodies {
        group.bench_function(*name, |b| b.iter(|| words.check(Screened::PostBody, black_box(body))));
    }
    group.finish();
}

criterion_group!(benches, screening);
criterion_main!(benches);
