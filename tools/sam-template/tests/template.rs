//! The committed SAM templates (one per compute mode) are exactly what
//! their sources say.

use sam_template::ComputeMode;
use shared::function::Function;
use shared::hashing::tier_file::{EMBEDDED, TierFile};
use shared::http::routes;

fn committed(mode: ComputeMode) -> String {
    std::fs::read_to_string(mode.template_path()).unwrap_or_else(|_| panic!("{} exists", mode.template_path()))
}

/// A function's properties, from its `Binary:` line to its events.
fn function_section(template: &str, function: Function) -> &str {
    let binary = format!("Binary: {}\n", function.name());
    let section = &template[template.find(&binary).unwrap()..];
    &section[..section.find("Events:").unwrap()]
}

#[test]
fn each_committed_template_matches_the_tier_file_the_table_and_the_routes() {
    for mode in ComputeMode::ALL {
        assert!(
            committed(mode) == sam_template::generate_from_repo(mode).unwrap(),
            "{} disagrees with infra/tiers.json, infra/table.json or the routes: run `cargo run -p sam-template`",
            mode.template_path()
        );
    }
}

/// What `cargo run -p sam-template -- --check` checks: every generated
/// file, the templates and what `shared` derives from the route table.
#[test]
fn every_generated_file_is_current() {
    let files = sam_template::generated();
    assert_eq!(files.len(), 6);
    for (file, texts) in files {
        let (current, wanted) = texts.unwrap_or_else(|e| panic!("{e}"));
        assert!(current == wanted, "{file} is stale: run `cargo run -p sam-template`");
    }
}

#[test]
fn each_function_gets_the_memory_and_tiers_the_tier_file_names() {
    let tiers = TierFile::parse(EMBEDDED).unwrap();
    let (classic, managed) = (
        committed(ComputeMode::Classic),
        committed(ComputeMode::ManagedInstances),
    );
    for function in Function::ALL {
        if function == Function::Media {
            // Its own parameter, in both modes (classic Lambda in both).
            for template in [&classic, &managed] {
                assert!(function_section(template, function).contains("MemorySize: !Ref MediaMemory\n"));
                assert!(template.contains(&format!(
                    "  MediaMemory:\n    Type: Number\n    Description: Memory of the media function in MB (its share of a vCPU scales with it); an image check decodes up to 50 megapixels\n    Default: {}\n",
                    sam_template::MEDIA_MEMORY_MB
                )));
            }
            assert_eq!(sam_template::MEDIA_MEMORY_MB, 1024);
            continue;
        }
        // The tier file's memory in classic mode; Lambda's minimum on managed instances.
        let memory = tiers.functions[function.name()].memory_mb;
        assert!(
            function_section(&classic, function).contains(&format!("MemorySize: {memory}\n")),
            "{}",
            function.name()
        );
        assert!(
            function_section(&managed, function)
                .contains(&format!("MemorySize: {}\n", sam_template::MANAGED_MEMORY_MB)),
            "{}",
            function.name()
        );
    }
    assert!(classic.contains(&format!("Default: '{}'", tiers.tiers["member"].spec)));
    assert!(classic.contains(&format!("Default: '{}'", tiers.tiers["guest"].spec)));
}

#[test]
fn every_route_is_an_api_event_of_its_function_and_nothing_is_inline() {
    for mode in ComputeMode::ALL {
        let template = committed(mode);
        for route in routes() {
            let event = format!("Method: {}\n            Path: {}\n", route.method, route.path);
            assert!(
                template.contains(&event),
                "{}: {} {}",
                mode.name(),
                route.method,
                route.path
            );
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
            "{}: arm64 for every function, in Globals",
            mode.name()
        );
    }
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
    for mode in ComputeMode::ALL {
        secrets_of(&committed(mode));
    }
}

