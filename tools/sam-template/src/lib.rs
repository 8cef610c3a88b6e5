//! The SAM template is generated, not hand-edited: its routes come from the
//! route table, the memory sizes and tier parameters from the measured tier
//! file, the table from `infra/table.json`. `cargo run -p sam-template`
//! rewrites `infra/template.yaml`; a test fails when the committed template
//! disagrees with what these sources say.
//!
//! One template, two compute modes (parameter `ComputeMode`): `classic`
//! Lambda, and `managed-instances` (Lambda Managed Instances: the functions
//! run multi-concurrent on Graviton EC2 instances of a capacity provider in a
//! VPC of their own). Everything only the second needs carries the
//! `ManagedInstances` condition; what differs per function is an `!If` on it,
//! which the `AWS::LanguageExtensions` transform resolves before the SAM
//! transform reads the function (SAM's own `CapacityProviderConfig` takes
//! no intrinsic at its top).

mod costs;
mod functions;
mod managed;
mod monitoring;
mod template;

pub use costs::{ASSUMED_IO_MS, cost_table};
pub use functions::{READ_CACHE_TTL_MS, dynamodb_actions, reserved_concurrency_default};
pub use managed::{
    MANAGED_INSTANCE_TYPES, MANAGED_INSTANCES, MANAGED_MEMORY_GIB_PER_VCPU, MANAGED_MEMORY_MB, fixed_capacity_tier,
    managed_concurrency,
};
use shared::hashing::tier_file::TierFile;
use shared::store::dynamo::schema::TableDefinition;
pub use template::generate;

pub const TEMPLATE_PATH: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../infra/template.yaml");

pub fn generate_from_repo() -> anyhow::Result<String> {
    let tiers = TierFile::parse(shared::hashing::tier_file::EMBEDDED)?;
    generate(&tiers, &TableDefinition::load())
}
