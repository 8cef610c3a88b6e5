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

use std::fmt::Write as _;

use shared::function::Function;
use shared::hashing::tier_file::{ChosenTier, TierFile};
use shared::http::routes;
use shared::store::dynamo::Layout;
use shared::store::dynamo::schema::TableDefinition;

/// The `read` function's cache: each execution environment reads a hot
/// post, board page and counts once a second instead of once per request
/// (README, "At internet scale").
pub const READ_CACHE_TTL_MS: u64 = 1_000;

/// DynamoDB actions each function needs, from what its handlers call in the
/// adapter (transactions need the per-item actions of their parts).
pub fn dynamodb_actions(function: Function) -> &'static [&'static str] {
    match function {
        // create_member: conditional put.
        Function::Signup => &["dynamodb:PutItem"],
        // member_credentials, replace_password_hash, attempt counters.
        Function::Login => &["dynamodb:GetItem", "dynamodb:UpdateItem"],
        // view_post: the post (get) and its comments (query), the view on a
        // counter shard (update, which also creates the shard), the other
        // shards (batch get); list_posts: query on GSI1 and the shards.
        Function::Read => &[
            "dynamodb:GetItem",
            "dynamodb:Query",
            "dynamodb:UpdateItem",
            "dynamodb:BatchGetItem",
        ],
        // posts, comments (transaction: put + shard update + condition check),
        // delete with shards and children, the detail after an edit (shards).
        Function::MemberWrite => &[
            "dynamodb:BatchGetItem",
            "dynamodb:PutItem",
            "dynamodb:GetItem",
            "dynamodb:UpdateItem",
            "dynamodb:DeleteItem",
            "dynamodb:ConditionCheckItem",
            "dynamodb:Query",
            "dynamodb:BatchWriteItem",
        ],
        Function::GuestPost => &[
            "dynamodb:BatchGetItem",
            "dynamodb:PutItem",
            "dynamodb:GetItem",
            "dynamodb:UpdateItem",
            "dynamodb:DeleteItem",
            "dynamodb:Query",
            "dynamodb:BatchWriteItem",
        ],
        Function::GuestComment => &[
            "dynamodb:PutItem",
            "dynamodb:GetItem",
            "dynamodb:UpdateItem",
            "dynamodb:DeleteItem",
            "dynamodb:ConditionCheckItem",
        ],
        // like/unlike transaction (put or delete + shard update), the post's
        // board before a shard's first write (get), the likes of every shard (batch get).
        Function::Like => &[
            "dynamodb:PutItem",
            "dynamodb:DeleteItem",
            "dynamodb:UpdateItem",
            "dynamodb:GetItem",
            "dynamodb:BatchGetItem",
        ],
    }
}

/// Whether a function reads the board index (GSI1).
fn uses_index(function: Function) -> bool {
    matches!(function, Function::Read)
}

/// The hashing functions get reserved concurrency: a flood of password
/// attempts is capped in parallel invocations, so it cannot become an
/// unbounded bill (excess requests get 429 from Lambda, 503 to the client).
pub fn reserved_concurrency_default(function: Function) -> Option<u32> {
    match function {
        Function::Signup => Some(20),
        Function::Login => Some(50),
        Function::GuestPost | Function::GuestComment => Some(30),
        _ => None,
    }
}

/// The condition every managed-instances-only resource carries.
pub const MANAGED_INSTANCES: &str = "ManagedInstances";

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
            // for managed instances (shared::config, Compute).
            (1 + (chosen.budget_ms / chosen.verify_p95_ms).floor() as u32).max(2)
        }
        (None, Function::Read) => 64,
        (None, _) => 32,
    })
}

/// The hashing functions of each tier, `[(tier, [function names])]`, from
/// the tier file (the EMF `function` dimension is the function's name).
fn functions_by_tier(tiers: &TierFile) -> Vec<(&'static str, Vec<&str>)> {
    ["member", "guest"]
        .into_iter()
        .map(|tier| {
            let names = tiers
                .functions
                .iter()
                .filter(|(_, sizing)| sizing.tier.as_deref() == Some(tier))
                .map(|(name, _)| name.as_str())
                .collect();
            (tier, names)
        })
        .filter(|(_, names): &(_, Vec<&str>)| !names.is_empty())
        .collect()
}

