//! Each function's resources: the function with its memory, settings,
//! secrets, permissions and routes (from the route table), and its log group.

use crate::events;

use std::fmt::Write as _;

use crate::functions::{
    TRACES_STATEMENT, dynamodb_actions, on_capacity_provider, reserved_concurrency_default, uses_index,
};
use crate::managed::{MANAGED_MEMORY_GIB_PER_VCPU, MANAGED_MEMORY_MB, fixed_capacity_tier, managed_concurrency};
use crate::media::{MEDIA_TIMEOUT_S, media_environment, media_events, media_s3_statements};
use crate::yaml::pascal;
use shared::function::Function;
use shared::hashing::tier_file::TierFile;
use shared::http::routes;

/// Every function's resources, in [`Function::ALL`]'s order.
pub(crate) fn function_resources(tiers: &TierFile, managed: bool) -> anyhow::Result<String> {
    let mut t = String::new();
    let all_routes = routes();
    for function in Function::ALL {
        let name = function.name();
        let resource = format!("{}Function", pascal(name));
        let media = function == Function::Media;
        // On the capacity provider in the managed-instances template, or
        // classic Lambda in both (media: crate::functions::on_capacity_provider).
        let provided = managed && on_capacity_provider(function);
        // media is sized by its parameter; the others by the tier file.
        let (memory, tier) = if media {
            ("!Ref MediaMemory".to_owned(), None)
        } else {
            let sizing = tiers
                .functions
                .get(name)
                .ok_or_else(|| anyhow::anyhow!("tier file has no memory size for {name}"))?;
            let memory = if provided { MANAGED_MEMORY_MB } else { sizing.memory_mb };
            (memory.to_string(), sizing.tier.as_deref())
        };
        let tier_note = tier.map_or_else(
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
            comment: {vpc_reason}
          - id: CKV_AWS_116
            comment: {dlq_reason}
          - id: CKV_AWS_173
            comment: The environment holds no secret, only the ARNs of the secrets the function reads at its cold start; it is encrypted at rest with the AWS-managed key.{concurrency_skip}
    Properties:
      Description: 'Routes of docs/API.md served by `{name}` ({tier_note})'
      CodeUri: ../functions/{name}/
      MemorySize: {memory}",
            vpc_reason = if provided {
                "It runs in the capacity provider's VPC, where a function-level VpcConfig is not allowed."
            } else if media {
                "The function reaches only DynamoDB, S3 and Secrets Manager over the AWS API; a VPC adds NAT cost and cold-start latency and protects nothing here (it runs on classic Lambda in both templates)."
            } else {
                "The function reaches only DynamoDB and Secrets Manager over the AWS API; a VPC adds NAT cost and cold-start latency and protects nothing here (the managed-instances template runs the functions in a VPC of their own)."
            },
            dlq_reason = if media {
                "Invoked synchronously by API Gateway, and asynchronously by EventBridge (uploads, the sweep's schedule) - a check that fails its retries leaves its upload pending until the sweep deletes it, a failed sweep is repeated by the next; MediaErrorsAlarm watches both, and the events hold only a key."
            } else {
                "Invoked synchronously by API Gateway; a dead-letter queue applies only to asynchronous invocations."
            },
            concurrency_skip = if media {
                "\n          - id: CKV_AWS_115\n            comment: No password hashing, so no cost guard is needed; its checks are bounded by the grant quotas (docs/API.md, Images) and its routes by the API's throttling."
            } else if provided {
                "\n          - id: CKV_AWS_115\n            comment: On managed instances the bill is bounded by the capacity provider's vCPUs (ManagedInstancesMaxVCpus), and each environment takes at most PerExecutionEnvironmentMaxConcurrency requests."
            } else if reserved_concurrency_default(function).is_none() {
                "\n          - id: CKV_AWS_115\n            comment: No password hashing here, so no cost guard is needed; the API's route throttling bounds it."
            } else {
                ""
            },
        )?;
        if !managed && reserved_concurrency_default(function).is_some() {
            writeln!(
                t,
                "      ReservedConcurrentExecutions: !Ref {}ReservedConcurrency",
                pascal(name)
            )?;
        }
        if media {
            writeln!(t, "      Timeout: {MEDIA_TIMEOUT_S}")?;
        }
        if provided {
            t += &capacity_provider_config(function, tiers)?;
        }
        // Only the secrets this function uses (docs/DESIGN.md, Configuration),
        // by ARN: the function reads them from Secrets Manager at its cold
        // start (shared::runtime::secrets), so no value is in its configuration.
        let needs = function.needs();
        if needs.tokens || needs.hashing || needs.tags || function == Function::Read || media {
            writeln!(t, "      Environment:\n        Variables:")?;
        }
        if function == Function::Read {
            writeln!(t, "          READ_CACHE_TTL_MS: !Ref ReadCacheTtlMs")?;
        }
        if media {
            t += media_environment();
        }
        // Whoever checks bans decides staff: moderation, and the
        // writers (staff are never stopped by an address ban); and the
        // account function tells a member their roles.
        if needs.tags || function == Function::Account {
            writeln!(t, "          ADMIN_USERNAMES: !Ref AdminUsernames")?;
        }
        let secrets: Vec<&str> = [
            (needs.tokens, "JwtSecret"),
            (needs.hashing, "Pepper"),
            (needs.tags, "TagKey"),
        ]
        .into_iter()
        .filter_map(|(needed, resource)| needed.then_some(resource))
        .collect();
        for resource in &secrets {
            let setting = match *resource {
                "JwtSecret" => "JWT_SECRET_ARN",
                "Pepper" => "PEPPER_ARN",
                _ => "TAG_KEY_ARN",
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
        if media {
            t += &media_s3_statements();
        }
        t += TRACES_STATEMENT;
        writeln!(t, "      Events:")?;
        // Each route's event is named by its operationId, so a row added to
        // the table renames no other event.
        for route in all_routes.iter().filter(|r| r.function == function) {
            writeln!(
                t,
                "        {}:\n          Type: HttpApi\n          Properties:\n            ApiId: !Ref HttpApi\n            Method: {}\n            Path: {}",
                pascal(route.doc.operation_id),
                route.method,
                route.path
            )?;
        }
        if media {
            t += &media_events();
        }
        t += &events::log_group(&resource);
    }
    Ok(t)
}

/// A function's place on the capacity provider: its requests per
/// environment (why that many) and the environments it keeps running.
fn capacity_provider_config(function: Function, tiers: &TierFile) -> anyhow::Result<String> {
    let mut t = String::new();
    let sizing = &tiers.functions[function.name()];
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
      CapacityProviderConfig:
        Arn: !Sub 'arn:${{AWS::Partition}}:lambda:${{AWS::Region}}:${{AWS::AccountId}}:capacity-provider:${{CapacityProvider}}'
        PerExecutionEnvironmentMaxConcurrency: {concurrency}
        ExecutionEnvironmentMemoryGiBPerVCpu: {MANAGED_MEMORY_GIB_PER_VCPU}
      FunctionScalingConfig:
        MinExecutionEnvironments: !Ref ManagedInstancesMinEnvironments"
        )?;
    Ok(t)
}
