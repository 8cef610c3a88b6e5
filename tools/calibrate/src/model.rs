//! From timings to decisions: the Lambda cost model, the tiers chosen from
//! the budgets, and the memory size of each function.

use std::collections::BTreeMap;

use hashing::Algorithm;
use hashing::tier_file::{
    BatchRow, BatchThroughput, ChosenTier, FixedCapacity, FunctionSizing, LambdaCost, LambdaModel, ReferenceRow, Stats,
    TimingRow,
};

use crate::stats::round3;

/// AWS Lambda arm64 prices (us-east-1) and the memory sizes we model.
pub fn lambda_model() -> LambdaModel {
    LambdaModel {
        full_cpu_memory_mb: 1769,
        usd_per_gb_second: 0.000_013_333_4,
        usd_per_million_requests: 0.20,
        memory_sizes_mb: vec![128, 256, 512, 1024, 1769, 3008],
    }
}

/// Memory for functions that never hash: their work is I/O, so more CPU buys
/// little; 256 MB keeps cold starts short at a price close to 128 MB's.
pub const NON_HASHING_MEMORY_MB: u32 = 256;

/// Which tier each function hashes with (docs/API.md's route table).
pub const FUNCTIONS: [(&str, Option<&str>); 9] = [
    ("signup", Some("member")),
    ("login", Some("member")),
    ("read", None),
    ("member-write", None),
    ("guest-post", Some("guest")),
    ("guest-comment", Some("guest")),
    ("like", None),
    ("moderation", None),
    ("account", Some("member")),
];

/// The modelled duration and price of one invocation whose hashing takes
/// `ms` on one full core, at `memory_mb`. A single thread gets at most one
/// vCPU, and gets `memory / 1769` of one below that.
pub fn lambda_cost(model: &LambdaModel, memory_mb: u32, ms: f64) -> LambdaCost {
    let share = (f64::from(memory_mb) / f64::from(model.full_cpu_memory_mb)).min(1.0);
    let duration_ms = ms / share;
    let gb_seconds = f64::from(memory_mb) / 1024.0 * duration_ms / 1000.0;
    let usd_per_million = 1e6 * gb_seconds * model.usd_per_gb_second + model.usd_per_million_requests;
    LambdaCost {
        memory_mb,
        duration_ms: round3(duration_ms),
        usd_per_million: (usd_per_million * 10_000.0).round() / 10_000.0,
    }
}

/// A table row: the Lambda columns model the verify (what login pays on every request).
pub fn row(model: &LambdaModel, spec: String, hash: Stats, verify: Stats) -> TimingRow {
    let lambda = model
        .memory_sizes_mb
        .iter()
        .map(|&mb| lambda_cost(model, mb, verify.median_ms))
        .collect();
    TimingRow {
        spec,
        hash,
        verify,
        lambda,
    }
}

/// The default latency budgets per request, in ms, before the seed's
/// baseline caps them ([`latency_budget`]).
pub const DEFAULT_MEMBER_BUDGET_MS: f64 = 250.0;
pub const DEFAULT_GUEST_BUDGET_MS: f64 = 25.0;

/// The seed's baseline: what the seed hashed every password with, through
/// the crate it used. At the seed's load people feel a hash's latency, so
/// no default tier may take longer than this.
pub const REFERENCE_COST: u32 = 10;

/// The reference row (the `bcrypt` crate at `cost`) from its samples'
/// summaries, capping `caps`' budgets.
pub fn reference_row(model: &LambdaModel, cost: u32, hash: Stats, verify: Stats, caps: Vec<String>) -> ReferenceRow {
    ReferenceRow {
        name: format!("bcrypt crate, cost {cost}"),
        caps,
        timing: row(model, format!("bcrypt:{cost}"), hash, verify),
    }
}