fn secrets_of(template: &str) {
    for function in Function::ALL {
        let section = function_section(template, function);
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
    // read verifies bearer tokens (my_vote, hidden dislikes for
    // staff): the JWT secret, never the pepper.
    let read = &template[template.find("Binary: read\n").unwrap()..];
    let read = &read[..read.find("Events:").unwrap()];
    assert!(read.contains("- !Ref JwtSecret"), "read reads the JWT secret");
    assert!(!read.contains("Pepper"), "read gets no pepper");
}

/// The template's resources by logical id, each with its text (the lines
/// under `Resources:` from one two-space-indented key to the next).
fn resources(template: &str) -> Vec<(String, String)> {
    let start = template.find("\nResources:\n").expect("a Resources section") + "\nResources:\n".len();
    let end = template[start..]
        .find("\nOutputs:\n")
        .map_or(template.len(), |i| start + i);
    let mut out: Vec<(String, String)> = Vec::new();
    // A comment between resources belongs to neither.
    for line in template[start..end].lines().filter(|l| !l.starts_with("  #")) {
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

/// Resources only the managed-instances mode has.
fn managed_only(ty: &str) -> bool {
    ty.starts_with("AWS::EC2::") || ty == "AWS::Serverless::CapacityProvider"
}

#[test]
fn neither_template_needs_language_extensions_or_a_condition_on_the_compute_mode() {
    for mode in ComputeMode::ALL {
        let template = committed(mode);
        assert!(
            template.contains("\nTransform: AWS::Serverless-2016-10-31\n"),
            "{}: the SAM transform alone",
            mode.name()
        );
        for absent in [
            "LanguageExtensions",
            "ComputeMode",
            "ManagedInstances]",
            "Condition: ManagedInstances",
        ] {
            assert!(!template.contains(absent), "{}: {absent}", mode.name());
        }
        // The one condition left is on the alarms' topic, in plain
        // CloudFormation properties: no `!If` in any function.
        for (id, text) in resources(&template) {
            if resource_type(&text) == "AWS::Serverless::Function" {
                assert!(!text.contains("!If"), "{}: {id} has an !If", mode.name());
            }
        }
    }
}

#[test]
fn the_templates_differ_only_in_what_the_managed_instances_mode_adds_and_changes() {
    let classic = resources(&committed(ComputeMode::Classic));
    let managed = resources(&committed(ComputeMode::ManagedInstances));
    let ids = |all: &[(String, String)], pick: fn(&str) -> bool| -> Vec<String> {
        all.iter()
            .filter(|(_, text)| pick(resource_type(text)))
            .map(|(id, _)| id.clone())
            .collect()
    };
    assert!(
        ids(&classic, managed_only).is_empty(),
        "classic has no VPC or capacity provider"
    );
    let added = ids(&managed, managed_only);
    for expected in [
        "ManagedInstancesVpc",
        "ManagedInstancesSubnetA",
        "ManagedInstancesSubnetB",
        "ManagedInstancesRouteTable",
        "DynamoDbEndpoint",
        "SecretsManagerEndpoint",
        "LogsEndpoint",
        "FunctionSecurityGroup",
        "EndpointSecurityGroup",
        "CapacityProvider",
    ] {
        assert!(added.iter().any(|id| id == expected), "{expected}");
    }
    // Every other resource has the same logical id in both, so deploying
    // the other template to the stack switches modes and keeps the table,
    // the secrets and the API; all but the functions are the same text.
    let shared_ids = |all: &[(String, String)]| ids(all, |ty| !managed_only(ty));
    assert_eq!(shared_ids(&classic), shared_ids(&managed));
    for ((id, classic_text), (_, managed_text)) in classic
        .iter()
        .filter(|(_, t)| !managed_only(resource_type(t)))
        .zip(managed.iter().filter(|(_, t)| !managed_only(resource_type(t))))
    {
        let ty = resource_type(classic_text);
        if ty != "AWS::Serverless::Function" && !id.ends_with("HashP99Alarm") && id != "Api5xxAlarm" {
            assert_eq!(classic_text, managed_text, "{id} differs between the modes");
        }
    }
    let provider = &managed.iter().find(|(id, _)| id == "CapacityProvider").unwrap().1;
    assert!(provider.contains("MaxVCpuCount: !Ref ManagedInstancesMaxVCpus\n"));
    assert!(provider.contains("        Architectures:\n          - arm64\n"));
    for ty in sam_template::MANAGED_INSTANCE_TYPES {
        assert!(ty.contains("g."), "{ty} is not Graviton");
    }
}

#[test]
fn every_function_runs_on_the_capacity_provider_only_in_the_managed_instances_template() {
    let tiers = TierFile::parse(EMBEDDED).unwrap();
    let (classic, managed) = (
        committed(ComputeMode::Classic),
        committed(ComputeMode::ManagedInstances),
    );
    for function in Function::ALL {
        let name = function.name();
        let (in_classic, in_managed) = (
            function_section(&classic, function),
            function_section(&managed, function),
        );
        assert!(!in_classic.contains("CapacityProvider") && !in_classic.contains("FunctionScalingConfig"));
        if !sam_template::on_capacity_provider(function) {
            // media: the same classic function in both templates.
            assert_eq!(function, Function::Media);
            assert_eq!(in_classic, in_managed, "{name}");
            assert!(sam_template::managed_concurrency(function, &tiers).is_err());
            assert!(!in_classic.contains("ReservedConcurrentExecutions"), "{name}");
            continue;
        }
        let concurrency = sam_template::managed_concurrency(function, &tiers).unwrap();
        assert!(
            concurrency >= 2,
            "{name}: Lambda Managed Instances is told apart by a concurrency above 1"
        );
        let expected = format!(
            "      CapacityProviderConfig:
        Arn: !Sub 'arn:${{AWS::Partition}}:lambda:${{AWS::Region}}:${{AWS::AccountId}}:capacity-provider:${{CapacityProvider}}'
        PerExecutionEnvironmentMaxConcurrency: {concurrency}
        ExecutionEnvironmentMemoryGiBPerVCpu: {}
      FunctionScalingConfig:
        MinExecutionEnvironments: !Ref ManagedInstancesMinEnvironments
",
            sam_template::MANAGED_MEMORY_GIB_PER_VCPU
        );
        assert!(in_managed.contains(&expected), "{name}");
        // No function-level VPC, no provisioned concurrency (Lambda refuses
        // both with a capacity provider); reserved concurrency only in classic mode.
        for section in [in_classic, in_managed] {
            assert!(
                !section.contains("\n      VpcConfig:") && !section.contains("\n      ProvisionedConcurrencyConfig:"),
                "{name}"
            );
        }
        assert!(!in_managed.contains("ReservedConcurrentExecutions"), "{name}");
        match sam_template::reserved_concurrency_default(function) {
            Some(_) => assert!(in_classic.contains(&format!(
                "      ReservedConcurrentExecutions: !Ref {}ReservedConcurrency\n",
                name.split('-').map(|w| w[..1].to_uppercase() + &w[1..]).collect::<String>()
            ))),
            None => assert!(!in_classic.contains("ReservedConcurrentExecutions"), "{name}"),
        }
    }
    // Managed instances hash with the tier file's fixed-capacity tiers: the
    // tier settings are left unset there, and the hash alarms watch those tiers.
    let globals = |t: &str| t[t.find("Globals:").unwrap()..t.find("Resources:").unwrap()].to_owned();
    for (setting, parameter) in [("MEMBER_TIER", "MemberTier"), ("GUEST_TIER", "GuestTier")] {
        assert!(globals(&classic).contains(&format!("        {setting}: !Ref {parameter}\n")));
        assert!(!globals(&managed).contains(setting));
        assert!(!managed.contains(&format!("  {parameter}:\n")));
    }
    for tier in ["member", "guest"] {
        let fixed = sam_template::fixed_capacity_tier(&tiers, tier).unwrap();
        let parameter = if tier == "member" { "MemberTier" } else { "GuestTier" };
        let alarm = format!("{}HashP99Alarm", &parameter[..parameter.len() - 4]);
        let text = |template: &str| {
            resources(template)
                .into_iter()
                .find(|(id, _)| *id == alarm)
                .unwrap_or_else(|| panic!("{alarm}"))
                .1
        };
        assert!(text(&classic).contains(&format!("Value: !Ref {parameter}\n")));
        assert!(text(&managed).contains(&format!("Value: '{}'\n", fixed.spec)));
    }
}

#[test]
fn the_dashboard_reads_the_functions_emf_records_and_the_api() {
    for mode in ComputeMode::ALL {
        dashboard_of(&committed(mode));
    }
}

fn dashboard_of(template: &str) {
    let all = resources(template);
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

#[test]
fn the_purge_function_reads_only_purge_marker_inserts_from_the_tables_stream_with_a_dead_letter_queue() {
    let classic = resources(&committed(ComputeMode::Classic));
    let managed = resources(&committed(ComputeMode::ManagedInstances));
    let find = |all: &[(String, String)], id: &str| {
        all.iter()
            .find(|(rid, _)| rid == id)
            .unwrap_or_else(|| panic!("{id}"))
            .1
            .clone()
    };
    let purge = find(&classic, "PurgeFunction");
    assert_eq!(
        purge,
        find(&managed, "PurgeFunction"),
        "the same function in both modes"
    );
    assert!(purge.contains("        Binary: purge\n") && purge.contains("      CodeUri: ../functions/purge/\n"));
    // Its events: the table's stream, filtered to the inserts of markers.
    assert!(purge.contains("          Type: DynamoDB\n"));
    assert!(purge.contains("            Stream: !GetAtt Table.StreamArn\n"));
    assert!(purge.contains(&format!(
        "                - Pattern: '{}'\n",
        sam_template::purge_filter()
    )));
    let filter: serde_json::Value = serde_json::from_str(&sam_template::purge_filter()).unwrap();
    assert_eq!(
        filter,
        serde_json::json!({"eventName": ["INSERT"], "dynamodb": {"Keys": {"PK": {"S": [shared::store::dynamo::PURGE_PK]}}}})
    );
    for setting in [
        "            FunctionResponseTypes:\n              - ReportBatchItemFailures\n",
        "            BisectBatchOnFunctionError: true\n",
        "                Type: SQS\n                Destination: !GetAtt PurgeDeadLetters.Arn\n",
    ] {
        assert!(purge.contains(setting), "{setting}");
    }
    // Exactly the purge's DynamoDB actions, on the table only, no secret.
    let actions: Vec<&str> = purge
        .lines()
        .filter_map(|l| l.trim().strip_prefix("- dynamodb:"))
        .collect();
    let expected: Vec<&str> = sam_template::PURGE_ACTIONS
        .iter()
        .map(|a| a.trim_start_matches("dynamodb:"))
        .collect();
    assert_eq!(actions, expected);
    // The schedule's account deletions read the index by owner.
    assert!(!purge.contains("secretsmanager") && purge.contains("!Sub '${Table.Arn}/index/*'"));
    // Its schedule: what account deletions and purges left pending,
    // never retried by Lambda (the next run is the retry), watched by an alarm.
    assert!(purge.contains(&format!(
        "          Type: Schedule\n          Properties:\n            Schedule: {}\n",
        sam_template::PURGE_SCHEDULE
    )));
    assert!(purge.contains("      EventInvokeConfig:\n        MaximumRetryAttempts: 0\n"));
    let errors = find(&classic, "PurgeScheduleErrorsAlarm");
    assert!(errors.contains("      MetricName: Errors\n") && errors.contains("Value: !Ref PurgeFunction\n"));
    // The stream, the queue and the alarms on it and on the function's lag.
    let table = find(&classic, "Table");
    assert!(table.contains("      StreamSpecification:\n        StreamViewType: NEW_IMAGE\n"));
    assert_eq!(resource_type(&find(&classic, "PurgeDeadLetters")), "AWS::SQS::Queue");
    let dead = find(&classic, "PurgeDeadLettersAlarm");
    assert!(dead.contains("      MetricName: ApproximateNumberOfMessagesVisible\n") && dead.contains("Threshold: 0\n"));
    let behind = find(&classic, "PurgeIteratorAgeAlarm");
    assert!(behind.contains("      MetricName: IteratorAge\n") && behind.contains("Value: !Ref PurgeFunction\n"));
}

/// The notify function: the table's stream through its own event
/// source mapping (filtered to the records its handler reads:
/// `shared::stream::notify::notify_filters`, tested against DynamoDB
/// Local's records in shared/tests/notify.rs), its failures retried from
/// the record that failed, then a dead-letter queue with an alarm.
#[test]
fn the_notify_function_reads_only_text_changes_from_the_tables_stream_with_a_dead_letter_queue() {
    let classic = resources(&committed(ComputeMode::Classic));
    let managed = resources(&committed(ComputeMode::ManagedInstances));
    let find = |all: &[(String, String)], id: &str| {
        all.iter()
            .find(|(rid, _)| rid == id)
            .unwrap_or_else(|| panic!("{id}"))
            .1
            .clone()
    };
    let notify = find(&classic, "NotifyFunction");
    assert_eq!(
        notify,
        find(&managed, "NotifyFunction"),
        "the same function in both modes"
    );
    assert!(notify.contains("        Binary: notify\n") && notify.contains("      CodeUri: ../functions/notify/\n"));
    assert!(notify.contains("      MemorySize: 256\n"));
    assert!(notify.contains("          Type: DynamoDB\n"));
    assert!(notify.contains("            Stream: !GetAtt Table.StreamArn\n"));
    // Each pattern, one per line, and nothing else under the filter.
    let patterns = sam_template::notify_filter_patterns();
    assert_eq!(patterns.len(), 4);
    let filters: Vec<&str> = notify
        .lines()
        .filter_map(|l| l.strip_prefix("                - Pattern: '"))
        .map(|l| l.trim_end_matches('\''))
        .collect();
    assert_eq!(filters, patterns.iter().map(String::as_str).collect::<Vec<_>>());
    for pattern in &patterns {
        let parsed: serde_json::Value = serde_json::from_str(pattern).unwrap();
        assert!(
            parsed["eventName"].is_array() && parsed["dynamodb"]["Keys"]["PK"].is_object(),
            "{pattern}"
        );
    }
    for setting in [
        "            StartingPosition: LATEST\n",
        "            MaximumBatchingWindowInSeconds: 0\n",
        "            FunctionResponseTypes:\n              - ReportBatchItemFailures\n",
        "            MaximumRecordAgeInSeconds: 3600\n",
        "                Type: SQS\n                Destination: !GetAtt NotifyDeadLetters.Arn\n",
    ] {
        assert!(notify.contains(setting), "{setting}");
    }
    // Exactly its DynamoDB actions, on the table only, no secret, no schedule.
    let actions: Vec<&str> = notify
        .lines()
        .filter_map(|l| l.trim().strip_prefix("- dynamodb:"))
        .collect();
    let expected: Vec<&str> = sam_template::NOTIFY_ACTIONS
        .iter()
        .map(|a| a.trim_start_matches("dynamodb:"))
        .collect();
    assert_eq!(actions, expected);
    assert!(!notify.contains("secretsmanager") && !notify.contains("Type: Schedule"));
    assert_eq!(resource_type(&find(&classic, "NotifyDeadLetters")), "AWS::SQS::Queue");
    let dead = find(&classic, "NotifyDeadLettersAlarm");
    assert!(dead.contains("      MetricName: ApproximateNumberOfMessagesVisible\n") && dead.contains("Threshold: 0\n"));
    let behind = find(&classic, "NotifyIteratorAgeAlarm");
    assert!(behind.contains("      MetricName: IteratorAge\n") && behind.contains("Value: !Ref NotifyFunction\n"));
}

/// docs/operations.md, Traces: one parameter turns them on for every
/// function (off by default), and every function's role may send them to
/// X-Ray's OTLP endpoint.
#[test]
fn every_function_reads_the_traces_endpoint_parameter_and_may_send_spans_to_xray() {
    for mode in ComputeMode::ALL {
        let template = committed(mode);
        let parameter = template
            .split("\n  TracesEndpoint:\n")
            .nth(1)
            .expect("a TracesEndpoint parameter");
        let parameter: Vec<&str> = parameter.lines().take_while(|l| l.starts_with("    ")).collect();
        assert!(
            parameter.contains(&"    Default: ''"),
            "off unless set ({})",
            mode.name()
        );
        let globals = &template[template.find("\nGlobals:\n").unwrap()..template.find("\nResources:\n").unwrap()];
        assert!(globals.contains("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: !Ref TracesEndpoint"));
        for function in Function::ALL {
            assert!(
                function_section(&template, function).contains("- xray:PutTraceSegments"),
                "{} may send spans ({})",
                function.name(),
                mode.name()
            );
        }
        let purge = &template[template.find("\n  PurgeFunction:\n").unwrap()..];
        let purge = &purge[..purge.find("\n  PurgeFunctionLogs:").unwrap()];
        assert!(purge.contains("- xray:PutTraceSegments"), "the purge function too");
        let notify = &template[template.find("\n  NotifyFunction:\n").unwrap()..];
        let notify = &notify[..notify.find("\n  NotifyFunctionLogs:").unwrap()];
        assert!(notify.contains("- xray:PutTraceSegments"), "and the notify function");
    }
}

/// A resource's text by logical id.
fn resource<'a>(all: &'a [(String, String)], id: &str) -> &'a str {
    &all.iter()
        .find(|(rid, _)| rid == id)
        .unwrap_or_else(|| panic!("{id}"))
        .1
}

/// A policy's statements as `(effect, actions, resources)`: from each
/// `Effect:` up to the next, its `Action` and `Resource` entries
/// (a list, or one value inline).
fn statements(policy: &str) -> Vec<(String, Vec<String>, Vec<String>)> {
    policy
        .split("Effect: ")
        .skip(1)
        .map(|statement| {
            let mut lines = statement.lines();
            let effect = lines.next().unwrap().trim().to_owned();
            let (mut actions, mut resources) = (Vec::new(), Vec::new());
            let mut list: Option<&mut Vec<String>> = None;
            for line in lines.map(str::trim) {
                // A list item, unless it is the next statement's first key (`- Sid: ...`).
                if let Some(item) = line.strip_prefix("- ").filter(|item| !item.contains(": ")) {
                    if let Some(list) = list.as_mut() {
                        list.push(item.to_owned());
                    }
                    continue;
                }
                let (key, inline) = line.split_once(':').map_or((line, ""), |(k, v)| (k, v.trim()));
                list = match key {
                    "Action" => Some(&mut actions),
                    "Resource" => Some(&mut resources),
                    _ => None,
                };
                if !inline.is_empty()
                    && let Some(list) = list.take()
                {
                    list.push(inline.to_owned());
                }
            }
            (effect, actions, resources)
        })
        .collect()
}

/// The logical ids a resource's text names (`!Ref`, `!GetAtt`, `${...}`).
fn references(text: &str) -> Vec<String> {
    let mut named = Vec::new();
    for (marker, ends) in [
        ("!Ref ", &[' ', '\n', ']', ','][..]),
        ("!GetAtt ", &['.', '\n'][..]),
        ("${", &['.', '}'][..]),
    ] {
        for (at, _) in text.match_indices(marker) {
            let rest = &text[at + marker.len()..];
            let name = &rest[..rest.find(ends).unwrap_or(rest.len())];
            if !name.starts_with("AWS::") {
                named.push(name.to_owned());
            }
        }
    }
    named.sort();
    named.dedup();
    named
}

/// docs/deploy.md, Images: the media bucket is private and encrypted,
/// holds an upload as sent for at most a day, takes the web client's
/// uploads, reports them to EventBridge, and only CloudFront (origin access
/// control, files/ only) reads it; files are served never sniffed,
/// sandboxed and cached for a year.
#[test]
fn the_media_bucket_is_private_and_only_its_checked_files_are_served_through_cloudfront() {
    let classic = resources(&committed(ComputeMode::Classic));
    let managed = resources(&committed(ComputeMode::ManagedInstances));
    for id in [
        "MediaBucket",
        "MediaBucketPolicy",
        "MediaOriginAccessControl",
        "MediaResponseHeaders",
        "MediaOnlyFiles",
        "MediaDistribution",
        "MediaErrorsAlarm",
    ] {
        assert_eq!(
            resource(&classic, id),
            resource(&managed, id),
            "{id}: the same in both modes"
        );
    }
    let bucket = resource(&classic, "MediaBucket");
    assert_eq!(resource_type(bucket), "AWS::S3::Bucket");
    for setting in [
        "      PublicAccessBlockConfiguration:\n        BlockPublicAcls: true\n        BlockPublicPolicy: true\n        IgnorePublicAcls: true\n        RestrictPublicBuckets: true\n",
        "          - ServerSideEncryptionByDefault:\n              SSEAlgorithm: AES256\n",
        "          - ObjectOwnership: BucketOwnerEnforced\n",
        // Uploads as sent: gone a day after, checked or not.
        "            Status: Enabled\n            Prefix: uploads/\n            ExpirationInDays: 1\n",
        "            AbortIncompleteMultipartUpload:\n              DaysAfterInitiation: 1\n",
        // The web client's origins may POST, nothing else.
        "          - AllowedOrigins: !Ref CorsOrigins\n            AllowedMethods:\n              - POST\n            AllowedHeaders:",
        "        EventBridgeConfiguration:\n          EventBridgeEnabled: true\n",
    ] {
        assert!(bucket.contains(setting), "the bucket: {setting}");
    }
    assert_eq!(sam_template::UPLOAD_EXPIRY_DAYS, 1);
    assert_eq!(
        bucket.matches("ExpirationInDays:").count(),
        1,
        "files/ never expire by age"
    );
    // The bucket depends on no resource (a parameter only): the uploads
    // reach the function through EventBridge, so functions -> distribution
    // -> bucket has no way back (no cycle).
    assert!(!bucket.contains("LambdaConfigurations"));
    let ids: Vec<&str> = classic.iter().map(|(id, _)| id.as_str()).collect();
    let named = references(bucket);
    assert_eq!(named, ["CorsOrigins"], "the bucket names only parameters");
    assert!(named.iter().all(|n| !ids.contains(&n.as_str())));

    // Only CloudFront reads, only files/, only for this distribution; no
    // one at all over plain HTTP.
    let policy = resource(&classic, "MediaBucketPolicy");
    let granted = statements(policy);
    let allowed: Vec<_> = granted.iter().filter(|(effect, ..)| effect == "Allow").collect();
    assert_eq!(allowed.len(), 1, "{policy}");
    assert_eq!(allowed[0].1, ["s3:GetObject"]);
    assert_eq!(allowed[0].2, ["!Sub '${MediaBucket.Arn}/files/*'"]);
    assert!(policy.contains("            Principal:\n              Service: cloudfront.amazonaws.com\n"));
    assert!(policy.contains(
        "              StringEquals:\n                AWS:SourceArn: !Sub 'arn:${AWS::Partition}:cloudfront::${AWS::AccountId}:distribution/${MediaDistribution}'\n"
    ));
    let denied: Vec<_> = granted.iter().filter(|(effect, ..)| effect == "Deny").collect();
    assert_eq!(denied.len(), 1);
    assert!(policy.contains("                aws:SecureTransport: 'false'\n"));

    let access = resource(&classic, "MediaOriginAccessControl");
    for setting in [
        "OriginAccessControlOriginType: s3\n",
        "SigningBehavior: always\n",
        "SigningProtocol: sigv4\n",
    ] {
        assert!(access.contains(setting), "{setting}");
    }
    let distribution = resource(&classic, "MediaDistribution");
    assert!(distribution.contains("            OriginAccessControlId: !GetAtt MediaOriginAccessControl.Id\n"));
    assert!(
        distribution.contains("              OriginAccessIdentity: ''\n"),
        "no legacy origin access identity"
    );
    assert!(distribution.contains("            DomainName: !GetAtt MediaBucket.RegionalDomainName\n"));
    assert!(distribution.contains("        PriceClass: !Ref MediaPriceClass\n"));
    let template = committed(ComputeMode::Classic);
    assert!(template.contains("  MediaPriceClass:\n    Type: String\n"));
    assert!(
        template.contains("    Default: PriceClass_200\n"),
        "Korea and Japan's edges by default"
    );
    // files/* served from the bucket; anything else answered 404 at the edge.
    assert!(distribution.contains("          - PathPattern: files/*\n            TargetOriginId: MediaBucket\n"));
    assert!(distribution.contains(
        "          FunctionAssociations:\n            - EventType: viewer-request\n              FunctionARN: !GetAtt MediaOnlyFiles.FunctionMetadata.FunctionARN\n"
    ));
    let only_files = resource(&classic, "MediaOnlyFiles");
    assert!(only_files.contains("return { statusCode: 404"));
    assert_eq!(
        distribution
            .matches("ResponseHeadersPolicyId: !Ref MediaResponseHeaders\n")
            .count(),
        2
    );
    assert_eq!(
        distribution
            .matches("ViewerProtocolPolicy: redirect-to-https\n")
            .count(),
        2
    );
    assert_eq!(
        distribution.matches("AllowedMethods:\n").count(),
        distribution
            .matches("AllowedMethods:\n              - GET\n              - HEAD\n")
            .count()
            + distribution
                .matches("AllowedMethods:\n            - GET\n            - HEAD\n")
                .count(),
        "reads only"
    );
    let headers = resource(&classic, "MediaResponseHeaders");
    for setting in [
        "          ContentTypeOptions:\n            Override: true\n",
        "          ContentSecurityPolicy:\n            ContentSecurityPolicy: sandbox\n            Override: true\n",
        "            - Header: Cache-Control\n              Value: public, max-age=31536000, immutable\n              Override: true\n",
    ] {
        assert!(headers.contains(setting), "{setting}");
    }
    assert_eq!(sam_template::MEDIA_CACHE_CONTROL, "public, max-age=31536000, immutable");
}

/// The media function: classic Lambda in both templates, 60 s, its
/// memory a parameter, no reserved concurrency, its bucket and limit in its
/// settings, its routes plus each upload's event and the sweep's schedule;
/// exactly its S3 actions on exactly its prefixes, and no other function
/// reaches S3. Every function points image URLs at the distribution.
#[test]
fn only_the_media_function_reaches_the_bucket_and_only_where_it_must() {
    for mode in ComputeMode::ALL {
        let template = committed(mode);
        let all = resources(&template);
        let media = resource(&all, "MediaFunction");
        assert!(
            media.contains("      MemorySize: !Ref MediaMemory\n      Timeout: 60\n"),
            "{}",
            mode.name()
        );
        assert_eq!(sam_template::MEDIA_TIMEOUT_S, 60);
        for absent in ["ReservedConcurrentExecutions", "CapacityProviderConfig", "VpcConfig"] {
            assert!(!media.contains(absent), "{}: {absent}", mode.name());
        }
        for setting in [
            "          MEDIA_BUCKET: !Ref MediaBucket\n",
            "          MEDIA_MAX_BYTES: !Ref MediaMaxBytes\n",
            "          JWT_SECRET_ARN: !Ref JwtSecret\n",
            "          TAG_KEY_ARN: !Ref TagKey\n",
        ] {
            assert!(media.contains(setting), "{setting}");
        }
        assert!(!media.contains("PEPPER"), "no hashing, no pepper");
        // Its events: the routes, each upload's Object Created, the sweep.
        assert!(media.contains(
            "          Type: EventBridgeRule
          Properties:
            Pattern:
              source:
                - aws.s3
              detail-type:
                - Object Created
              detail:
                bucket:
                  name:
                    - !Ref MediaBucket
                object:
                  key:
                    - prefix: uploads/
"
        ));
        assert!(media.contains(&format!(
            "          Type: Schedule\n          Properties:\n            Schedule: {}\n",
            sam_template::MEDIA_SWEEP_SCHEDULE
        )));
        assert_eq!(sam_template::MEDIA_SWEEP_SCHEDULE, "rate(5 minutes)");

        // Exactly these S3 actions on exactly these keys.
        let policy = &media[media.find("      Policies:").unwrap()..media.find("      Events:").unwrap()];
        let mut s3: Vec<(Vec<String>, Vec<String>)> = statements(policy)
            .into_iter()
            .filter(|(_, actions, _)| actions.iter().any(|a| a.starts_with("s3:")))
            .map(|(effect, actions, resources)| {
                assert_eq!(effect, "Allow");
                (actions, resources)
            })
            .collect();
        s3.sort();
        let strings = |items: &[&str]| items.iter().map(|i| (*i).to_owned()).collect::<Vec<_>>();
        assert_eq!(
            s3,
            [
                (
                    strings(&["s3:DeleteObject", "s3:GetObject", "s3:PutObject"]),
                    strings(&["!Sub '${MediaBucket.Arn}/uploads/*'"])
                ),
                (
                    strings(&["s3:DeleteObject", "s3:PutObject"]),
                    strings(&["!Sub '${MediaBucket.Arn}/files/*'"])
                ),
            ]
            .into_iter()
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect::<Vec<_>>(),
            "{}",
            mode.name()
        );
        for (prefix, actions) in sam_template::MEDIA_S3_ACTIONS {
            assert!(
                s3.iter()
                    .any(|(a, r)| *a == strings(actions) && r[0].ends_with(&format!("/{prefix}'"))),
                "{prefix}"
            );
        }

        // No other function, nor any other resource but the bucket's own
        // policy, names the bucket's actions.
        for (id, text) in &all {
            if id == "MediaFunction" || id == "MediaBucketPolicy" {
                continue;
            }
            assert!(!text.contains("s3:"), "{}: {id} reaches S3", mode.name());
            if resource_type(text) == "AWS::Serverless::Function" {
                assert!(!text.contains("MediaBucket"), "{}: {id} knows the bucket", mode.name());
                assert!(!text.contains("MEDIA_BASE_URL"), "{id}: from Globals only");
            }
        }

        // Every function (those answering posts and comments among them)
        // points image URLs at the distribution, through Globals.
        let globals = &template[template.find("\nGlobals:\n").unwrap()..template.find("\nResources:\n").unwrap()];
        assert!(globals.contains("        MEDIA_BASE_URL: !Sub 'https://${MediaDistribution.DomainName}'\n"));
        assert!(template.contains("  MediaUrl:\n"), "an output with the media origin");
    }
}
