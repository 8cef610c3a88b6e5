//! Lambda Managed Instances: the instance types, each function's requests
//! per environment, and the VPC and capacity provider the mode adds.

use std::fmt::Write as _;

use shared::function::Function;
use shared::hashing::tier_file::{ChosenTier, TierFile};

/// Memory of every function on managed instances: Lambda's minimum there.
/// With [`MANAGED_MEMORY_GIB_PER_VCPU`] it is one vCPU per execution
/// environment, which the hashing gate sizes itself to (one hash at a time).
pub const MANAGED_MEMORY_MB: u32 = 2048;
pub const MANAGED_MEMORY_GIB_PER_VCPU: u32 = 2;

/// Graviton (arm64) general-purpose and compute types the capacity provider
/// may launch: 2 or 4 vCPUs each, so the fleet grows in small steps under
/// the vCPU bill guard.
pub const MANAGED_INSTANCE_TYPES: &[&str] = &[
    "c7g.large",
    "c7g.xlarge",
    "m7g.large",
    "m7g.xlarge",
    "c8g.large",
    "c8g.xlarge",
    "m8g.large",
    "m8g.xlarge",
];

/// The tier a fixed-capacity deployment hashes with (what the functions pick
/// on managed instances when `MEMBER_TIER`/`GUEST_TIER` are unset):
/// the tier file's `fixed_capacity` choice, else its latency choice.
pub fn fixed_capacity_tier<'a>(tiers: &'a TierFile, tier: &str) -> Option<&'a ChosenTier> {
    let fixed = tiers.fixed_capacity.as_ref().and_then(|f| f.tiers.get(tier));
    fixed.or_else(|| tiers.tiers.get(tier))
}

/// Requests one execution environment (one vCPU) takes at once on managed
/// instances (`PerExecutionEnvironmentMaxConcurrency`; Lambda passes it to
/// the function as `AWS_LAMBDA_MAX_CONCURRENCY`). Lambda's Rust default is 8
/// per vCPU; here:
/// - a hashing function: the running hash plus as many as can queue behind
///   it and still start within the tier's budget (1 + budget / verify P95 of
///   the fixed-capacity tier, at least 2). Beyond that Lambda routes the
///   request to another environment or throttles it (as reserved concurrency
///   does on classic Lambda) instead of queueing it past its budget;
/// - `read`: 64. Mostly answered from its one-second cache, and every
///   request an environment takes shares that cache;
/// - `member-write`, `like`: 32. About 1 ms of CPU around ~20 ms of DynamoDB
///   I/O ([`ASSUMED_IO_MS`]), so ~20 keep a vCPU busy; 32 leaves headroom.
pub fn managed_concurrency(function: Function, tiers: &TierFile) -> anyhow::Result<u32> {
    let name = function.name();
    anyhow::ensure!(
        crate::functions::on_capacity_provider(function),
        "{name} runs on classic Lambda in both templates"
    );
    let sizing = tiers
        .functions
        .get(name)
        .ok_or_else(|| anyhow::anyhow!("tier file has no sizing for {name}"))?;
    Ok(match (&sizing.tier, function) {
        (Some(tier), _) => {
            let chosen =
                fixed_capacity_tier(tiers, tier).ok_or_else(|| anyhow::anyhow!("tier file has no {tier} tier"))?;
            anyhow::ensure!(chosen.verify_p95_ms > 0.0, "{tier} tier has no verify time");
            // At least 2: the functions take AWS_LAMBDA_MAX_CONCURRENCY > 1
            // for managed instances (shared::hashing::Compute, chosen by shared::runtime).
            (1 + (chosen.budget_ms / chosen.verify_p95_ms).floor() as u32).max(2)
        }
        (None, Function::Read) => 64,
        (None, _) => 32,
    })
}