/// A tier's latency budget: the configured one, capped by the reference's
/// verify P95 when the reference names the tier (its budget was not given
/// explicitly).
pub fn latency_budget(name: &str, configured_ms: f64, reference: Option<&ReferenceRow>) -> f64 {
    match reference.filter(|r| r.caps.iter().any(|tier| tier == name)) {
        Some(reference) => configured_ms.min(reference.timing.verify.p95_ms),
        None => configured_ms,
    }
}

/// The strongest bcrypt cost whose verify P95 fits `budget_ms` (cost 4 if none
/// does), and the smallest memory size at which it still fits on Lambda.
pub fn choose_tier(model: &LambdaModel, table: &[TimingRow], budget_ms: f64) -> Option<ChosenTier> {
    let mut bcrypt: Vec<(u32, &TimingRow)> = table
        .iter()
        .filter_map(|row| match row.spec.parse() {
            Ok(Algorithm::Bcrypt { cost }) => Some((cost, row)),
            _ => None,
        })
        .collect();
    bcrypt.sort_by_key(|(cost, _)| *cost);
    let (cost, row) = bcrypt
        .iter()
        .rev()
        .find(|(_, row)| row.verify.p95_ms <= budget_ms)
        .or_else(|| bcrypt.first())?;
    let algorithm = Algorithm::Bcrypt { cost: *cost };
    let recommended_memory_mb: u32 = model
        .memory_sizes_mb
        .iter()
        .copied()
        .filter(|&mb| mb <= model.full_cpu_memory_mb)
        .find(|&mb| lambda_cost(model, mb, row.verify.p95_ms).duration_ms <= budget_ms)
        .unwrap_or(model.full_cpu_memory_mb);
    Some(ChosenTier {
        spec: algorithm.to_string(),
        budget_ms,
        verify_p95_ms: row.verify.p95_ms,
        requires_pepper: algorithm.is_weaker_than_bcrypt_10(),
        recommended_memory_mb,
        usd_per_million: Some(lambda_cost(model, recommended_memory_mb, row.verify.median_ms).usd_per_million),
    })
}

/// The seed's load (report 1: about 38 requests/s on one vCPU, 20% member
/// logins with a write, 20% guest writes): about 4 member and 8 guest
/// hashes a second.
pub fn default_peak_rates() -> BTreeMap<String, f64> {
    BTreeMap::from([("member".to_owned(), 4.0), ("guest".to_owned(), 8.0)])
}

/// The hashing gate's shares when both tiers queue: 2:1 for members. Chosen
/// from report 1's users without think time (docs/benchmarks.md, "The gate's
/// weights under overload"): at 1:1 member logins took x1.00 and x1.33 of
/// their time with one uniform tier in two runs, at 2:1 x0.80 and x1.07,
/// while guest writes stayed 59-70% faster than uniform (report 1: 57%). An
/// account's owner waits less than an anonymous writer, and a flood of guest
/// writes can take at most a third of the hashing time.
pub fn default_gate_weights() -> BTreeMap<String, u32> {
    BTreeMap::from([("member".to_owned(), 2), ("guest".to_owned(), 1)])
}

/// Fixed-capacity workers keep this much headroom for bursts and queueing.
pub const MAX_UTILIZATION: f64 = 0.7;

/// The bcrypt cost a pepper needs at least (the floors, `hashing`).
const PEPPERED_FLOOR: u32 = 8;

/// How busy `workers` are when `rates` hashes a second run at `tiers`'
/// median verify times.
pub fn utilization(
    table: &[TimingRow],
    tiers: &BTreeMap<String, ChosenTier>,
    rates: &BTreeMap<String, f64>,
    workers: usize,
) -> f64 {
    let busy: f64 = tiers
        .iter()
        .map(|(name, tier)| {
            let ms = table
                .iter()
                .find(|r| r.spec == tier.spec)
                .map_or(0.0, |r| r.verify.median_ms);
            rates.get(name).copied().unwrap_or(0.0) * ms / 1000.0
        })
        .sum();
    busy / workers.max(1) as f64
}

