//! The template's parameters: the bill and throttling guards, the tiers
//! (classic only), the boards, the store's and the traces' settings,
//! the images', each hashing function's cost guard, and the monitoring's.

use std::fmt::Write as _;

use crate::functions::{READ_CACHE_TTL_MS, reserved_concurrency_default};
use crate::managed::fixed_capacity_tier;
use crate::media::media_parameters;
use crate::mode::ComputeMode;
use crate::monitoring::monitoring_parameters;
use crate::yaml::pascal;
use shared::function::Function;
use shared::hashing::tier_file::TierFile;
use shared::store::dynamo::Layout;

/// The lines under `Parameters:` of one compute mode's template.
pub(crate) fn parameters(tiers: &TierFile, mode: ComputeMode) -> anyhow::Result<String> {
    let managed = mode == ComputeMode::ManagedInstances;
    let mut t = String::new();
    let tier_spec = |name: &str| -> anyhow::Result<&str> {
        Ok(tiers
            .tiers
            .get(name)
            .ok_or_else(|| anyhow::anyhow!("tier file has no {name} tier"))?
            .spec
            .as_str())
    };
    let fixed_spec = |name: &str| -> anyhow::Result<&str> {
        Ok(fixed_capacity_tier(tiers, name)
            .ok_or_else(|| anyhow::anyhow!("tier file has no {name} tier"))?
            .spec
            .as_str())
    };
    if managed {
        writeln!(
            t,
            "  ManagedInstancesMaxVCpus:
    Type: Number
    Description: Bill guard - the most vCPUs the capacity provider runs at once; its instances are billed while they run, busy or not
    Default: 16
    MinValue: 2
    MaxValue: 15000
  ManagedInstancesMinEnvironments:
    Type: Number
    Description: Execution environments (one vCPU each) every function keeps running; Lambda's default of 3 for every function would not fit the default bill guard
    Default: 1
    MinValue: 1
    MaxValue: 15000"
        )?;
    }
    writeln!(
        t,
        "  CorsOrigins:
    Type: CommaDelimitedList
    Description: Browser origins allowed to call the API
    Default: https://example.com
  ThrottlingRateLimit:
    Type: Number
    Description: Default route throttling, steady requests per second
    Default: 200
  ThrottlingBurstLimit:
    Type: Number
    Description: Default route throttling, burst
    Default: 400"
    )?;
    if !managed {
        writeln!(
            t,
            "  MemberTier:
    Type: String
    Description: Member password tier (from infra/tiers.json); the managed-instances template hashes with the tier file's fixed-capacity tier ({member_fixed})
    Default: '{member}'
  GuestTier:
    Type: String
    Description: Guest password tier (from infra/tiers.json); the managed-instances template hashes with the tier file's fixed-capacity tier ({guest_fixed})
    Default: '{guest}'",
            member = tier_spec("member")?,
            guest = tier_spec("guest")?,
            member_fixed = fixed_spec("member")?,
            guest_fixed = fixed_spec("guest")?,
        )?;
    }
    writeln!(
        t,
        "  Boards:
    Type: String
    Description: Board slugs
    Default: free,qna,notice
  LogRetentionDays:
    Type: Number
    Default: 30
  CounterShards:
    Type: Number
    Description: Counter shards per post (docs/storage.md, Single-table design) - about 1,000 views/s of one post per shard; may only grow
    Default: {shards}
    MinValue: 1
    MaxValue: {max_shards}
  ReadCacheTtlMs:
    Type: Number
    Description: How long the read function serves a post, a board page and counts from memory (0 - never)
    Default: {read_cache}
    MinValue: 0
  AdminUsernames:
    Type: String
    Description: Comma list of admin usernames - staff of every board (ADMIN_USERNAMES; empty - none)
    Default: ''
  TracesEndpoint:
    Type: String
    Description: Where every function sends its spans over OTLP/HTTP (docs/operations.md, Traces) - empty - off; https://xray.<region>.amazonaws.com/v1/traces - X-Ray, signed with the function's role (turn on Transaction Search first); or a collector's traces URL
    Default: ''
    AllowedPattern: '^$|^https?://[^ ]+$'",
        shards = Layout::DEFAULT_SHARDS,
        max_shards = Layout::MAX_SHARDS,
        read_cache = READ_CACHE_TTL_MS,
    )?;
    t += &media_parameters();
    // On managed instances the bill is the capacity provider's vCPUs
    // (ManagedInstancesMaxVCpus), and each environment's requests are capped.
    for function in Function::ALL.into_iter().filter(|_| !managed) {
        if let Some(default) = reserved_concurrency_default(function) {
            writeln!(
                t,
                "  {}ReservedConcurrency:
    Type: Number
    Description: Cost guard - at most this many concurrent {} invocations (each runs password hashing)
    Default: {default}",
                pascal(function.name()),
                function.name()
            )?;
        }
    }

    t += &monitoring_parameters(tiers)?;
    Ok(t)
}
