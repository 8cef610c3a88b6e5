//! The committed SAM template is exactly what its sources say.

use shared::function::Function;
use shared::hashing::tier_file::{EMBEDDED, TierFile};
use shared::http::routes;

fn committed() -> String {
    std::fs::read_to_string(sam_template::TEMPLATE_PATH).expect("infra/template.yaml exists")
}

#[test]
fn the_committed_template_matches_the_tier_file_the_table_and_the_routes() {
    assert!(
        committed() == sam_template::generate_from_repo().unwrap(),
        "infra/template.yaml disagrees with infra/tiers.json, infra/table.json or the routes: run `cargo run -p sam-template`"
    );
}

#[test]
fn each_function_gets_the_memory_and_tiers_the_tier_file_names() {
    let tiers = TierFile::parse(EMBEDDED).unwrap();
    let template = committed();
    for function in Function::ALL {
        let memory = tiers.functions[function.name()].memory_mb;
        let binary = format!("Binary: {}\n", function.name());
        let section = &template[template.find(&binary).unwrap()..];
        let section = &section[..section.find("Events:").unwrap()];
        // The tier file's memory in classic mode; Lambda's minimum on managed instances.
        assert!(
            section.contains(&format!(
                "MemorySize: !If [ManagedInstances, {}, {memory}]\n",
                sam_template::MANAGED_MEMORY_MB
            )),
            "{}",
            function.name()
        );
    }
    assert!(template.contains(&format!("Default: '{}'", tiers.tiers["member"].spec)));
    assert!(template.contains(&format!("Default: '{}'", tiers.tiers["guest"].spec)));
}

#[test]
fn every_route_is_an_api_event_of_its_function_and_nothing_is_inline() {
    let template = committed();
    for route in routes() {
        let event = format!("Method: {}\n            Path: {}\n", route.method, route.path);
        assert!(template.contains(&event), "{} {}", route.method, route.path);
    }
    // Secrets by ARN only: no value, and no dynamic reference resolving one
    // into the function's configuration.
    assert!(!template.contains("resolve:secretsmanager"));
    for (setting, resource) in [("JWT_SECRET_ARN", "JwtSecret"), ("PEPPER_ARN", "Pepper")] {
        let line = template
            .lines()
            .find(|l| l.trim_start().starts_with(&format!("{setting}:")))
            .unwrap();
        assert_eq!(line.trim(), format!("{setting}: !Ref {resource}"));
    }
    assert_eq!(
        template.matches("Architectures:\n      - arm64").count(),
        1,
        "arm64 for every function, in Globals"
    );
}

#[test]
fn the_deploy_doc_shows_the_cost_table_of_the_tier_file() {
    let tiers = TierFile::parse(EMBEDDED).unwrap();
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/deploy.md")).unwrap();
    assert!(
        doc.contains(&sam_template::cost_table(&tiers)),
        "docs/deploy.md's cost table is stale: paste `cargo run -p sam-template -- --costs`"
    );
}

#[test]
fn each_function_receives_only_the_secrets_it_uses() {
    let template = committed();
    for function in Function::ALL {
        let binary = format!("Binary: {}\n", function.name());
        let section = &template[template.find(&binary).unwrap()..];
        let section = &section[..section.find("Events:").unwrap()];
        let needs = function.needs();
        assert_eq!(section.contains("JWT_SECRET_ARN:"), needs.tokens, "{}", function.name());
        assert_eq!(section.contains("PEPPER_ARN:"), needs.hashing, "{}", function.name());
        // IAM: exactly the secrets it reads.
        let policy = &section[section.find("Policies:").unwrap()..];
        assert_eq!(policy.contains("- !Ref JwtSecret"), needs.tokens, "{}", function.name());
        assert_eq!(policy.contains("- !Ref Pepper"), needs.hashing, "{}", function.name());
        assert_eq!(
            policy.contains("secretsmanager:GetSecretValue"),
            needs.tokens || needs.hashing,
            "{}",
            function.name()
        );
    }
    let globals = &template[template.find("Globals:").unwrap()..template.find("Resources:").unwrap()];
    assert!(!globals.contains("JWT_SECRET") && !globals.contains("PEPPER"));
    let read = &template[template.find("Binary: read\n").unwrap()..];
    assert!(
        !read[..read.find("Events:").unwrap()].contains("secretsmanager"),
        "read gets no secret"
    );
}