/// The managed-instances network and capacity provider: a VPC of its own
/// with two private subnets and no route out but the endpoints the functions
/// use (DynamoDB by a free gateway endpoint; Secrets Manager, read at cold
/// start, and CloudWatch Logs, which carries the functions' logs and EMF
/// metrics, by interface endpoints). Only the managed-instances template
/// has them.
pub(crate) fn managed_instances_resources(tiers: &TierFile) -> String {
    let cidr = "10.42.0.0/16";
    let subnets = [("A", 0, "10.42.0.0/20"), ("B", 1, "10.42.16.0/20")];
    let utilization = tiers
        .fixed_capacity
        .as_ref()
        .map_or(70.0, |f| (f.max_utilization * 100.0).round());
    let mut t = format!(
        "
  # --- Lambda Managed Instances: the network and the capacity provider ---
  ManagedInstancesVpc:
    Type: AWS::EC2::VPC
    Properties:
      CidrBlock: {cidr}
      EnableDnsSupport: true
      EnableDnsHostnames: true
      Tags:
        - Key: Name
          Value: !Sub '${{AWS::StackName}}-managed-instances'

  ManagedInstancesRouteTable:
    Type: AWS::EC2::RouteTable
    Properties:
      VpcId: !Ref ManagedInstancesVpc
"
    );
    for (name, az, block) in subnets {
        let _ = write!(
            t,
            "
  ManagedInstancesSubnet{name}:
    Type: AWS::EC2::Subnet
    Properties:
      VpcId: !Ref ManagedInstancesVpc
      CidrBlock: {block}
      AvailabilityZone: !Select [{az}, !GetAZs '']
      MapPublicIpOnLaunch: false

  ManagedInstancesSubnet{name}Routes:
    Type: AWS::EC2::SubnetRouteTableAssociation
    Properties:
      SubnetId: !Ref ManagedInstancesSubnet{name}
      RouteTableId: !Ref ManagedInstancesRouteTable
"
        );
    }
    let subnet_ids = |indent: usize| -> String {
        let pad = " ".repeat(indent);
        subnets
            .iter()
            .map(|(name, ..)| format!("\n{pad}- !Ref ManagedInstancesSubnet{name}"))
            .collect()
    };
    let _ = write!(
        t,
        "
  FunctionSecurityGroup:
    Type: AWS::EC2::SecurityGroup
    Properties:
      GroupDescription: The managed instances running the functions - no inbound, HTTPS out
      VpcId: !Ref ManagedInstancesVpc
      SecurityGroupEgress:
        - Description: HTTPS to the AWS APIs; the subnets route only to the VPC endpoints
          IpProtocol: tcp
          FromPort: 443
          ToPort: 443
          CidrIp: 0.0.0.0/0

  EndpointSecurityGroup:
    Type: AWS::EC2::SecurityGroup
    Properties:
      GroupDescription: The interface VPC endpoints - HTTPS from the functions only
      VpcId: !Ref ManagedInstancesVpc
      SecurityGroupIngress:
        - Description: HTTPS from the functions
          IpProtocol: tcp
          FromPort: 443
          ToPort: 443
          SourceSecurityGroupId: !Ref FunctionSecurityGroup

  DynamoDbEndpoint:
    Type: AWS::EC2::VPCEndpoint
    Properties:
      VpcId: !Ref ManagedInstancesVpc
      ServiceName: !Sub 'com.amazonaws.${{AWS::Region}}.dynamodb'
      VpcEndpointType: Gateway
      RouteTableIds:
        - !Ref ManagedInstancesRouteTable
"
    );
    for (resource, service) in [("SecretsManagerEndpoint", "secretsmanager"), ("LogsEndpoint", "logs")] {
        let _ = write!(
            t,
            "
  {resource}:
    Type: AWS::EC2::VPCEndpoint
    Properties:
      VpcId: !Ref ManagedInstancesVpc
      ServiceName: !Sub 'com.amazonaws.${{AWS::Region}}.{service}'
      VpcEndpointType: Interface
      PrivateDnsEnabled: true
      SubnetIds:{subnets}
      SecurityGroupIds:
        - !Ref EndpointSecurityGroup
",
            subnets = subnet_ids(8),
        );
    }
    let types: String = MANAGED_INSTANCE_TYPES
        .iter()
        .map(|ty| format!("\n          - {ty}"))
        .collect();
    let _ = write!(
        t,
        "
  # SAM adds the operator role Lambda manages the instances with
  # (AWSLambdaManagedEC2ResourceOperator).
  CapacityProvider:
    Type: AWS::Serverless::CapacityProvider
    Properties:
      VpcConfig:
        SubnetIds:{subnets}
        SecurityGroupIds:
          - !Ref FunctionSecurityGroup
      InstanceRequirements:
        Architectures:
          - arm64
        AllowedTypes:{types}
      ScalingConfig:
        MaxVCpuCount: !Ref ManagedInstancesMaxVCpus
        # The tier file's fixed-capacity tiers assume hashing workers at most this busy.
        AverageCPUUtilization: {utilization}
",
        subnets = subnet_ids(10),
    );
    t
}
