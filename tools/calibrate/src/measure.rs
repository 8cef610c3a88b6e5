//! Timing one hash and one verify per candidate on this machine: a warm-up,
//! then rounds in which every candidate runs in a fresh random order, so that
//! noise from the rest of the machine hits all candidates alike (the seed's
//! baseline through the `bcrypt` crate among them).

use std::time::Instant;

use anyhow::Context as _;
use hashing::tier_file::{BatchRow, BatchThroughput};
use hashing::{Algorithm, PasswordEngine, Pepper, PepperRing, Policy, Tier};
use indicatif::{ProgressBar, ProgressStyle};
use rand::seq::SliceRandom as _;
use secrecy::{ExposeSecret as _, SecretString};

/// Raw samples in milliseconds.
#[derive(Debug, Default, Clone)]
pub struct Samples {
    pub hash: Vec<f64>,
    pub verify: Vec<f64>,
}

/// Every bcrypt cost in the range plus OWASP's five Argon2id settings.
pub fn default_candidates(min_cost: u32, max_cost: u32) -> Vec<Algorithm> {
    let owasp_argon2id = [(47_104, 1), (19_456, 2), (12_288, 3), (9_216, 4), (7_168, 5)];
    (min_cost..=max_cost)
        .map(|cost| Algorithm::Bcrypt { cost })
        .chain(owasp_argon2id.map(|(m_kib, t)| Algorithm::Argon2id { m_kib, t, p: 1 }))
        .collect()
}

/// Cheap candidates repeat within a round until they fill about this long, so
/// they get enough samples for a stable P95 without slowing the run.
const REPEAT_TARGET_MS: f64 = 60.0;
const MAX_REPEATS: usize = 12;

/// One measurement run: our engine at each candidate and, timed in the same
/// shuffled rounds, the seed's baseline through the `bcrypt` crate.
#[derive(Debug)]
pub struct Measured {
    pub candidates: Vec<(Algorithm, Samples)>,
    pub reference: Option<Samples>,
}

/// What a round times once: our engine at a candidate, or the `bcrypt`
/// crate at a cost (unpeppered, as the seed hashed).
enum Timer {
    Engine(PasswordEngine),
    Crate { cost: u32 },
}

impl Timer {
    fn time_once(&self, password: &SecretString) -> anyhow::Result<(f64, f64)> {
        match self {
            Self::Engine(engine) => time_once(engine, password),
            Self::Crate { cost } => {
                let password = password.expose_secret();
                let started = Instant::now();
                let stored = bcrypt::hash(password, *cost)?;
                let hash_ms = started.elapsed().as_secs_f64() * 1e3;
                let started = Instant::now();
                let matched = bcrypt::verify(password, &stored)?;
                let verify_ms = started.elapsed().as_secs_f64() * 1e3;
                anyhow::ensure!(matched, "a fresh bcrypt crate hash did not verify");
                Ok((hash_ms, verify_ms))
            }
        }
    }
}

