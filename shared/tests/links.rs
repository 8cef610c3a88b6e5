//! Each Lambda function links only what its routes need (docs/DESIGN.md,
//! What each binary links): read from the manifests themselves. A function
//! that hashes no password (`read`, `member-write`, `like`, `moderation`)
//! must not turn on `shared`'s `hashing` feature, and that feature must be
//! the only way `shared` pulls a password-hashing crate in (through the
//! `hashing` crate's `engine` feature).

use shared::function::Function;

fn manifest(path: &str) -> toml::Table {
    let path = format!("{}/../{path}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    text.parse().unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The crates the `hashing` crate hashes with: bcrypt through the batch
/// engine's bcrypt-rust (docs/DESIGN.md, Batch hashing), and Argon2id.
const HASHING_CRATES: [&str; 2] = ["bcrypt-rust", "argon2"];

/// The features a function's manifest asks of `shared`.
fn shared_features(function: Function) -> Vec<String> {
    let manifest = manifest(&format!("functions/{}/Cargo.toml", function.name()));
    let dependencies = manifest["dependencies"].as_table().expect("[dependencies]");
    // The `bcrypt` crate too: only the differential test's reference now.
    for name in HASHING_CRATES.iter().chain(&["bcrypt"]) {
        assert!(
            !dependencies.contains_key(*name),
            "{} depends on {name} itself",
            function.name()
        );
    }
    dependencies["shared"]["features"]
        .as_array()
        .expect("shared's features")
        .iter()
        .map(|f| f.as_str().unwrap().to_owned())
        .collect()
}

/// The features of `manifest` that name `wanted` among what they enable.
fn enabling<'a>(manifest: &'a toml::Table, wanted: &str) -> Vec<&'a String> {
    manifest["features"]
        .as_table()
        .unwrap()
        .iter()
        .filter(|(_, enables)| enables.as_array().unwrap().iter().any(|e| e.as_str() == Some(wanted)))
        .map(|(feature, _)| feature)
        .collect()
}

#[test]
fn the_hashing_crates_come_only_with_the_hashing_feature() {
    let hashing = manifest("hashing/Cargo.toml");
    let dependencies = hashing["dependencies"].as_table().unwrap();
    for name in HASHING_CRATES {
        assert_eq!(
            dependencies[name]["optional"].as_bool(),
            Some(true),
            "{name} is optional"
        );
        assert_eq!(enabling(&hashing, &format!("dep:{name}")), vec!["engine"], "{name}");
    }
    // `shared` takes the crate without its engine, which only `hashing` turns on.
    let library = manifest("shared/Cargo.toml");
    let workspace = manifest("Cargo.toml");
    assert_eq!(
        workspace["workspace"]["dependencies"]["hashing"]["default-features"].as_bool(),
        Some(false),
        "the workspace takes hashing without its engine"
    );
    for name in HASHING_CRATES {
        assert!(
            !library["dependencies"].as_table().unwrap().contains_key(name),
            "{name}"
        );
    }
    assert_eq!(enabling(&library, "hashing/engine"), vec!["hashing"]);
    // `default` and `openapi` bring `hashing`; no function takes them.
    for function in Function::ALL {
        let function_manifest = manifest(&format!("functions/{}/Cargo.toml", function.name()));
        let shared = &function_manifest["dependencies"]["shared"];
        assert_eq!(
            shared.get("default-features").and_then(|d| d.as_bool()),
            None,
            "{}: the workspace turns shared's default features off",
            function.name()
        );
    }
}

#[test]
fn a_function_links_password_hashing_only_when_it_hashes() {
    for function in Function::ALL {
        let features = shared_features(function);
        let hashes = features
            .iter()
            .any(|f| f == "hashing" || f == "default" || f == "openapi");
        assert_eq!(hashes, function.needs().hashing, "{}: {features:?}", function.name());
        let tokens = features.iter().any(|f| f == "tokens");
        assert_eq!(tokens, function.needs().tokens, "{}: {features:?}", function.name());
        assert!(
            !features.iter().any(|f| f == "sqlite"),
            "{}: no function links SQLite",
            function.name()
        );
    }
    let moderation = shared_features(Function::Moderation);
    assert!(!moderation.iter().any(|f| f == "hashing"), "{moderation:?}");
}
