//! Median and P95 of timing samples.

use hashing::tier_file::Stats;

/// Nearest-rank percentile (`p` in 0..=100) of samples in milliseconds.
pub fn percentile(sorted: &[f64], p: f64) -> f64 {
    assert!(!sorted.is_empty(), "percentile of no samples");
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

pub fn summarize(samples: &[f64]) -> Stats {
    let mut sorted = samples.to_vec();
    sorted.sort_by(f64::total_cmp);
    let median = if sorted.len() % 2 == 1 {
        sorted[sorted.len() / 2]
    } else {
        (sorted[sorted.len() / 2 - 1] + sorted[sorted.len() / 2]) / 2.0
    };
    Stats {
        samples: sorted.len(),
        median_ms: round3(median),
        p95_ms: round3(percentile(&sorted, 95.0)),
    }
}

pub fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_and_p95_follow_nearest_rank() {
        let samples: Vec<f64> = (1..=100).map(f64::from).rev().collect();
        let s = summarize(&samples);
        assert_eq!((s.samples, s.median_ms, s.p95_ms), (100, 50.5, 95.0));
        let s = summarize(&[3.0, 1.0, 2.0]);
        assert_eq!((s.median_ms, s.p95_ms), (2.0, 3.0));
    }
}
