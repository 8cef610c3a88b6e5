//! The SAM template is generated, not hand-edited: its routes come from the
//! route table, the memory sizes and tier parameters from the measured tier
//! file, the table from `infra/table.json`. `cargo run -p sam-template`
//! rewrites `infra/template.yaml`; a test fails when the committed template
//! disagrees with what these sources say.
//!
//! One plain template per compute mode ([`ComputeMode`]): `classic` Lambda
//! (`infra/template.yaml`), and Lambda Managed Instances
//! (`infra/template-managed-instances.yaml`: the functions run
//! multi-concurrent on Graviton EC2 instances of a capacity provider in a
//! VPC of their own). Each holds only its own mode's resources and
//! properties, so neither needs `AWS::LanguageExtensions` or an `Fn::If` in
//! a SAM-only property (which plain SAM and older cfn-lint releases refuse).

mod costs;
mod functions;
mod managed;
mod monitoring;
mod purge;
mod template;

pub use costs::{ASSUMED_IO_MS, cost_table};
pub use functions::{READ_CACHE_TTL_MS, dynamodb_actions, reserved_concurrency_default};
pub use managed::{
    MANAGED_INSTANCE_TYPES, MANAGED_MEMORY_GIB_PER_VCPU, MANAGED_MEMORY_MB, fixed_capacity_tier, managed_concurrency,
};
pub use purge::{PURGE_ACTIONS, PURGE_SCHEDULE, purge_filter};
use shared::hashing::tier_file::TierFile;
use shared::store::dynamo::schema::TableDefinition;
pub use template::generate;

/// Where a function runs, and so which template deploys it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ComputeMode {
    /// One request per execution environment, billed per request.
    Classic,
    /// Lambda Managed Instances: many requests per environment on EC2
    /// instances Lambda manages, billed per instance-hour.
    ManagedInstances,
}

impl ComputeMode {
    pub const ALL: [ComputeMode; 2] = [ComputeMode::Classic, ComputeMode::ManagedInstances];

    /// The committed template of this mode.
    pub fn template_path(self) -> &'static str {
        match self {
            ComputeMode::Classic => concat!(env!("CARGO_MANIFEST_DIR"), "/../../infra/template.yaml"),
            ComputeMode::ManagedInstances => {
                concat!(
                    env!("CARGO_MANIFEST_DIR"),
                    "/../../infra/template-managed-instances.yaml"
                )
            }
        }
    }

    /// As samconfig's environments and the docs name it.
    pub fn name(self) -> &'static str {
        match self {
            ComputeMode::Classic => "classic",
            ComputeMode::ManagedInstances => "managed-instances",
        }
    }
}

pub fn generate_from_repo(mode: ComputeMode) -> anyhow::Result<String> {
    let tiers = TierFile::parse(shared::hashing::tier_file::EMBEDDED)?;
    generate(&tiers, &TableDefinition::load(), mode)
}
