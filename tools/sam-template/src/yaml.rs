//! The YAML and naming helpers every part of the template shares.

/// `member-write` -> `MemberWrite`, `createMember` -> `CreateMember`: a
/// logical id from a function name or an operationId.
pub(crate) fn pascal(name: &str) -> String {
    name.split('-').map(|w| w[..1].to_uppercase() + &w[1..]).collect()
}

pub(crate) fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|i| (*i).to_owned()).collect()
}

pub(crate) fn yaml_list(items: &[String], indent: usize) -> String {
    items.iter().map(|i| format!("{}- {i}\n", " ".repeat(indent))).collect()
}