/// The batch section of the tier file from measured rows: the gate's rule
/// for when a batch pays (`hashing::batch::plan_from`), from the
/// full batch's time at the dearest cost measured.
pub fn batch_throughput(backend: String, lanes: usize, rows: Vec<BatchRow>) -> BatchThroughput {
    let dearest = rows.iter().map(|r| r.cost).max().unwrap_or(0);
    let at = |k: usize| rows.iter().find(|r| r.cost == dearest && r.k == k).map(|r| r.batch_ms);
    let full = rows
        .iter()
        .filter(|r| r.cost == dearest && r.k <= lanes)
        .max_by_key(|r| r.k)
        .map(|r| r.batch_ms);
    let min_batch = match (at(1), full) {
        (Some(single), Some(full)) => hashing::batch::plan_from(lanes, single, full, "measured").min_batch,
        _ => usize::MAX,
    };
    BatchThroughput {
        backend,
        lanes,
        min_batch: min_batch.min(lanes + 1),
        rows,
    }
}

/// How many times the hashes per second of one hash at a time a worker
/// finishes in full batches, at the dearest cost measured (the ratio hardly
/// moves with the cost: the same loop runs 2^cost times); 1 where a batch
/// never pays.
pub fn full_batch_speedup(batch: &BatchThroughput) -> f64 {
    if batch.min_batch > batch.lanes {
        return 1.0;
    }
    let dearest = batch.rows.iter().map(|r| r.cost).max();
    batch
        .rows
        .iter()
        .filter(|r| Some(r.cost) == dearest && r.k <= batch.lanes)
        .max_by_key(|r| r.k)
        .map_or(1.0, |r| r.speedup.max(1.0))
}

/// With batches, how busy the workers may be one hash at a time at the peak
/// rates. There the queue is short and hashes mostly run alone; the burst
/// headroom that [`MAX_UTILIZATION`] keeps is carried by batches instead,
/// because a burst is what makes the queue deep enough for them. At 85% one
/// hash at a time waits about 2.8 hash times on average (M/D/1), at 70% 1.2.
pub const MAX_UTILIZATION_ALONE: f64 = 0.85;

/// Whether the peak rates fit: one hash at a time within [`MAX_UTILIZATION`]
/// without batches; with them, within [`MAX_UTILIZATION_ALONE`] alone and
/// within [`MAX_UTILIZATION`] of the full-batch throughput.
fn fits(alone: f64, batch: Option<&BatchThroughput>) -> bool {
    // Sums of measured milliseconds: a rounding hair is not a breach.
    const HAIR: f64 = 1e-9;
    match batch.map(full_batch_speedup).filter(|&speedup| speedup > 1.0) {
        None => alone <= MAX_UTILIZATION + HAIR,
        Some(speedup) => alone <= MAX_UTILIZATION_ALONE + HAIR && alone / speedup <= MAX_UTILIZATION + HAIR,
    }
}

