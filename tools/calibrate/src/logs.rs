//! Rebuilding the timing table from the functions' exported log lines: every
//! hash and verify writes one record (`hashing::timing`). On Lambda
//! it is a CloudWatch EMF record (`op`, `algorithm` as `bcrypt:10`,
//! `hash_ms`), as `sam logs` or a CloudWatch export prints it; on the server
//! a log event (`op`, `algorithm`, `cost`, `duration_ms`, top level or under
//! `fields`).

use std::collections::BTreeMap;

use hashing::Algorithm;
use serde_json::Value;

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
        // A hash that ran in a batch took the batch's time: not one hash's
        // (the table is of single hashes; docs/DESIGN.md, Batch hashing).
        if fields
            .get("batch")
            .and_then(Value::as_u64)
            .is_some_and(|batch| batch > 1)
        {
            continue;
        }
        let Some((op, parsed, ms)) = emf_timing(fields).or_else(|| event_timing(fields)) else {
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

/// An EMF record: the algorithm in the tier spec syntax, `hash_ms`.
fn emf_timing(record: &Value) -> Option<(&str, Algorithm, f64)> {
    record.get("_aws")?;
    let op = record.get("op")?.as_str()?;
    let algorithm = record.get("algorithm")?.as_str()?.parse().ok()?;
    Some((op, algorithm, record.get("hash_ms")?.as_f64()?))
}

/// A log event: the algorithm's name and cost apart, `duration_ms`.
fn event_timing(fields: &Value) -> Option<(&str, Algorithm, f64)> {
    let op = fields.get("op")?.as_str()?;
    let name = fields.get("algorithm")?.as_str()?;
    let cost = fields.get("cost")?;
    let cost = cost
        .as_str()
        .map(str::to_owned)
        .or_else(|| cost.as_u64().map(|n| n.to_string()))?;
    let algorithm = format!("{name}:{}", cost.replace(',', ":")).parse().ok()?;
    Some((op, algorithm, fields.get("duration_ms")?.as_f64()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timings_are_read_from_nested_and_flat_json_and_noise_is_skipped() {
        let text = r#"
{"timestamp":"2026-11-30T00:00:00Z","level":"INFO","fields":{"message":"password hash timing","op":"verify","tier":"member","algorithm":"bcrypt","cost":"11","duration_ms":170.5},"target":"password_hash"}
2026-11-30T00:00:01Z abc-123 {"op":"hash","tier":"guest","algorithm":"argon2id","cost":"19456:2:1","duration_ms":30.0}
{"op":"verify","algorithm":"bcrypt","cost":11,"duration_ms":171.5,"batch":1}
{"op":"verify","algorithm":"bcrypt","cost":11,"duration_ms":990.0,"batch":8}
{"_aws":{},"op":"verify","algorithm":"bcrypt:11","hash_ms":990.0,"batch":8}
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
