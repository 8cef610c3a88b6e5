//! How a deployment's CPU meets its hashes (docs/DESIGN.md, Deployments):
//! it decides the gate's size and which of the tier file's choices apply.

/// Where the hashes run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compute {
    /// Classic Lambda: one request per execution environment, whose CPU
    /// share follows its memory. One hash at a time; the latency tiers.
    PerRequest,
    /// Lambda Managed Instances: `concurrency` requests share the
    /// environment's vCPUs (`AWS_LAMBDA_MAX_CONCURRENCY` > 1). The gate
    /// runs one hash per vCPU; the fixed-capacity tiers.
    SharedEnvironment { concurrency: usize },
    /// The VM server: every request shares the machine. The gate leaves one
    /// core to everything else; the fixed-capacity tiers.
    Machine,
}

impl Compute {
    /// Whether the CPU is fixed while requests come and go: the tiers must
    /// then fit the expected hash rate (the tier file's `fixed_capacity`).
    pub fn is_fixed(&self) -> bool {
        !matches!(self, Compute::PerRequest)
    }

    /// Hashes run at once when `HASH_WORKERS` does not say: one on classic
    /// Lambda, one per visible vCPU on a managed instance (hashes run at
    /// idle priority, so requests still take a vCPU first), the cores less
    /// one on the server.
    pub fn default_workers(&self) -> usize {
        let vcpus = std::thread::available_parallelism().map_or(1, |n| n.get());
        match self {
            Compute::PerRequest => 1,
            Compute::SharedEnvironment { .. } => vcpus,
            Compute::Machine => vcpus.saturating_sub(1).max(1),
        }
    }
}