fn pascal(name: &str) -> String {
    name.split('-').map(|w| w[..1].to_uppercase() + &w[1..]).collect()
}

fn yaml_list(items: &[String], indent: usize) -> String {
    items.iter().map(|i| format!("{}- {i}\n", " ".repeat(indent))).collect()
}

pub fn generate(tiers: &TierFile, table: &TableDefinition) -> anyhow::Result<String> {
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
    writeln!(
        t,
        "# GENERATED by `cargo run -p sam-template` from the route table, infra/tiers.json
# (measured {measured} on {cpu}) and infra/table.json. Do not edit: change the
# sources and regenerate; a test fails when this file and its sources disagree.
AWSTemplateFormatVersion: '2010-09-09'
# AWS::LanguageExtensions first: it resolves the compute mode's `!If`s before
# the SAM transform reads the functions (deploy with CAPABILITY_AUTO_EXPAND).
Transform:
  - AWS::LanguageExtensions
  - AWS::Serverless-2016-10-31
Description: Community boards on tiered password hashing (arm64 Lambda functions, HTTP API, DynamoDB)

Parameters:
  ComputeMode:
    Type: String
    Description: classic - one request per execution environment, billed per request; managed-instances - Lambda Managed Instances, many requests per environment on Graviton EC2 instances in a VPC of their own, billed per instance-hour
    AllowedValues:
      - classic
      - managed-instances
    Default: classic
  ManagedInstancesMaxVCpus:
    Type: Number
    Description: Bill guard (managed-instances) - the most vCPUs the capacity provider runs at once; its instances are billed while they run, busy or not
    Default: 16
    MinValue: 2
    MaxValue: 15000
  ManagedInstancesMinEnvironments:
    Type: Number
    Description: Execution environments (one vCPU each) every function keeps running in managed-instances mode; Lambda's default of 3 for all seven functions would not fit the default bill guard
    Default: 1
    MinValue: 1
    MaxValue: 15000
  CorsOrigins:
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
    Default: 400
  MemberTier:
    Type: String
    Description: Member password tier (from infra/tiers.json) in classic mode; managed instances hash with the tier file's fixed-capacity tier ({member_fixed})
    Default: '{member}'
  GuestTier:
    Type: String
    Description: Guest password tier (from infra/tiers.json) in classic mode; managed instances hash with the tier file's fixed-capacity tier ({guest_fixed})
    Default: '{guest}'
  Boards:
    Type: String
    Description: Board slugs
    Default: free,qna,notice
  LogRetentionDays:
    Type: Number
    Default: 30
  CounterShards:
    Type: Number
    Description: Counter shards per post (README, Single-table design) - about 1,000 views/s of one post per shard; may only grow
    Default: {shards}
    MinValue: 1
    MaxValue: {max_shards}
  ReadCacheTtlMs:
    Type: Number
    Description: How long the read function serves a post, a board page and counts from memory (0 - never)
    Default: {read_cache}
    MinValue: 0",
        measured = tiers.measured_at,
        cpu = tiers.machine.cpu,
        member = tier_spec("member")?,
        guest = tier_spec("guest")?,
        member_fixed = fixed_spec("member")?,
        guest_fixed = fixed_spec("guest")?,
        shards = Layout::DEFAULT_SHARDS,
        max_shards = Layout::MAX_SHARDS,
        read_cache = READ_CACHE_TTL_MS,
    )?;
    for function in Function::ALL {
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
    writeln!(
        t,
        "
Conditions:
  {MANAGED_INSTANCES}: !Equals [!Ref ComputeMode, managed-instances]
  HasAlarmTopic: !Not [!Equals [!Ref AlarmTopicArn, '']]

Globals:
  Function:
    Runtime: provided.al2023
    Architectures:
      - arm64
    Handler: bootstrap
    Timeout: 10
    LoggingConfig:
      LogFormat: JSON
      ApplicationLogLevel: INFO
      SystemLogLevel: WARN
    Environment:
      Variables:
        TABLE_NAME: !Ref Table
        # Unset on managed instances: the functions then hash with the tier
        # file's fixed-capacity tiers (shared::config, Compute).
        MEMBER_TIER: !If [{MANAGED_INSTANCES}, !Ref AWS::NoValue, !Ref MemberTier]
        GUEST_TIER: !If [{MANAGED_INSTANCES}, !Ref AWS::NoValue, !Ref GuestTier]
        BOARDS: !Ref Boards
        COUNTER_SHARDS: !Ref CounterShards

Resources:
  JwtSecret:
    Type: AWS::SecretsManager::Secret
    Metadata:
      checkov:
        skip:
          - id: CKV_AWS_149
            comment: The AWS-managed key is enough - only the functions that use this secret may read it (by IAM, at their cold start); a CMK adds cost without a reader to restrict.
          - id: CKV2_AWS_57
            comment: Rotating the JWT key signs everyone out; rotate by hand and redeploy (see README, Deploy).
    Properties:
      Description: HS256 key for bearer tokens
      GenerateSecretString:
        PasswordLength: 64
        ExcludePunctuation: true

  Pepper:
    Type: AWS::SecretsManager::Secret
    Metadata:
      checkov:
        skip:
          - id: CKV_AWS_149
            comment: The AWS-managed key is enough - only the functions that use this secret may read it (by IAM, at their cold start); a CMK adds cost without a reader to restrict.
          - id: CKV2_AWS_57
            comment: A pepper rotation must keep the old one in PEPPER_PREVIOUS until hashes are upgraded; automatic rotation would lock users out.
    Properties:
      Description: Pepper for password pre-hashing (HMAC-SHA-384)
      GenerateSecretString:
        PasswordLength: 64
        ExcludePunctuation: true

  Table:
    Type: AWS::DynamoDB::Table
    DeletionPolicy: Retain
    UpdateReplacePolicy: Retain
    Metadata:
      checkov:
        skip:
          - id: CKV_AWS_119
            comment: Encrypted at rest with the AWS-owned key (SSESpecification); a CMK adds per-request KMS cost.
    Properties:
      BillingMode: {billing}
      PointInTimeRecoverySpecification:
        PointInTimeRecoveryEnabled: true
      SSESpecification:
        SSEEnabled: true
      TimeToLiveSpecification:
        AttributeName: {ttl}
        Enabled: {ttl_enabled}
      AttributeDefinitions:",
        billing = table.billing_mode,
        ttl = table.time_to_live_specification.attribute_name,
        ttl_enabled = table.time_to_live_specification.enabled,
    )?;
    for a in &table.attribute_definitions {
        writeln!(
            t,
            "        - AttributeName: {}\n          AttributeType: {}",
            a.attribute_name, a.attribute_type
        )?;
    }
    writeln!(t, "      KeySchema:")?;
    for k in &table.key_schema {
        writeln!(
            t,
            "        - AttributeName: {}\n          KeyType: {}",
            k.attribute_name, k.key_type
        )?;
    }
    writeln!(t, "      GlobalSecondaryIndexes:")?;
    for index in &table.global_secondary_indexes {
        writeln!(t, "        - IndexName: {}\n          KeySchema:", index.index_name)?;
        for k in &index.key_schema {
            writeln!(
                t,
                "            - AttributeName: {}\n              KeyType: {}",
                k.attribute_name, k.key_type
            )?;
        }
        writeln!(
            t,
            "          Projection:\n            ProjectionType: {}",
            index.projection.projection_type
        )?;
        if !index.projection.non_key_attributes.is_empty() {
            writeln!(t, "            NonKeyAttributes:")?;
            t += &yaml_list(&index.projection.non_key_attributes, 14);
        }
    }

    writeln!(
        t,
        "
  ApiAccessLogs:
    Type: AWS::Logs::LogGroup
    Metadata:
      checkov:
        skip:
          - id: CKV_AWS_158
            comment: Access logs hold no secrets (no bodies, no headers); the default encryption of CloudWatch Logs applies.
    Properties:
      RetentionInDays: !Ref LogRetentionDays

  HttpApi:
    Type: AWS::Serverless::HttpApi
    Properties:
      DefaultRouteSettings:
        ThrottlingRateLimit: !Ref ThrottlingRateLimit
        ThrottlingBurstLimit: !Ref ThrottlingBurstLimit
      CorsConfiguration:
        AllowOrigins: !Ref CorsOrigins
        AllowMethods:
          - GET
          - POST
          - PUT
          - DELETE
        AllowHeaders:
          - content-type
          - authorization
        ExposeHeaders:
          - retry-after
      AccessLogSettings:
        DestinationArn: !GetAtt ApiAccessLogs.Arn
        Format: '{{\"requestId\":\"$context.requestId\",\"ip\":\"$context.identity.sourceIp\",\"method\":\"$context.httpMethod\",\"path\":\"$context.path\",\"status\":\"$context.status\",\"latency\":\"$context.responseLatency\",\"integrationLatency\":\"$context.integrationLatency\"}}'"
    )?;
    t += &managed_instances_resources(tiers);

    let all_routes = routes();
    for function in Function::ALL {
        let name = function.name();
        let resource = format!("{}Function", pascal(name));
        let sizing = tiers
            .functions
            .get(name)
            .ok_or_else(|| anyhow::anyhow!("tier file has no memory size for {name}"))?;
        let tier_note = sizing.tier.as_deref().map_or_else(
            || "no password hashing".to_owned(),
            |tier| format!("hashes with the {tier} tier"),
        );
        // CodeUri is the function's own package: `sam build` runs cargo
        // there, which builds it with only the features its Cargo.toml asks
        // of `shared`. From the workspace root, `--bin <name>` unifies the
        // features of every member (SQLite in every function, 1.7 MB more).
        writeln!(
            t,
            "
  {resource}:
    Type: AWS::Serverless::Function
    Metadata:
      BuildMethod: rust-cargolambda
      BuildProperties:
        Binary: {name}
      checkov:
        skip:
          - id: CKV_AWS_117
            comment: Classic mode - the function reaches only DynamoDB and Secrets Manager over the AWS API; a VPC adds NAT cost and cold-start latency and protects nothing here. Managed-instances mode runs it in the capacity provider's VPC, where a function-level VpcConfig is not allowed.
          - id: CKV_AWS_116
            comment: Invoked synchronously by API Gateway; a dead-letter queue applies only to asynchronous invocations.
          - id: CKV_AWS_173
            comment: The environment holds no secret, only the ARNs of the secrets the function reads at its cold start; it is encrypted at rest with the AWS-managed key.{concurrency_skip}
    Properties:
      Description: 'Routes of docs/API.md served by `{name}` ({tier_note})'
      CodeUri: ../functions/{name}/
      MemorySize: !If [{MANAGED_INSTANCES}, {MANAGED_MEMORY_MB}, {memory}]",
            memory = sizing.memory_mb,
            concurrency_skip = if reserved_concurrency_default(function).is_none() {
                "\n          - id: CKV_AWS_115\n            comment: No password hashing here, so no cost guard is needed; the API's route throttling bounds it."
            } else {
                ""
            },
        )?;
        if reserved_concurrency_default(function).is_some() {
            writeln!(
                t,
                "      # On managed instances the bill is the capacity provider's vCPUs
      # (ManagedInstancesMaxVCpus), and each environment's requests are capped below.
      ReservedConcurrentExecutions: !If [{MANAGED_INSTANCES}, !Ref AWS::NoValue, !Ref {}ReservedConcurrency]",
                pascal(name)
            )?;
        }
        let concurrency = managed_concurrency(function, tiers)?;
        let why = match &sizing.tier {
            Some(tier) => {
                let chosen = fixed_capacity_tier(tiers, tier).expect("checked by managed_concurrency");
                format!(
                    "the running hash and those that start within the {tier} tier's budget: 1 + {budget} / {p95} ms ({spec}, verify P95)",
                    budget = chosen.budget_ms,
                    p95 = chosen.verify_p95_ms,
                    spec = chosen.spec,
                )
            }
            None if function == Function::Read => {
                "mostly served from its cache, which all of an environment's requests share".to_owned()
            }
            None => "~1 ms of CPU around ~20 ms of DynamoDB I/O each".to_owned(),
        };
        writeln!(
            t,
            "      # Managed instances: one vCPU per environment ({MANAGED_MEMORY_MB} MB at {MANAGED_MEMORY_GIB_PER_VCPU} GiB per vCPU),
      # {concurrency} requests at once - {why}.
      CapacityProviderConfig: !If
        - {MANAGED_INSTANCES}
        - Arn: !Sub 'arn:${{AWS::Partition}}:lambda:${{AWS::Region}}:${{AWS::AccountId}}:capacity-provider:${{CapacityProvider}}'
          PerExecutionEnvironmentMaxConcurrency: {concurrency}
          ExecutionEnvironmentMemoryGiBPerVCpu: {MANAGED_MEMORY_GIB_PER_VCPU}
        - !Ref AWS::NoValue
      FunctionScalingConfig: !If
        - {MANAGED_INSTANCES}
        - MinExecutionEnvironments: !Ref ManagedInstancesMinEnvironments
        - !Ref AWS::NoValue"
        )?;
        // Only the secrets this function uses (docs/DESIGN.md, Configuration),
        // by ARN: the function reads them from Secrets Manager at its cold
        // start (shared::secrets), so no value is in its configuration.
        let needs = function.needs();
        if needs.tokens || needs.hashing || function == Function::Read {
            writeln!(t, "      Environment:\n        Variables:")?;
        }
        if function == Function::Read {
            writeln!(t, "          READ_CACHE_TTL_MS: !Ref ReadCacheTtlMs")?;
        }
        let secrets: Vec<&str> = [(needs.tokens, "JwtSecret"), (needs.hashing, "Pepper")]
            .into_iter()
            .filter_map(|(needed, resource)| needed.then_some(resource))
            .collect();
        for resource in &secrets {
            let setting = if *resource == "JwtSecret" {
                "JWT_SECRET_ARN"
            } else {
                "PEPPER_ARN"
            };
            writeln!(t, "          {setting}: !Ref {resource}")?;
        }
        writeln!(
            t,
            "      Policies:\n        - Version: '2012-10-17'\n          Statement:\n            - Effect: Allow\n              Action:"
        )?;
        for action in dynamodb_actions(function) {
            writeln!(t, "                - {action}")?;
        }
        writeln!(t, "              Resource:\n                - !GetAtt Table.Arn")?;
        if uses_index(function) {
            writeln!(t, "                - !Sub '${{Table.Arn}}/index/*'")?;
        }
        if !secrets.is_empty() {
            writeln!(
                t,
                "            - Effect: Allow\n              Action:\n                - secretsmanager:GetSecretValue\n              Resource:"
            )?;
            for resource in &secrets {
                writeln!(t, "                - !Ref {resource}")?;
            }
        }
        writeln!(t, "      Events:")?;
        for (i, route) in all_routes.iter().filter(|r| r.function == function).enumerate() {
            writeln!(
                t,
                "        Route{i}:\n          Type: HttpApi\n          Properties:\n            ApiId: !Ref HttpApi\n            Method: {}\n            Path: {}",
                route.method, route.path
            )?;
        }
        writeln!(
            t,
            "\n  {resource}Logs:\n    Type: AWS::Logs::LogGroup\n    Metadata:\n      checkov:\n        skip:\n          - id: CKV_AWS_158\n            comment: Function logs hold no secrets (a test scans them); the default encryption of CloudWatch Logs applies.\n    Properties:\n      LogGroupName: !Sub /aws/lambda/${{{resource}}}\n      RetentionInDays: !Ref LogRetentionDays"
        )?;
    }

    t += &monitoring_resources(tiers)?;
    writeln!(
        t,
        "
Outputs:
  ApiUrl:
    Description: Base URL of the API (set API_URL to this for the end-to-end and load tests)
    Value: !Sub 'https://${{HttpApi}}.execute-api.${{AWS::Region}}.${{AWS::URLSuffix}}'
  TableName:
    Value: !Ref Table
  DashboardUrl:
    Description: Hash times per tier and the API's errors (CloudWatch)
    Value: !Sub 'https://${{AWS::Region}}.console.aws.amazon.com/cloudwatch/home?region=${{AWS::Region}}#dashboards:name=${{Dashboard}}'
  CapacityProviderName:
    Condition: {MANAGED_INSTANCES}
    Description: The Lambda Managed Instances capacity provider the functions run on
    Value: !Ref CapacityProvider"
    )?;
    Ok(t)
}

/// The managed-instances network and capacity provider: a VPC of its own
/// with two private subnets and no route out but the endpoints the functions
/// use (DynamoDB by a free gateway endpoint; Secrets Manager, read at cold
/// start, and CloudWatch Logs, which carries the functions' logs and EMF
/// metrics, by interface endpoints). Every resource carries the
/// [`MANAGED_INSTANCES`] condition.
fn managed_instances_resources(tiers: &TierFile) -> String {
    let cidr = "10.42.0.0/16";
    let subnets = [("A", 0, "10.42.0.0/20"), ("B", 1, "10.42.16.0/20")];
    let utilization = tiers
        .fixed_capacity
        .as_ref()
        .map_or(70.0, |f| (f.max_utilization * 100.0).round());
    let mut t = format!(
        "
  # --- Lambda Managed Instances (ComputeMode managed-instances) ---
  ManagedInstancesVpc:
    Type: AWS::EC2::VPC
    Condition: {MANAGED_INSTANCES}
    Properties:
      CidrBlock: {cidr}
      EnableDnsSupport: true
      EnableDnsHostnames: true
      Tags:
        - Key: Name
          Value: !Sub '${{AWS::StackName}}-managed-instances'

  ManagedInstancesRouteTable:
    Type: AWS::EC2::RouteTable
    Condition: {MANAGED_INSTANCES}
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
    Condition: {MANAGED_INSTANCES}
    Properties:
      VpcId: !Ref ManagedInstancesVpc
      CidrBlock: {block}
      AvailabilityZone: !Select [{az}, !GetAZs '']
      MapPublicIpOnLaunch: false

  ManagedInstancesSubnet{name}Routes:
    Type: AWS::EC2::SubnetRouteTableAssociation
    Condition: {MANAGED_INSTANCES}
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
    Condition: {MANAGED_INSTANCES}
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
    Condition: {MANAGED_INSTANCES}
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
    Condition: {MANAGED_INSTANCES}
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
    Condition: {MANAGED_INSTANCES}
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
    Condition: {MANAGED_INSTANCES}
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

/// The CloudWatch namespace the functions' EMF hash records go to
/// (`shared::hashing::timing::NAMESPACE`).
const HASH_NAMESPACE: &str = shared::hashing::timing::NAMESPACE;

fn monitoring_parameters(tiers: &TierFile) -> anyhow::Result<String> {
    let mut t = String::new();
    for (tier, _) in functions_by_tier(tiers) {
        let budget = fixed_capacity_tier(tiers, tier)
            .ok_or_else(|| anyhow::anyhow!("tier file has no {tier} tier"))?
            .budget_ms;
        let _ = write!(
            t,
            "  {Tier}HashP99AlarmMs:
    Type: Number
    Description: Alarm when the P99 of {tier}-tier hash times (hash_ms) stays above this many ms - the tier is too slow for the CPU it runs on (default - its budget in infra/tiers.json)
    Default: {budget}
",
            Tier = pascal(tier),
        );
    }
    t += "  Api5xxAlarmThreshold:
    Type: Number
    Description: Alarm when the API answers more than this many 5xx in 5 minutes (503 is the hashing queue shedding load, or Lambda throttling)
    Default: 25
  AlarmTopicArn:
    Type: String
    Description: SNS topic the alarms notify (empty - none, see them in CloudWatch)
    Default: ''
";
    Ok(t)
}

/// The dashboard (hash time P99 per tier, queue wait, the API's 4xx/5xx)
/// and the alarms on them, in both modes. The hash alarms name the exact
/// metrics (alarms cannot SEARCH): the `algorithm` dimension is the tier the
/// mode hashes with.
fn monitoring_resources(tiers: &TierFile) -> anyhow::Result<String> {
    let by_tier = functions_by_tier(tiers);
    let search = |metric: &str, filter: &str| {
        format!("SEARCH('{{{HASH_NAMESPACE},function,tier,algorithm}} MetricName=\"{metric}\"{filter}', 'p99', 60)")
    };
    let mut widgets = Vec::new();
    for (i, (tier, _)) in by_tier.iter().enumerate() {
        widgets.push(serde_json::json!({
            "type": "metric",
            "x": 12 * (i % 2), "y": 6 * (i / 2), "width": 12, "height": 6,
            "properties": {
                "title": format!("hash_ms P99, {tier} tier (per function and algorithm)"),
                "region": "${AWS::Region}",
                "view": "timeSeries",
                "period": 60,
                "metrics": [[{"expression": search("hash_ms", &format!(" tier=\"{tier}\"")), "id": tier}]],
                "annotations": {"horizontal": [{"label": "alarm", "value": format!("@@{}HashP99AlarmMs@@", pascal(tier))}]},
                "yAxis": {"left": {"min": 0}}
            }
        }));
    }
    let y = 6 * by_tier.len().div_ceil(2);
    widgets.push(serde_json::json!({
        "type": "metric",
        "x": 0, "y": y, "width": 12, "height": 6,
        "properties": {
            "title": "queue_wait_ms P99 (hashing queue)",
            "region": "${AWS::Region}",
            "view": "timeSeries",
            "period": 60,
            "metrics": [[{"expression": search("queue_wait_ms", ""), "id": "wait"}]],
            "yAxis": {"left": {"min": 0}}
        }
    }));
    widgets.push(serde_json::json!({
        "type": "metric",
        "x": 12, "y": y, "width": 12, "height": 6,
        "properties": {
            "title": "API 4xx and 5xx",
            "region": "${AWS::Region}",
            "view": "timeSeries",
            "stat": "Sum",
            "period": 60,
            "metrics": [
                ["AWS/ApiGateway", "4xx", "ApiId", "${HttpApi}"],
                ["AWS/ApiGateway", "5xx", "ApiId", "${HttpApi}"]
            ],
            "annotations": {"horizontal": [{"label": "5xx alarm (per 5 minutes)", "value": "@@Api5xxAlarmThreshold@@"}]},
            "yAxis": {"left": {"min": 0}}
        }
    }));
    // One line per widget.
    let mut body = String::from("{\"widgets\": [\n");
    for (i, widget) in widgets.iter().enumerate() {
        let comma = if i + 1 < widgets.len() { "," } else { "" };
        let _ = writeln!(body, "  {}{comma}", serde_json::to_string(widget)?);
    }
    body += "]}";
    // Parameters as numbers: `"@@Name@@"` becomes `${Name}`, which !Sub fills.
    while let Some(start) = body.find("\"@@") {
        let end = start + 3 + body[start + 3..].find("@@\"").expect("closing marker");
        let name = body[start + 3..end].to_owned();
        body.replace_range(start..end + 3, &format!("${{{name}}}"));
    }
    let body: String = body.lines().map(|l| format!("        {l}\n")).collect();
    let mut t = format!(
        "
  Dashboard:
    Type: AWS::CloudWatch::Dashboard
    Properties:
      DashboardBody: !Sub |
{body}"
    );
    let alarm_actions = "      AlarmActions: !If [HasAlarmTopic, [!Ref AlarmTopicArn], !Ref AWS::NoValue]";
    for (tier, functions) in &by_tier {
        let fixed = fixed_capacity_tier(tiers, tier).ok_or_else(|| anyhow::anyhow!("tier file has no {tier} tier"))?;
        let tier_pascal = pascal(tier);
        let ids: Vec<String> = (0..functions.len()).map(|i| format!("m{i}")).collect();
        let _ = write!(
            t,
            "
  {tier_pascal}HashP99Alarm:
    Type: AWS::CloudWatch::Alarm
    Properties:
      AlarmDescription: !Sub 'P99 of {tier}-tier hash times ({names}) above ${{{tier_pascal}HashP99AlarmMs}} ms - the tier is too slow for this CPU (recalibrate, README) or hashing is starved'
      ComparisonOperator: GreaterThanThreshold
      Threshold: !Ref {tier_pascal}HashP99AlarmMs
      EvaluationPeriods: 3
      DatapointsToAlarm: 2
      TreatMissingData: notBreaching
{alarm_actions}
      Metrics:
        - Id: worst
          Label: slowest function's P99
          Expression: MAX([{ids}])
          ReturnData: true
",
            names = functions.join(", "),
            ids = ids.join(", "),
        );
        for (id, function) in ids.iter().zip(functions) {
            let _ = write!(
                t,
                "        - Id: {id}
          ReturnData: false
          MetricStat:
            Period: 300
            Stat: p99
            Metric:
              Namespace: {HASH_NAMESPACE}
              MetricName: hash_ms
              Dimensions:
                - Name: function
                  Value: {function}
                - Name: tier
                  Value: {tier}
                - Name: algorithm
                  Value: !If [{MANAGED_INSTANCES}, '{fixed}', !Ref {tier_pascal}Tier]
",
                fixed = fixed.spec,
            );
        }
    }
    let _ = write!(
        t,
        "
  Api5xxAlarm:
    Type: AWS::CloudWatch::Alarm
    Properties:
      AlarmDescription: !Sub 'More than ${{Api5xxAlarmThreshold}} API 5xx in 5 minutes - 503s are the hashing queue shedding load or Lambda throttling (raise the reserved concurrency or ManagedInstancesMaxVCpus), others are faults (see the function logs)'
      Namespace: AWS/ApiGateway
      MetricName: 5xx
      Dimensions:
        - Name: ApiId
          Value: !Ref HttpApi
      Statistic: Sum
      Period: 300
      EvaluationPeriods: 1
      ComparisonOperator: GreaterThanThreshold
      Threshold: !Ref Api5xxAlarmThreshold
      TreatMissingData: notBreaching
{alarm_actions}
"
    );
    Ok(t)
}

pub const TEMPLATE_PATH: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../infra/template.yaml");

pub fn generate_from_repo() -> anyhow::Result<String> {
    let tiers = TierFile::parse(shared::hashing::tier_file::EMBEDDED)?;
    generate(&tiers, &TableDefinition::load())
}

/// Functions that do not hash are I/O-bound; this is the duration assumed
/// for them in the cost table (a few DynamoDB round trips), not a measurement.
pub const ASSUMED_IO_MS: f64 = 20.0;

/// US$ per million requests per function, from the tier file: the measured
/// hash time of the function's tier scaled to its memory's CPU share (plus
/// [`ASSUMED_IO_MS`]), priced with the tier file's Lambda model.
pub fn cost_table(tiers: &TierFile) -> String {
    let model = &tiers.lambda_model;
    let mut md = String::from(
        "| function | memory MB | tier | hashing ms at that memory | + I/O ms (assumed) | US$ per million requests |\n|---|---:|---|---:|---:|---:|\n",
    );
    for function in Function::ALL {
        let sizing = &tiers.functions[function.name()];
        let share = (f64::from(sizing.memory_mb) / f64::from(model.full_cpu_memory_mb)).min(1.0);
        let hashing_ms = sizing
            .tier
            .as_deref()
            .and_then(|t| tiers.tiers.get(t))
            .and_then(|chosen| tiers.table.iter().find(|row| row.spec == chosen.spec))
            .map_or(0.0, |row| row.verify.median_ms / share);
        let duration_s = (hashing_ms + ASSUMED_IO_MS) / 1000.0;
        let usd = 1e6 * f64::from(sizing.memory_mb) / 1024.0 * duration_s * model.usd_per_gb_second
            + model.usd_per_million_requests;
        let _ = writeln!(
            md,
            "| {} | {} | {} | {:.0} | {:.0} | {:.2} |",
            function.name(),
            sizing.memory_mb,
            sizing.tier.as_deref().unwrap_or("-"),
            hashing_ms,
            ASSUMED_IO_MS,
            usd
        );
    }
    md
}