/// The fixed-capacity rule: start from the latency choices and, while the
/// peak rates would keep the workers more than [`MAX_UTILIZATION`] busy,
/// lower by one bcrypt cost the tier that takes the most worker time (never
/// under the pepper's floor). On a fixed CPU a stronger tier is paid by every
/// request that waits behind it, not by its own latency alone. With a batch
/// section the burst headroom comes from batches ([`fits`]).
pub fn choose_for_capacity(
    model: &LambdaModel,
    table: &[TimingRow],
    latency: &BTreeMap<String, ChosenTier>,
    rates: &BTreeMap<String, f64>,
    workers: usize,
    batch: Option<&BatchThroughput>,
) -> FixedCapacity {
    let mut tiers = latency.clone();
    loop {
        if fits(utilization(table, &tiers, rates, workers), batch) {
            break;
        }
        // The tier taking the most worker time that can still go down.
        let heaviest = tiers
            .iter()
            .filter_map(|(name, tier)| match tier.spec.parse() {
                Ok(Algorithm::Bcrypt { cost }) if cost > PEPPERED_FLOOR => {
                    let ms = table.iter().find(|r| r.spec == tier.spec)?.verify.median_ms;
                    Some((name.clone(), cost, rates.get(name).copied().unwrap_or(0.0) * ms))
                }
                _ => None,
            })
            .max_by(|a, b| a.2.total_cmp(&b.2));
        let Some((name, cost, _)) = heaviest else { break };
        let lower = format!("bcrypt:{}", cost - 1);
        let Some(row) = table.iter().find(|r| r.spec == lower) else {
            break;
        };
        let budget_ms = tiers[&name].budget_ms;
        let algorithm = Algorithm::Bcrypt { cost: cost - 1 };
        tiers.insert(
            name,
            ChosenTier {
                spec: lower,
                budget_ms,
                verify_p95_ms: row.verify.p95_ms,
                requires_pepper: algorithm.is_weaker_than_bcrypt_10(),
                // Fixed capacity has no memory size to choose and no price
                // per hash (set for every tier below).
                recommended_memory_mb: model.full_cpu_memory_mb,
                usd_per_million: None,
            },
        );
    }
    for tier in tiers.values_mut() {
        tier.usd_per_million = None;
    }
    FixedCapacity {
        workers: workers.max(1),
        max_utilization: MAX_UTILIZATION,
        utilization: (utilization(table, &tiers, rates, workers) * 1000.0).round() / 1000.0,
        batch_utilization: batch.map(|batch| {
            (utilization(table, &tiers, rates, workers) / full_batch_speedup(batch) * 1000.0).round() / 1000.0
        }),
        tiers,
    }
}