/// The template's resources by logical id, each with its text (the lines
/// under `Resources:` from one two-space-indented key to the next).
fn resources(template: &str) -> Vec<(String, String)> {
    let start = template.find("\nResources:\n").expect("a Resources section") + "\nResources:\n".len();
    let end = template[start..]
        .find("\nOutputs:\n")
        .map_or(template.len(), |i| start + i);
    let mut out: Vec<(String, String)> = Vec::new();
    for line in template[start..end].lines() {
        let key = line.strip_prefix("  ").filter(|rest| !rest.starts_with([' ', '#']));
        match key.and_then(|rest| rest.strip_suffix(':')) {
            Some(id) => out.push((id.to_owned(), String::new())),
            None => {
                if let Some((_, text)) = out.last_mut() {
                    text.push_str(line);
                    text.push('\n');
                }
            }
        }
    }
    out
}

fn resource_type(text: &str) -> &str {
    text.lines()
        .find_map(|l| l.strip_prefix("    Type: "))
        .expect("every resource has a Type")
}

#[test]
fn classic_is_the_default_and_managed_instances_resources_all_carry_the_condition() {
    let template = committed();
    assert!(template.contains(
        "  ComputeMode:\n    Type: String\n    Description: classic - one request per execution environment"
    ));
    assert!(template.contains("      - classic\n      - managed-instances\n    Default: classic\n"));
    assert!(template.contains("  ManagedInstances: !Equals [!Ref ComputeMode, managed-instances]\n"));
    // The transform that resolves the `!If`s before SAM reads them.
    assert!(template.contains("Transform:\n  - AWS::LanguageExtensions\n  - AWS::Serverless-2016-10-31\n"));

    let all = resources(&template);
    let conditioned: Vec<&str> = all
        .iter()
        .filter(|(_, text)| text.contains("    Condition: ManagedInstances\n"))
        .map(|(id, _)| id.as_str())
        .collect();
    for (id, text) in &all {
        let ty = resource_type(text);
        let managed_only = ty.starts_with("AWS::EC2::") || ty == "AWS::Serverless::CapacityProvider";
        assert_eq!(
            conditioned.contains(&id.as_str()),
            managed_only,
            "{id} ({ty}): exactly the VPC, its endpoints and security groups and the capacity provider carry the condition"
        );
    }
    for expected in [
        "ManagedInstancesVpc",
        "ManagedInstancesSubnetA",
        "ManagedInstancesSubnetB",
        "ManagedInstancesRouteTable",
        "DynamoDbEndpoint",
        "SecretsManagerEndpoint",
        "FunctionSecurityGroup",
        "EndpointSecurityGroup",
        "CapacityProvider",
    ] {
        assert!(conditioned.contains(&expected), "{expected}");
    }
    // Classic resources reach the managed-instances ones only inside an
    // `!If [ManagedInstances, ...]`, which the function test below checks.
    let reference = |id: &str| [format!("!Ref {id}\n"), format!("${{{id}}}"), format!("!GetAtt {id}.")];
    for (id, text) in all.iter().filter(|(id, _)| !conditioned.contains(&id.as_str())) {
        let outside_if = match text.find("      CapacityProviderConfig: !If\n") {
            Some(start) => {
                let end = text
                    .find("      FunctionScalingConfig: !If\n")
                    .expect("scaling after capacity");
                format!("{}{}", &text[..start], &text[end..])
            }
            None => text.clone(),
        };
        for managed in &conditioned {
            for r in reference(managed) {
                assert!(
                    !outside_if.contains(&r),
                    "{id} refers to {managed} outside the condition"
                );
            }
        }
    }
    // The bill guard is a parameter, and the capacity provider is Graviton only.
    let provider = &all.iter().find(|(id, _)| id == "CapacityProvider").unwrap().1;
    assert!(provider.contains("MaxVCpuCount: !Ref ManagedInstancesMaxVCpus\n"));
    assert!(provider.contains("        Architectures:\n          - arm64\n"));
    for ty in sam_template::MANAGED_INSTANCE_TYPES {
        assert!(ty.contains("g."), "{ty} is not Graviton");
    }
}

