//! `cargo run --release -p bcrypt-compare -- --costs 8,10`: times the Rust
//! bcrypt crate, libxcrypt and the batch engine (`hashing::batch`,
//! alone and in batches of k) on the same passwords and salts, interleaved so
//! machine noise hits all alike, checks that they agree, and prints the ratios.

mod libxcrypt;

use std::time::Instant;

use clap::Parser;
use hashing::batch::{self, BcryptInput};

#[derive(Parser)]
struct Cli {
    /// bcrypt costs to compare.
    #[arg(long, value_delimiter = ',', default_values_t = [8, 10])]
    costs: Vec<u32>,
    /// Rounds per cost: each times every side once, in an order rotated per round.
    #[arg(long, default_value_t = 31)]
    samples: usize,
    /// Batch sizes for the engine: 1 is its scalar kernel (`digest_one`),
    /// more its SIMD batch (`digest_many`) of that many distinct inputs.
    #[arg(long, value_delimiter = ',', default_values_t = [1, 2, 4, 8, 16])]
    ks: Vec<usize>,
    /// Run only one side (for profiling): `rust`, `c` or `engine`.
    #[arg(long)]
    only: Option<String>,
}

fn median(mut v: Vec<f64>) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn p95(mut v: Vec<f64>) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(f64::total_cmp);
    v[((v.len() as f64 * 0.95).ceil() as usize).clamp(1, v.len()) - 1]
}

/// The `i`th of the distinct inputs a cost is measured with: its password
/// and a fixed salt (the same every run, so runs compare).
fn input(i: usize, cost: u32) -> (String, [u8; 16]) {
    let password = if i == 0 {
        "correct horse battery staple".to_owned()
    } else {
        format!("correct horse battery staple #{i}")
    };
    let salt = std::array::from_fn(|j| (i as u8).wrapping_mul(37) ^ (j as u8).wrapping_mul(11) ^ (cost as u8));
    (password, salt)
}

/// The `$2b$` strings the crate computes for `passwords`, after checking
/// that libxcrypt and the engine (alone, and in a batch of each of `ks`)
/// give the same.
fn check_agreement(
    c: &mut libxcrypt::Crypt,
    cost: u32,
    passwords: &[(String, [u8; 16])],
    ks: &[usize],
) -> anyhow::Result<Vec<String>> {
    let mut expected = Vec::new();
    let inputs: Vec<BcryptInput> = passwords
        .iter()
        .map(|(p, salt)| BcryptInput::with_salt(cost, *salt, p.as_bytes().to_vec()))
        .collect();
    for ((password, salt), input) in passwords.iter().zip(&inputs) {
        let reference = bcrypt::hash_with_salt(password, cost, *salt)?.format_for_version(bcrypt::Version::TwoB);
        anyhow::ensure!(
            c.hash(password, &reference)? == reference,
            "libxcrypt and the bcrypt crate disagree at cost {cost} on {password:?}"
        );
        let one = batch::hash_string(&batch::digest_one(input)?);
        anyhow::ensure!(
            one == reference,
            "digest_one and the bcrypt crate disagree at cost {cost} on {password:?}: {one} != {reference}"
        );
        expected.push(reference);
    }
    for &k in ks.iter().filter(|&&k| k > 1) {
        let refs: Vec<&BcryptInput> = inputs[..k].iter().collect();
        let got: Vec<String> = batch::digest_many(&refs)?.iter().map(batch::hash_string).collect();
        anyhow::ensure!(
            got == expected[..k],
            "digest_many of {k} and the bcrypt crate disagree at cost {cost}"
        );
    }
    Ok(expected)
}

/// One side of the comparison.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Side {
    Crate,
    C,
    /// The engine on `k` inputs (1: `digest_one`).
    Engine(usize),
}

/// The value of the first `/proc/cpuinfo` line whose key is `key`.
fn cpuinfo(key: &str) -> Option<String> {
    let info = std::fs::read_to_string("/proc/cpuinfo").ok()?;
    info.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        (k.trim() == key).then(|| v.trim().to_owned())
    })
}

fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    anyhow::ensure!(cli.samples > 0, "--samples must be at least 1");
    anyhow::ensure!(cli.ks.iter().all(|&k| k >= 1), "--ks must be batch sizes of at least 1");
    let (run_crate, run_c, run_engine) = match cli.only.as_deref() {
        None => (true, true, true),
        Some("rust") => (true, false, false),
        Some("c") => (false, true, false),
        Some("engine") => (false, false, true),
        Some(other) => anyhow::bail!("--only takes rust, c or engine, not {other:?}"),
    };
    let max_k = cli.ks.iter().copied().max().unwrap_or(1);

    // The first call resolves the crate's backend (with its one-time
    // AVX2/AVX-512 shootout in optimized builds), before any timing.
    let backend = batch::backend_name();
    let lanes = batch::backend_lanes();
    let flags = cpuinfo("flags").unwrap_or_default();
    let has = |flag: &str| {
        if flags.split_whitespace().any(|f| f == flag) {
            "yes"
        } else {
            "no"
        }
    };
    println!("CPU: {}", cpuinfo("model name").unwrap_or_else(|| "unknown".to_owned()));
    println!("avx2: {}, avx512f: {}", has("avx2"), has("avx512f"));
    println!(
        "batch engine backend: {backend} ({lanes} lanes){}",
        std::env::var("BCRYPT_FORCE_BACKEND")
            .map(|b| format!(", forced by BCRYPT_FORCE_BACKEND={b}"))
            .unwrap_or_default()
    );
    println!();

    let mut c = libxcrypt::Crypt::new();
    let mut single_rows = Vec::new();
    let mut batch_rows = Vec::new();
    for &cost in &cli.costs {
        let passwords: Vec<(String, [u8; 16])> = (0..max_k).map(|i| input(i, cost)).collect();
        let expected = check_agreement(&mut c, cost, &passwords, &cli.ks)?;
        let (password, salt) = &passwords[0];
        let setting = &expected[0];
        let inputs: Vec<BcryptInput> = passwords
            .iter()
            .map(|(p, salt)| BcryptInput::with_salt(cost, *salt, p.as_bytes().to_vec()))
            .collect();

        let mut sides = Vec::new();
        if run_crate {
            sides.push(Side::Crate);
        }
        if run_c {
            sides.push(Side::C);
        }
        if run_engine {
            sides.extend(cli.ks.iter().map(|&k| Side::Engine(k)));
        }
        let mut times: Vec<Vec<f64>> = vec![Vec::new(); sides.len()];
        for round in 0..cli.samples + 1 {
            // Round 0 is a warm-up; each round starts one side further on.
            for n in 0..sides.len() {
                let index = (round + n) % sides.len();
                let side = sides[index];
                let t = Instant::now();
                match side {
                    Side::Crate => {
                        std::hint::black_box(bcrypt::hash_with_salt(std::hint::black_box(password), cost, *salt)?);
                    }
                    Side::C => {
                        std::hint::black_box(c.hash(std::hint::black_box(password), setting)?);
                    }
                    Side::Engine(1) => {
                        std::hint::black_box(batch::digest_one(std::hint::black_box(&inputs[0]))?);
                    }
                    Side::Engine(k) => {
                        let refs: Vec<&BcryptInput> = inputs[..k].iter().collect();
                        std::hint::black_box(batch::digest_many(std::hint::black_box(&refs))?);
                    }
                }
                let ms = t.elapsed().as_secs_f64() * 1e3;
                if round > 0 {
                    times[index].push(ms);
                }
            }
        }
        let of = |wanted: Side| {
            sides
                .iter()
                .position(|&s| s == wanted)
                .map(|i| times[i].clone())
                .unwrap_or_default()
        };
        let (crate_ms, c_ms) = (of(Side::Crate), of(Side::C));
        let (rm, cm) = (median(crate_ms.clone()), median(c_ms.clone()));
        single_rows.push(format!(
            "| {cost} | {rm:.2} | {:.2} | {cm:.2} | {:.2} | {:.3} |",
            p95(crate_ms),
            p95(c_ms),
            rm / cm
        ));
        for &k in &cli.ks {
            let ms = of(Side::Engine(k));
            let (bm, bp) = (median(ms.clone()), p95(ms));
            let per_second = k as f64 / (bm / 1e3);
            batch_rows.push(format!(
                "| {cost} | {k} | {} | {bm:.2} | {bp:.2} | {bm:.2} | {per_second:.1} | {:.2} | {:.2} |",
                if k == 1 { "digest_one" } else { "digest_many" },
                per_second / (1e3 / rm),
                per_second / (1e3 / cm),
            ));
        }
    }

    println!("| cost | Rust bcrypt crate median ms | P95 | libxcrypt (C) median ms | P95 | ratio Rust/C (median) |");
    println!("|---:|---:|---:|---:|---:|---:|");
    for row in &single_rows {
        println!("{row}");
    }
    println!();
    println!(
        "| cost | k | engine call | batch median ms | P95 | latency per hash ms | hashes/s | × bcrypt crate | × libxcrypt |"
    );
    println!("|---:|---:|---|---:|---:|---:|---:|---:|---:|");
    for row in &batch_rows {
        println!("{row}");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::libxcrypt::Crypt;
    use super::{check_agreement, input};

    #[test]
    fn libxcrypt_and_the_crate_produce_the_same_hash() {
        let mut c = Crypt::new();
        for (password, cost) in [("correct horse battery staple", 4), ("한국어 비밀번호", 5)] {
            let rust = bcrypt::hash(password, cost).unwrap();
            assert_eq!(c.hash(password, &rust).unwrap(), rust);
            assert!(c.hash("wrong", &rust).unwrap() != rust);
        }
    }

    #[test]
    fn the_engine_alone_and_in_batches_agrees_with_the_crate_and_libxcrypt() {
        let mut c = Crypt::new();
        for cost in [4, 5] {
            // bcrypt-rust runs a batch of one or two on its scalar kernel;
            // four reach the SIMD kernel on every backend.
            let mut passwords: Vec<_> = (0..4).map(|i| input(i, cost)).collect();
            passwords[1].0 = "한국어 비밀번호".to_owned();
            let hashes = check_agreement(&mut c, cost, &passwords, &[1, 2, 4]).unwrap();
            assert!(hashes.iter().enumerate().all(|(i, h)| !hashes[..i].contains(h)));
            for ((password, _), hash) in passwords.iter().zip(&hashes) {
                assert!(bcrypt::verify(password, hash).unwrap());
            }
        }
    }

    #[test]
    fn a_bad_setting_is_an_error_not_a_crash() {
        assert!(Crypt::new().hash("pw", "$2b$99$abc").is_err());
    }
}
