//! Where the functions run, and so which template deploys them.

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

    /// The committed template of this mode, from the workspace root.
    pub fn template_file(self) -> &'static str {
        match self {
            ComputeMode::Classic => "infra/template.yaml",
            ComputeMode::ManagedInstances => "infra/template-managed-instances.yaml",
        }
    }

    /// The committed template of this mode.
    pub fn template_path(self) -> String {
        format!("{}/../../{}", env!("CARGO_MANIFEST_DIR"), self.template_file())
    }

    /// As samconfig's environments and the docs name it.
    pub fn name(self) -> &'static str {
        match self {
            ComputeMode::Classic => "classic",
            ComputeMode::ManagedInstances => "managed-instances",
        }
    }
}