pub fn measure(candidates: &[Algorithm], reference_cost: Option<u32>, rounds: usize) -> anyhow::Result<Measured> {
    anyhow::ensure!(rounds > 0, "--rounds must be at least 1");
    // The deployed default is peppered, so measure the peppered path (the HMAC adds microseconds).
    let ring = || -> anyhow::Result<PepperRing> {
        let pepper = Pepper::parse(
            "PEPPER",
            SecretString::from("calibration-pepper-not-a-secret-0123456789"),
        )?;
        Ok(PepperRing::new(Some(pepper), vec![]))
    };
    let mut timers = candidates
        .iter()
        .map(|&algorithm| {
            let policy = Policy {
                algorithm,
                peppered: true,
            };
            let engine =
                PasswordEngine::new(policy, policy, ring()?).with_context(|| format!("candidate {algorithm}"))?;
            Ok((algorithm.to_string(), Timer::Engine(engine)))
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    timers.extend(reference_cost.map(|cost| (format!("bcrypt crate {cost}"), Timer::Crate { cost })));
    let password = SecretString::from("Tr0ub4dor&3-calibration");

    // Warm-up: caches, page faults, CPU frequency; also sizes the repeats.
    let progress = ProgressBar::new((rounds * timers.len()) as u64 + timers.len() as u64);
    progress.set_style(
        ProgressStyle::with_template("{spinner} [{elapsed_precise}] {wide_bar} {pos}/{len} eta {eta} {msg}")
            .expect("valid template"),
    );
    let mut repeats = Vec::new();
    for (label, timer) in &timers {
        progress.set_message(format!("warm-up {label}"));
        let (hash_ms, verify_ms) = timer.time_once(&password)?;
        let per_pair = hash_ms + verify_ms;
        repeats.push(((REPEAT_TARGET_MS / per_pair).round() as usize).clamp(1, MAX_REPEATS));
        progress.inc(1);
    }

    let mut samples = vec![Samples::default(); timers.len()];
    let mut order: Vec<usize> = (0..timers.len()).collect();
    let mut rng = rand::rng();
    for round in 0..rounds {
        order.shuffle(&mut rng);
        for &i in &order {
            progress.set_message(format!("round {}/{rounds} {}", round + 1, timers[i].0));
            for _ in 0..repeats[i] {
                let (hash_ms, verify_ms) = timers[i].1.time_once(&password)?;
                samples[i].hash.push(hash_ms);
                samples[i].verify.push(verify_ms);
            }
            progress.inc(1);
        }
    }
    progress.finish_with_message("done");
    let reference = reference_cost.and_then(|_| samples.pop());
    Ok(Measured {
        candidates: candidates.iter().copied().zip(samples).collect(),
        reference,
    })
}

fn time_once(engine: &PasswordEngine, password: &SecretString) -> anyhow::Result<(f64, f64)> {
    let started = Instant::now();
    let stored = engine.hash(Tier::Member, password)?;
    let hash_ms = started.elapsed().as_secs_f64() * 1e3;
    let started = Instant::now();
    let verdict = engine.verify(Tier::Member, password, &stored)?;
    let verify_ms = started.elapsed().as_secs_f64() * 1e3;
    anyhow::ensure!(verdict.matched, "a fresh hash did not verify");
    Ok((hash_ms, verify_ms))
}

/// The batch sizes timed: alone, then up to AVX-512's 16 lanes.
pub const BATCH_SIZES: [usize; 5] = [1, 2, 4, 8, 16];

/// Times bcrypt batches of [`BATCH_SIZES`] at each of `costs` on one thread
/// (k = 1 on the scalar kernel, as a lone hash runs), interleaved in a fresh
/// random order each round; hashes per second per worker at each k.
pub fn measure_batches(costs: &[u32], rounds: usize) -> anyhow::Result<BatchThroughput> {
    use hashing::batch::{self, BcryptInput};
    anyhow::ensure!(rounds > 0, "--rounds must be at least 1");
    let backend = batch::backend_name().to_owned();
    let mut cells: Vec<(u32, usize, Vec<f64>)> = costs
        .iter()
        .flat_map(|&cost| BATCH_SIZES.map(|k| (cost, k, Vec::new())))
        .collect();
    let inputs = |cost: u32, k: usize| -> Vec<BcryptInput> {
        (0..k)
            .map(|i| BcryptInput::fresh(cost, &SecretString::from(format!("batch-{i}-calibration"))))
            .collect()
    };
    let mut order: Vec<usize> = (0..cells.len()).collect();
    let mut rng = rand::rng();
    let progress = ProgressBar::new((rounds * cells.len()) as u64);
    for round in 0..=rounds {
        order.shuffle(&mut rng);
        for &i in &order {
            let (cost, k) = (cells[i].0, cells[i].1);
            let batch_inputs = inputs(cost, k);
            let refs: Vec<&BcryptInput> = batch_inputs.iter().collect();
            let started = Instant::now();
            if k == 1 {
                std::hint::black_box(batch::digest_one(refs[0])?);
            } else {
                std::hint::black_box(batch::digest_many(&refs)?);
            }
            let ms = started.elapsed().as_secs_f64() * 1e3;
            // Round 0 warms up (and runs bcrypt-rust's one-time backend choice).
            if round > 0 {
                cells[i].2.push(ms);
                progress.inc(1);
            }
        }
    }
    progress.finish_and_clear();
    let mut rows = Vec::new();
    for &cost in costs {
        let median = |k: usize| {
            let samples = &cells.iter().find(|c| c.0 == cost && c.1 == k).expect("measured").2;
            crate::stats::summarize(samples).median_ms
        };
        let alone = 1000.0 / median(1);
        for k in BATCH_SIZES {
            let batch_ms = median(k);
            let hashes_per_s = k as f64 * 1000.0 / batch_ms;
            rows.push(BatchRow {
                cost,
                k,
                batch_ms: crate::stats::round3(batch_ms),
                hashes_per_s: crate::stats::round3(hashes_per_s),
                speedup: crate::stats::round3(hashes_per_s / alone),
            });
        }
    }
    Ok(crate::model::batch_throughput(backend, batch::backend_lanes(), rows))
}
