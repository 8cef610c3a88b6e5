//! Rebuilding the timing table from the functions' exported log lines: every
//! hash and verify logs `op`, `algorithm`, `cost` and `duration_ms` (see
//! `shared::hashing`), as JSON lines, the fields either at the top level or
//! under `fields` (tracing-subscriber's JSON layout).

use std::collections::BTreeMap;

use serde_json::Value;
use shared::hashing::Algorithm;

use crate::measure::Samples;

/// Collects samples from log text; lines that are not hash timings are skipped.
/// Returns the samples per algorithm and the number of timing lines used.
pub fn samples_from_logs(text: &str) -> (Vec<(Algorithm, Samples)>, usize) {
    let mut by_spec: BTreeMap<String, (Algorithm, Samples)> = BTreeMap::new();
    let mut used = 0;
    for line in text.lines() {
        // CloudWatch exports prefix a timestamp and request id: start at the JSON.
        let Some(json) = line.find('{').map(|at| &line[at..]) else {
            continue;
        };
        let Ok(value) = serde_json::from_str::<Value>(json) else {
            continue;
        };
        let fields = value.get("fields").unwrap_or(&value);
        let (Some(op), Some(algorithm), Some(cost), Some(ms)) = (
            fields.get("op").and_then(Value::as_str),
            fields.get("algorithm").and_then(Value::as_str),
            fields.get("cost").and_then(|c| {
                c.as_str()
                    .map(str::to_owned)
                    .or_else(|| c.as_u64().map(|n| n.to_string()))
            }),
            fields.get("duration_ms").and_then(Value::as_f64),
        ) else {
            continue;
        };
        let Ok(parsed) = format!("{algorithm}:{}", cost.replace(',', ":")).parse::<Algorithm>() else {
            continue;
        };
        let entry = by_spec
            .entry(parsed.to_string())
            .or_insert_with(|| (parsed, Samples::default()));
        match op {
            "hash" => entry.1.hash.push(ms),
            "verify" => entry.1.verify.push(ms),
            _ => continue,
        }
        used += 1;
    }
    let samples = by_spec
        .into_values()
        .filter(|(_, s)| !s.hash.is_empty() || !s.verify.is_empty())
        .collect();
    (samples, used)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timings_are_read_from_nested_and_flat_json_and_noise_is_skipped() {
        let text = r#"
{"timestamp":"2026-11-30T00:00:00Z","level":"INFO","fields":{"message":"password hash timing","op":"verify","tier":"member","algorithm":"bcrypt","cost":"11","duration_ms":170.5},"target":"password_hash"}
2026-11-30T00:00:01Z abc-123 {"op":"hash","tier":"guest","algorithm":"argon2id","cost":"19456:2:1","duration_ms":30.0}
{"op":"verify","algorithm":"bcrypt","cost":11,"duration_ms":171.5}
{"fields":{"message":"request","status":200}}
not json at all
"#;
        let (samples, used) = samples_from_logs(text);
        assert_eq!(used, 3);
        assert_eq!(samples.len(), 2);
        let bcrypt = samples
            .iter()
            .find(|(a, _)| *a == Algorithm::Bcrypt { cost: 11 })
            .unwrap();
        assert_eq!(bcrypt.1.verify, vec![170.5, 171.5]);
        assert!(bcrypt.1.hash.is_empty());
        let argon = samples.iter().find(|(a, _)| a.name() == "argon2id").unwrap();
        assert_eq!(argon.1.hash, vec![30.0]);
    }
}