pub fn function_sizing(tiers: &BTreeMap<String, ChosenTier>) -> BTreeMap<String, FunctionSizing> {
    FUNCTIONS
        .iter()
        .map(|(name, tier)| {
            let memory_mb = tier
                .and_then(|t| tiers.get(t))
                .map_or(NON_HASHING_MEMORY_MB, |t| t.recommended_memory_mb);
            (
                (*name).to_owned(),
                FunctionSizing {
                    tier: tier.map(str::to_owned),
                    memory_mb,
                },
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stats(ms: f64) -> Stats {
        Stats {
            samples: 10,
            median_ms: ms,
            p95_ms: ms * 1.1,
        }
    }

    fn table() -> Vec<TimingRow> {
        let model = lambda_model();
        (4..=14)
            .map(|cost| {
                let ms = 85.0 * 2f64.powi(cost - 10);
                row(&model, format!("bcrypt:{cost}"), stats(ms), stats(ms))
            })
            .chain([row(&model, "argon2id:19456:2:1".into(), stats(1.0), stats(1.0))])
            .collect()
    }

    #[test]
    fn below_one_vcpu_the_price_stays_and_the_time_grows() {
        let model = lambda_model();
        let small = lambda_cost(&model, 128, 100.0);
        let full = lambda_cost(&model, 1769, 100.0);
        let big = lambda_cost(&model, 3008, 100.0);
        assert!((small.duration_ms - 100.0 * 1769.0 / 128.0).abs() < 0.01);
        assert_eq!(full.duration_ms, 100.0);
        assert_eq!(big.duration_ms, 100.0, "one thread cannot use more than one vCPU");
        assert!((small.usd_per_million - full.usd_per_million).abs() < 0.001);
        assert!(big.usd_per_million > full.usd_per_million);
        // 1769 MB for 0.1 s: 0.17275 GB-s x 13.3334 $/M GB-s + 0.20 $.
        assert!((full.usd_per_million - (1769.0 / 1024.0 * 0.1 * 13.3334 + 0.2)).abs() < 0.001);
    }

    #[test]
    fn tiers_take_the_strongest_bcrypt_cost_within_budget() {
        let model = lambda_model();
        let member = choose_tier(&model, &table(), 250.0).unwrap();
        assert_eq!(member.spec, "bcrypt:11"); // 170 x 1.1 fits, 340 x 1.1 does not
        assert!(!member.requires_pepper);
        let guest = choose_tier(&model, &table(), 25.0).unwrap();
        assert_eq!(guest.spec, "bcrypt:8");
        assert!(guest.requires_pepper);
        // Its price: one verify at the memory it recommends, as the table's row says.
        let row = table().into_iter().find(|r| r.spec == "bcrypt:8").unwrap();
        let at_memory = row
            .lambda
            .iter()
            .find(|c| c.memory_mb == guest.recommended_memory_mb)
            .unwrap();
        assert_eq!(guest.usd_per_million, Some(at_memory.usd_per_million));
        assert!(member.usd_per_million.unwrap() > guest.usd_per_million.unwrap());
        assert_eq!(choose_tier(&model, &table(), 0.001).unwrap().spec, "bcrypt:4");
        assert!(choose_tier(&model, &[], 25.0).is_none());
    }

    fn latency_tiers(model: &LambdaModel, table: &[TimingRow]) -> BTreeMap<String, ChosenTier> {
        BTreeMap::from([
            ("member".to_owned(), choose_tier(model, table, 250.0).unwrap()),
            ("guest".to_owned(), choose_tier(model, table, 25.0).unwrap()),
        ])
    }

    #[test]
    fn fixed_capacity_lowers_the_tier_that_takes_the_most_worker_time_until_the_rates_fit() {
        let model = lambda_model();
        let table = table();
        let latency = latency_tiers(&model, &table);
        assert_eq!(
            (latency["member"].spec.as_str(), latency["guest"].spec.as_str()),
            ("bcrypt:11", "bcrypt:8")
        );
        // The seed's rates on one worker: member 11 (170 ms) x 4/s + guest 8
        // (21 ms) x 8/s keep it 85% busy; member 10 brings it to 51%.
        let fixed = choose_for_capacity(&model, &table, &latency, &default_peak_rates(), 1, None);
        assert_eq!(fixed.tiers["member"].spec, "bcrypt:10");
        assert_eq!(fixed.tiers["guest"].spec, "bcrypt:8");
        assert!(
            fixed.utilization <= MAX_UTILIZATION && fixed.utilization > 0.5,
            "{}",
            fixed.utilization
        );
        // Two workers carry the latency choice unchanged.
        let roomy = choose_for_capacity(&model, &table, &latency, &default_peak_rates(), 2, None);
        let specs = |tiers: &BTreeMap<String, ChosenTier>| tiers.values().map(|t| t.spec.clone()).collect::<Vec<_>>();
        assert_eq!(specs(&roomy.tiers), specs(&latency));
        assert!(roomy.tiers.values().all(|t| t.usd_per_million.is_none()));
        // Rates no tier fits: both end at the pepper's floor, and the
        // utilization says so rather than hiding it.
        let flood = BTreeMap::from([("member".to_owned(), 0.5), ("guest".to_owned(), 200.0)]);
        let shed = choose_for_capacity(&model, &table, &latency, &flood, 1, None);
        assert_eq!(shed.tiers["guest"].spec, "bcrypt:8");
        assert_eq!(shed.tiers["member"].spec, "bcrypt:8");
        assert!(shed.utilization > MAX_UTILIZATION);
    }

    /// 16 lanes whose full batch takes 9 lone hashes' time (1.78x), as
    /// AVX-512 on this machine's class of CPU; measured at costs 8 and 10.
    fn sixteen_lanes() -> BatchThroughput {
        let rows = [8, 10]
            .into_iter()
            .flat_map(|cost| {
                let single = 85.0 * 2f64.powi(cost as i32 - 10);
                [
                    (1, single),
                    (2, 9.0 * single),
                    (4, 9.0 * single),
                    (8, 9.0 * single),
                    (16, 9.0 * single),
                ]
                .map(|(k, ms)| BatchRow {
                    cost,
                    k,
                    batch_ms: ms,
                    hashes_per_s: k as f64 * 1000.0 / ms,
                    speedup: k as f64 / (ms / single),
                })
            })
            .collect();
        batch_throughput("avx512".into(), 16, rows)
    }

    #[test]
    fn a_full_batch_counts_its_measured_speedup_and_pays_from_ten_waiting() {
        let batch = sixteen_lanes();
        assert_eq!(batch.min_batch, 10, "9 x 1.05 = 9.45 lone hashes' time");
        assert!((full_batch_speedup(&batch) - 16.0 / 9.0).abs() < 1e-9);
        let never = BatchThroughput {
            min_batch: 17,
            ..sixteen_lanes()
        };
        assert_eq!(full_batch_speedup(&never), 1.0);
        // Without batches the rule is 70% one at a time; with them 85% one
        // at a time and 70% of the batch throughput.
        assert!(fits(0.70, None) && !fits(0.71, None));
        assert!(fits(0.85, Some(&batch)) && !fits(0.86, Some(&batch)));
        assert!(!fits(0.75, Some(&never)), "a batch that never pays changes nothing");
        let slow = BatchThroughput {
            rows: batch
                .rows
                .iter()
                .map(|r| BatchRow {
                    speedup: if r.k == 16 { 1.1 } else { r.speedup },
                    ..*r
                })
                .collect(),
            ..sixteen_lanes()
        };
        assert!(fits(0.77, Some(&slow)) && !fits(0.78, Some(&slow)), "0.77 / 1.1 = 0.70");
    }

    #[test]
    fn fixed_capacity_with_batches_keeps_the_stronger_tier_the_burst_headroom_allows() {
        let model = lambda_model();
        let table = table();
        let latency = latency_tiers(&model, &table);
        let rates = default_peak_rates();
        // One hash at a time the seed's rates lower member 11 (85% busy) to 10.
        let alone = choose_for_capacity(&model, &table, &latency, &rates, 1, None);
        assert_eq!(alone.tiers["member"].spec, "bcrypt:10");
        assert_eq!(alone.batch_utilization, None);
        // With 1.78x batches, 85% alone fits and a burst runs at 48% of the batch throughput.
        let batched = choose_for_capacity(&model, &table, &latency, &rates, 1, Some(&sixteen_lanes()));
        assert_eq!(batched.tiers["member"].spec, "bcrypt:11");
        assert!(batched.utilization <= MAX_UTILIZATION_ALONE, "{}", batched.utilization);
        let burst = batched.batch_utilization.expect("with batches");
        assert!((burst - batched.utilization * 9.0 / 16.0).abs() < 0.001, "{burst}");
    }

    #[test]
    fn memory_is_the_smallest_size_that_keeps_the_budget() {
        let model = lambda_model();
        // bcrypt:4 verifies in ~1.5 ms: even 128 MB stays under 25 ms.
        let cheap = choose_tier(&model, &table(), 2.0).unwrap();
        assert_eq!(cheap.spec, "bcrypt:4");
        assert_eq!(cheap.recommended_memory_mb, 1769, "1.46 ms x 13.8 = 20 ms > 2 ms");
        let roomy = choose_tier(&model, &table()[..1], 25.0).unwrap();
        assert_eq!(roomy.recommended_memory_mb, 128);

        let tiers = BTreeMap::from([("member".to_owned(), roomy.clone()), ("guest".to_owned(), cheap)]);
        let sizing = function_sizing(&tiers);
        assert_eq!(sizing["login"].memory_mb, 128);
        assert_eq!(sizing["guest-post"].memory_mb, 1769);
        assert_eq!(sizing["read"].memory_mb, NON_HASHING_MEMORY_MB);
        assert_eq!(sizing["read"].tier, None);
        assert_eq!(sizing["moderation"].tier, None, "moderation hashes nothing");
        assert_eq!(sizing["account"].memory_mb, 128, "account hashes as login does");
        assert_eq!(sizing.len(), 9);
    }
}