#[test]
fn every_function_gets_the_capacity_provider_only_on_managed_instances() {
    let tiers = TierFile::parse(EMBEDDED).unwrap();
    let template = committed();
    let all = resources(&template);
    let functions: Vec<&(String, String)> = all
        .iter()
        .filter(|(_, text)| resource_type(text) == "AWS::Serverless::Function")
        .collect();
    assert_eq!(functions.len(), Function::ALL.len());
    for function in Function::ALL {
        let id = format!(
            "{}Function",
            function
                .name()
                .split('-')
                .map(|w| w[..1].to_uppercase() + &w[1..])
                .collect::<String>()
        );
        let text = &functions
            .iter()
            .find(|(fid, _)| *fid == id)
            .unwrap_or_else(|| panic!("{id}"))
            .1;
        let concurrency = sam_template::managed_concurrency(function, &tiers).unwrap();
        assert!(
            concurrency >= 2,
            "{id}: Lambda Managed Instances is told apart by a concurrency above 1"
        );
        let expected = format!(
            "      CapacityProviderConfig: !If
        - ManagedInstances
        - Arn: !Sub 'arn:${{AWS::Partition}}:lambda:${{AWS::Region}}:${{AWS::AccountId}}:capacity-provider:${{CapacityProvider}}'
          PerExecutionEnvironmentMaxConcurrency: {concurrency}
          ExecutionEnvironmentMemoryGiBPerVCpu: {}
        - !Ref AWS::NoValue
      FunctionScalingConfig: !If
        - ManagedInstances
        - MinExecutionEnvironments: !Ref ManagedInstancesMinEnvironments
        - !Ref AWS::NoValue
",
            sam_template::MANAGED_MEMORY_GIB_PER_VCPU
        );
        assert!(
            text.contains(&expected),
            "{id}: the capacity provider only under the condition"
        );
        assert_eq!(text.matches("CapacityProviderConfig").count(), 1, "{id}");
        assert_eq!(text.matches("CapacityProvider}").count(), 1, "{id}");
        // No function-level VPC, no provisioned concurrency (Lambda refuses
        // both with a capacity provider), reserved concurrency only in classic mode.
        assert!(
            !text.contains("\n      VpcConfig:") && !text.contains("\n      ProvisionedConcurrencyConfig:"),
            "{id}"
        );
        for line in text.lines().filter(|l| l.contains("ReservedConcurrentExecutions:")) {
            assert!(
                line.trim_start()
                    .starts_with("ReservedConcurrentExecutions: !If [ManagedInstances, !Ref AWS::NoValue, "),
                "{id}: {line}"
            );
        }
        assert_eq!(
            text.contains("ReservedConcurrentExecutions:"),
            sam_template::reserved_concurrency_default(function).is_some(),
            "{id}"
        );
    }
    // Managed instances hash with the tier file's fixed-capacity tiers: the
    // tier settings are left unset there, and the hash alarms watch those tiers.
    let globals = &template[template.find("Globals:").unwrap()..template.find("Resources:").unwrap()];
    for (setting, parameter) in [("MEMBER_TIER", "MemberTier"), ("GUEST_TIER", "GuestTier")] {
        assert!(globals.contains(&format!(
            "{setting}: !If [ManagedInstances, !Ref AWS::NoValue, !Ref {parameter}]\n"
        )));
    }
    for tier in ["member", "guest"] {
        let fixed = sam_template::fixed_capacity_tier(&tiers, tier).unwrap();
        let parameter = if tier == "member" { "MemberTier" } else { "GuestTier" };
        let alarm = format!("{}HashP99Alarm", &parameter[..parameter.len() - 4]);
        let text = &all
            .iter()
            .find(|(id, _)| *id == alarm)
            .unwrap_or_else(|| panic!("{alarm}"))
            .1;
        assert!(text.contains(&format!(
            "Value: !If [ManagedInstances, '{}', !Ref {parameter}]\n",
            fixed.spec
        )));
    }
}

#[test]
fn the_dashboard_reads_the_functions_emf_records_and_the_api() {
    let template = committed();
    let all = resources(&template);
    let dashboard = &all.iter().find(|(id, _)| id == "Dashboard").expect("a dashboard").1;
    let namespace = shared::hashing::timing::NAMESPACE;
    for tier in ["member", "guest"] {
        assert!(dashboard.contains(&format!(
            "SEARCH('{{{namespace},function,tier,algorithm}} MetricName=\\\"hash_ms\\\" tier=\\\"{tier}\\\"', 'p99', 60)"
        )));
    }
    assert!(dashboard.contains(r#"["AWS/ApiGateway","5xx","ApiId","${HttpApi}"]"#));
    assert!(dashboard.contains(r#"["AWS/ApiGateway","4xx","ApiId","${HttpApi}"]"#));
    let api = &all.iter().find(|(id, _)| id == "Api5xxAlarm").expect("a 5xx alarm").1;
    assert!(api.contains("      MetricName: 5xx\n") && api.contains("Value: !Ref HttpApi\n"));
}
