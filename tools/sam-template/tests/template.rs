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
        assert!(
            section.contains(&format!("MemorySize: {memory}\n")),
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
fn the_readme_shows_the_cost_table_of_the_tier_file() {
    let tiers = TierFile::parse(EMBEDDED).unwrap();
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../README.md")).unwrap();
    assert!(
        readme.contains(&sam_template::cost_table(&tiers)),
        "README.md's cost table is stale: paste `cargo run -p sam-template -- --costs`"
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
