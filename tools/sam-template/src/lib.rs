//! The SAM template is generated, not hand-edited: its routes come from the
//! route table, the memory sizes and tier parameters from the measured tier
//! file, the table from `infra/table.json`. `cargo run -p sam-template`
//! rewrites both templates and every other file generated from the route
//! table ([`generated`]); tests fail while one disagrees with its sources.
//!
//! One plain template per compute mode ([`ComputeMode`]): `classic` Lambda
//! (`infra/template.yaml`), and Lambda Managed Instances
//! (`infra/template-managed-instances.yaml`: the functions run
//! multi-concurrent on Graviton EC2 instances of a capacity provider in a
//! VPC of their own). Each holds only its own mode's resources and
//! properties, so neither needs `AWS::LanguageExtensions` or an `Fn::If` in
//! a SAM-only property (which plain SAM and older cfn-lint releases refuse).

mod costs;
mod events;
mod function_resources;
mod functions;
mod managed;
mod media;
mod mode;
mod monitoring;
mod notify;
mod parameters;
mod purge;
mod shared_resources;
mod template;
mod yaml;

pub use costs::{ASSUMED_IO_MS, cost_table};
pub use functions::{READ_CACHE_TTL_MS, dynamodb_actions, on_capacity_provider, reserved_concurrency_default};
pub use managed::{
    MANAGED_INSTANCE_TYPES, MANAGED_MEMORY_GIB_PER_VCPU, MANAGED_MEMORY_MB, fixed_capacity_tier, managed_concurrency,
};
pub use media::{
    MEDIA_CACHE_CONTROL, MEDIA_MEMORY_MB, MEDIA_S3_ACTIONS, MEDIA_SWEEP_SCHEDULE, MEDIA_TIMEOUT_S, UPLOAD_EXPIRY_DAYS,
};
pub use mode::ComputeMode;
pub use notify::{NOTIFY_ACTIONS, notify_filter_patterns};
pub use purge::{PURGE_ACTIONS, PURGE_SCHEDULE, purge_filter};
pub use template::generate;

use std::path::{Path, PathBuf};

use shared::hashing::tier_file::TierFile;
use shared::http::route_docs::{Texts, derived};
use shared::store::dynamo::schema::TableDefinition;

pub fn generate_from_repo(mode: ComputeMode) -> anyhow::Result<String> {
    let tiers = TierFile::parse(shared::hashing::tier_file::EMBEDDED)?;
    generate(&tiers, &TableDefinition::load(), mode)
}

/// The workspace's root directory.
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Every generated file, by its path from the workspace root, as it is and
/// as it should be: both templates, and what `shared` derives from the
/// route table (docs/openapi.json, the watch router, the route tables).
pub fn generated() -> Vec<(&'static str, Texts)> {
    let root = workspace_root();
    let mut all: Vec<(&'static str, Texts)> = ComputeMode::ALL
        .into_iter()
        .map(|mode| {
            let file = mode.template_file();
            let current = std::fs::read_to_string(root.join(file)).unwrap_or_default();
            let wanted = generate_from_repo(mode).map_err(|e| format!("{file}: {e:#}"));
            (file, wanted.map(|wanted| (current, wanted)))
        })
        .collect();
    all.extend(derived(&root));
    all
}
