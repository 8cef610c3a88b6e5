//! The layers docs/DESIGN.md states, checked on the source: every path a
//! file of `shared/src` names (`use` trees, types, expressions, macro
//! arguments) is resolved to the top-level module it points into, and a
//! path that points up fails. `crate::`, `super::` and `self::` are
//! resolved; paths into other crates are not this test's concern, but for
//! the `hashing` crate, which must import nothing of the board.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use proc_macro2::{TokenStream, TokenTree};
use syn::visit::Visit;

/// What each top-level module may import, lowest layer first. `runtime`,
/// the composition root, may import everything. `hashing` is the crate of
/// that name, re-exported by lib.rs: it imports nothing of this one
/// ([`the_hashing_crate_imports_nothing_of_the_board`]).
const LAYERS: &[(&str, &[&str])] = &[
    ("error", &[]),
    ("function", &[]),
    ("private_files", &[]),
    ("domain", &["error"]),
    ("aws", &[]),
    // Presigned S3 POST policies for upload grants.
    ("s3_post", &[]),
    ("store", &["error", "domain", "private_files", "aws"]),
    // The upload grant use case signs an S3 POST (s3_post).
    ("app", &["error", "domain", "function", "hashing", "store", "s3_post"]),
    ("http", &["error", "domain", "function", "app"]),
    // The `purge` and `notify` functions' entry, beside `http`: stream
    // records in, as domain events (a `TextEvent`) like http's requests.
    ("stream", &["domain", "app", "store"]),
];

const ROOT: &str = "runtime";

/// A path as a file names it, with the module the file (or its inline
/// module) is.
#[derive(Debug)]
struct Named {
    module: Vec<String>,
    path: Vec<String>,
    line: usize,
}

#[derive(Default)]
struct Paths {
    module: Vec<String>,
    found: Vec<Named>,
}

impl Paths {
    fn push(&mut self, path: Vec<String>, line: usize) {
        if matches!(
            path.first().map(String::as_str),
            Some("crate" | "super" | "self" | "std" | "shared")
        ) {
            self.found.push(Named {
                module: self.module.clone(),
                path,
                line,
            });
        }
    }

    /// Paths in macro arguments (`format!`, `tracing::info!`, `matches!`):
    /// runs of `ident :: ident ...` in the tokens.
    fn scan_tokens(&mut self, tokens: TokenStream) {
        let mut run: Vec<String> = Vec::new();
        let mut line = 0;
        let mut colons = 0;
        for token in tokens {
            match token {
                TokenTree::Ident(ident) if run.is_empty() || colons == 2 => {
                    if run.is_empty() {
                        line = ident.span().start().line;
                    }
                    run.push(ident.to_string());
                    colons = 0;
                }
                TokenTree::Punct(p) if p.as_char() == ':' && !run.is_empty() && colons < 2 => colons += 1,
                TokenTree::Group(group) => {
                    self.flush(&mut run, line);
                    colons = 0;
                    self.scan_tokens(group.stream());
                }
                other => {
                    self.flush(&mut run, line);
                    colons = 0;
                    if let TokenTree::Ident(ident) = other {
                        line = ident.span().start().line;
                        run.push(ident.to_string());
                    }
                }
            }
        }
        self.flush(&mut run, line);
    }

    fn flush(&mut self, run: &mut Vec<String>, line: usize) {
        if run.len() > 1 {
            self.push(std::mem::take(run), line);
        }
        run.clear();
    }
}

fn use_paths(tree: &syn::UseTree, prefix: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
    match tree {
        syn::UseTree::Path(p) => {
            prefix.push(p.ident.to_string());
            use_paths(&p.tree, prefix, out);
            prefix.pop();
        }
        syn::UseTree::Name(n) => out.push([prefix.clone(), vec![n.ident.to_string()]].concat()),
        syn::UseTree::Rename(r) => out.push([prefix.clone(), vec![r.ident.to_string()]].concat()),
        syn::UseTree::Glob(_) => out.push(prefix.clone()),
        syn::UseTree::Group(g) => g.items.iter().for_each(|item| use_paths(item, prefix, out)),
    }
}

impl<'ast> Visit<'ast> for Paths {
    fn visit_item_use(&mut self, item: &'ast syn::ItemUse) {
        let mut out = Vec::new();
        use_paths(&item.tree, &mut Vec::new(), &mut out);
        let line = item.use_token.span.start().line;
        for path in out {
            self.push(path, line);
        }
    }

    fn visit_path(&mut self, path: &'ast syn::Path) {
        let segments = path.segments.iter().map(|s| s.ident.to_string()).collect();
        let line = path.segments.first().map_or(0, |s| s.ident.span().start().line);
        self.push(segments, line);
        syn::visit::visit_path(self, path);
    }

    fn visit_macro(&mut self, mac: &'ast syn::Macro) {
        self.scan_tokens(mac.tokens.clone());
        syn::visit::visit_macro(self, mac);
    }

    fn visit_item_mod(&mut self, item: &'ast syn::ItemMod) {
        if item.content.is_some() {
            self.module.push(item.ident.to_string());
            syn::visit::visit_item_mod(self, item);
            self.module.pop();
        }
    }
}

/// `src/store/dynamo/posts.rs` is `store::dynamo::posts`; `mod.rs` is its folder.
fn module_of(src: &Path, file: &Path) -> Vec<String> {
    let relative = file.strip_prefix(src).unwrap().with_extension("");
    let mut parts: Vec<String> = relative.iter().map(|p| p.to_string_lossy().into_owned()).collect();
    if matches!(parts.last().map(String::as_str), Some("mod" | "lib" | "main")) {
        parts.pop();
    }
    parts
}

/// The absolute module path a `crate::`/`super::`/`self::` path names.
fn resolve(module: &[String], path: &[String]) -> Option<Vec<String>> {
    let mut base = module.to_vec();
    let mut rest = path;
    match rest.first()?.as_str() {
        "crate" => {
            base.clear();
            rest = &rest[1..];
        }
        "self" => rest = &rest[1..],
        "super" => {
            while rest.first().map(String::as_str) == Some("super") {
                base.pop()?;
                rest = &rest[1..];
            }
        }
        _ => return None,
    }
    Some([base, rest.to_vec()].concat())
}

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            // Each binary under src/bin is its own composition root.
            if path.file_name().is_some_and(|n| n != "bin") {
                sources(&path, out);
            }
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

struct Source {
    file: PathBuf,
    text: String,
    paths: Vec<Named>,
}

fn read_sources() -> Vec<Source> {
    read_sources_in(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"))
}

fn read_sources_in(src: &Path) -> Vec<Source> {
    let mut files = Vec::new();
    sources(src, &mut files);
    files.sort();
    files
        .into_iter()
        .map(|file| {
            let text = std::fs::read_to_string(&file).unwrap();
            let syntax = syn::parse_file(&text).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
            let mut visitor = Paths {
                module: module_of(src, &file),
                found: Vec::new(),
            };
            visitor.visit_file(&syntax);
            Source {
                file: file.strip_prefix(src).unwrap().to_path_buf(),
                text,
                paths: visitor.found,
            }
        })
        .collect()
}

/// One path a module names, resolved to the module path it points into.
struct Import<'a> {
    file: &'a Path,
    line: usize,
    /// The naming module (`store::dynamo::posts`).
    from: &'a [String],
    /// What it names (`store::StoreError`).
    to: Vec<String>,
}

impl Import<'_> {
    fn at(&self) -> String {
        format!(
            "{}:{}: {} imports {}",
            self.file.display(),
            self.line,
            self.from.join("::"),
            self.to.join("::")
        )
    }
}

/// Every `crate::`/`super::`/`self::` path of every source, resolved.
fn imports(sources: &[Source]) -> Vec<Import<'_>> {
    sources
        .iter()
        .flat_map(|source| {
            source.paths.iter().filter_map(|named| {
                Some(Import {
                    file: &source.file,
                    line: named.line,
                    from: &named.module,
                    to: resolve(&named.module, &named.path).filter(|to| !to.is_empty())?,
                })
            })
        })
        .filter(|import| !import.from.is_empty())
        .collect()
}

/// Every top-level module's imports of other top-level modules.
fn graph(sources: &[Source]) -> BTreeMap<String, BTreeSet<String>> {
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for import in imports(sources) {
        let (from, to) = (&import.from[0], &import.to[0]);
        let edges = graph.entry(from.clone()).or_default();
        if from != to {
            edges.insert(to.clone());
        }
    }
    graph
}

#[test]
fn no_module_imports_a_layer_above_it() {
    let sources = read_sources();
    let allowed: BTreeMap<&str, &[&str]> = LAYERS.iter().copied().collect();
    let mut wrong = Vec::new();
    for import in imports(&sources) {
        let (from, to) = (import.from[0].as_str(), import.to[0].as_str());
        if from == to || from == ROOT {
            continue;
        }
        let ok = allowed
            .get(from)
            .unwrap_or_else(|| panic!("{from} is not in LAYERS: place the new module in a layer"));
        if !ok.contains(&to) {
            wrong.push(import.at());
        }
    }
    assert!(wrong.is_empty(), "imports that point up:\n{}", wrong.join("\n"));
}

#[test]
fn the_import_graph_of_the_top_level_modules_has_no_cycle() {
    let graph = graph(&read_sources());
    println!("the import graph of shared/src (module -> what it imports):");
    for (from, to) in &graph {
        println!("  {from} -> {}", to.iter().cloned().collect::<Vec<_>>().join(", "));
    }
    // Depth-first: a module met again while its own imports are open closes a cycle.
    fn visit<'a>(
        node: &'a str,
        graph: &'a BTreeMap<String, BTreeSet<String>>,
        open: &mut Vec<&'a str>,
        done: &mut BTreeSet<&'a str>,
    ) {
        if done.contains(node) {
            return;
        }
        if let Some(at) = open.iter().position(|n| *n == node) {
            panic!("a cycle: {} -> {node}", open[at..].join(" -> "));
        }
        open.push(node);
        for next in graph.get(node).into_iter().flatten() {
            visit(next, graph, open, done);
        }
        open.pop();
        done.insert(node);
    }
    let mut done = BTreeSet::new();
    for node in graph.keys() {
        visit(node, &graph, &mut Vec::new(), &mut done);
    }
    assert!(graph.contains_key(ROOT) && graph.len() >= LAYERS.len(), "{graph:?}");
}

#[test]
fn store_ports_know_no_adapter_and_the_adapters_not_each_other() {
    let sources = read_sources();
    let mut wrong = Vec::new();
    for import in imports(&sources) {
        if import.from[0] != "store" || import.to[0] != "store" {
            continue;
        }
        let Some(adapter) = import.to.get(1).filter(|a| matches!(a.as_str(), "dynamo" | "sqlite")) else {
            continue;
        };
        let part = import.from.get(1).map(String::as_str);
        let allowed = match part {
            // An adapter uses only itself.
            Some(own @ ("dynamo" | "sqlite")) => own == adapter,
            // The settings choose and open an adapter: the store's one wiring point.
            Some("settings") => true,
            // The ports.
            _ => false,
        };
        if !allowed {
            wrong.push(import.at());
        }
    }
    assert!(wrong.is_empty(), "store layering broken:\n{}", wrong.join("\n"));
}

#[test]
fn only_the_composition_root_reads_the_environment() {
    let mut wrong = Vec::new();
    for source in read_sources() {
        if source.file.starts_with(ROOT) {
            continue;
        }
        for named in &source.paths {
            if named.path.len() >= 2 && named.path[0] == "std" && named.path[1] == "env" {
                wrong.push(format!("{}:{}", source.file.display(), named.line));
            }
        }
    }
    assert!(wrong.is_empty(), "std::env read outside {ROOT}/: {wrong:?}");
}

#[test]
fn the_http_layer_reaches_the_store_only_through_the_use_cases() {
    for source in read_sources() {
        if source.file.starts_with("http") {
            assert!(
                !source.text.contains(".store()") && !source.text.contains(".store."),
                "{} calls the store directly: add a use case",
                source.file.display()
            );
        }
    }
}

/// The `hashing` crate stands alone: no path of its sources names `shared`
/// or points outside its own modules and root re-exports, and its manifest
/// depends on no crate of this workspace (so on nothing of the board).
#[test]
fn the_hashing_crate_imports_nothing_of_the_board() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let src = root.join("hashing/src");
    let sources = read_sources_in(&src);
    let lib = sources
        .iter()
        .find(|s| s.file == Path::new("lib.rs"))
        .expect("hashing/src/lib.rs");
    // Its modules, and what lib.rs re-exports at the root.
    let mut own: BTreeSet<String> = sources
        .iter()
        .filter_map(|s| module_of(Path::new(""), &s.file).first().cloned())
        .collect();
    for item in syn::parse_file(&lib.text).unwrap().items {
        if let syn::Item::Use(item) = item {
            let mut out = Vec::new();
            use_paths(&item.tree, &mut Vec::new(), &mut out);
            own.extend(out.into_iter().filter_map(|path| path.last().cloned()));
        }
    }
    let mut wrong = Vec::new();
    for source in &sources {
        for named in &source.paths {
            let at = format!(
                "hashing/src/{}:{}: {}",
                source.file.display(),
                named.line,
                named.path.join("::")
            );
            let outside = resolve(&named.module, &named.path)
                .is_some_and(|to| to.first().is_some_and(|first| !own.contains(first)));
            if named.path[0] == "shared" || outside {
                wrong.push(at);
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "hashing names what is not its own:\n{}",
        wrong.join("\n")
    );

    let manifest = |path: &Path| -> toml::Table {
        std::fs::read_to_string(path)
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
            .parse()
            .unwrap()
    };
    let workspace = manifest(&root.join("Cargo.toml"));
    let shared_deps = workspace["workspace"]["dependencies"].as_table().unwrap();
    let hashing = manifest(&root.join("hashing/Cargo.toml"));
    let mut tables = Vec::new();
    for kind in ["dependencies", "dev-dependencies", "build-dependencies"] {
        tables.extend(hashing.get(kind).and_then(|t| t.as_table()));
        for target in hashing
            .get("target")
            .and_then(|t| t.as_table())
            .into_iter()
            .flat_map(|t| t.values())
        {
            tables.extend(target.get(kind).and_then(|t| t.as_table()));
        }
    }
    for (name, spec) in tables.into_iter().flatten() {
        let inherited = spec.get("workspace").and_then(|w| w.as_bool()) == Some(true);
        let spec = if inherited { &shared_deps[name] } else { spec };
        assert!(
            name != "shared" && spec.get("path").is_none(),
            "hashing depends on {name}, a crate of this workspace"
        );
    }
}

/// Every crate of the workspace with a `src` folder: the library, the
/// hashing crate, the server, the tools and the functions.
fn workspace_crates() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut crates = Vec::new();
    for dir in [root.clone(), root.join("tools"), root.join("functions")] {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.join("Cargo.toml").is_file() && path.join("src").is_dir() {
                crates.push(path.join("src"));
            }
        }
    }
    crates.sort();
    crates
}

/// A source file's lines before its test module (`#[cfg(test)]`).
fn lines_before_tests(text: &str) -> usize {
    text.lines()
        .take_while(|line| !line.starts_with("#[cfg(test)]"))
        .count()
}

/// A module does one thing: past 500 lines of code it does several, and
/// the tree regrows (docs/DESIGN.md, Layout).
#[test]
fn no_source_file_holds_more_than_500_lines_besides_its_tests() {
    let mut files = Vec::new();
    for src in workspace_crates() {
        let mut found = Vec::new();
        sources(&src, &mut found);
        let bin = src.join("bin");
        if bin.is_dir() {
            sources(&bin, &mut found);
        }
        files.extend(found);
    }
    assert!(files.len() > 100, "found only {} files", files.len());
    let long: Vec<String> = files
        .iter()
        .filter_map(|file| {
            let lines = lines_before_tests(&std::fs::read_to_string(file).unwrap());
            (lines > 500).then(|| format!("{} ({lines})", file.display()))
        })
        .collect();
    assert!(long.is_empty(), "split along a seam: {long:?}");
}

#[test]
fn a_file_is_measured_up_to_its_test_module() {
    assert_eq!(lines_before_tests("a\nb\n#[cfg(test)]\nmod tests {}\n"), 2);
    assert_eq!(lines_before_tests("a\nb\n"), 2);
}

/// The cycles among the modules of one folder: `a::b::x` imports something
/// in its sibling `a::b::y` (itself or deeper), and `y` imports back into
/// `x`, directly or through other siblings. What two siblings share
/// belongs one floor down, in a module neither imports the other for.
fn cycles_in_folders(sources: &[Source]) -> Vec<String> {
    let modules: BTreeSet<Vec<String>> = sources
        .iter()
        .flat_map(|s| s.paths.iter().map(|n| n.module.clone()))
        .chain(sources.iter().map(|s| {
            let file = s.file.with_extension("");
            let mut parts: Vec<String> = file.iter().map(|p| p.to_string_lossy().into_owned()).collect();
            if matches!(parts.last().map(String::as_str), Some("mod" | "lib" | "main")) {
                parts.pop();
            }
            parts
        }))
        .collect();
    // folder -> sibling -> the siblings it imports
    let mut folders: BTreeMap<Vec<String>, BTreeMap<String, BTreeSet<String>>> = BTreeMap::new();
    for import in imports(sources) {
        let common = import.from.iter().zip(&import.to).take_while(|(a, b)| a == b).count();
        let (Some(from), Some(to)) = (import.from.get(common), import.to.get(common)) else {
            continue;
        };
        let folder = import.from[..common].to_vec();
        let sibling = [folder.clone(), vec![to.clone()]].concat();
        if modules.contains(&sibling) {
            folders
                .entry(folder)
                .or_default()
                .entry(from.clone())
                .or_default()
                .insert(to.clone());
        }
    }
    let mut found = Vec::new();
    for (folder, graph) in &folders {
        fn visit<'a>(
            node: &'a str,
            graph: &'a BTreeMap<String, BTreeSet<String>>,
            open: &mut Vec<&'a str>,
            done: &mut BTreeSet<&'a str>,
            found: &mut Vec<Vec<String>>,
        ) {
            if done.contains(node) {
                return;
            }
            if let Some(at) = open.iter().position(|n| *n == node) {
                let mut cycle: Vec<String> = open[at..].iter().map(|n| n.to_string()).collect();
                cycle.push(node.to_owned());
                found.push(cycle);
                return;
            }
            open.push(node);
            for next in graph.get(node).into_iter().flatten() {
                visit(next, graph, open, done, found);
            }
            open.pop();
            done.insert(node);
        }
        let mut done = BTreeSet::new();
        let mut cycles = Vec::new();
        for node in graph.keys() {
            visit(node, graph, &mut Vec::new(), &mut done, &mut cycles);
        }
        for cycle in cycles {
            let folder = if folder.is_empty() {
                "the crate root".to_owned()
            } else {
                folder.join("::")
            };
            found.push(format!("in {folder}: {}", cycle.join(" -> ")));
        }
    }
    found
}

#[test]
fn no_folder_holds_a_cycle_among_its_modules() {
    let mut wrong = Vec::new();
    for src in workspace_crates() {
        let sources = read_sources_in(&src);
        for cycle in cycles_in_folders(&sources) {
            wrong.push(format!(
                "{}: {cycle}",
                src.parent().unwrap().file_name().unwrap().to_string_lossy()
            ));
        }
    }
    assert!(
        wrong.is_empty(),
        "cycles inside folders (move what the siblings share one floor down):\n{}",
        wrong.join("\n")
    );
}

#[test]
fn the_folder_check_finds_a_cycle_between_siblings() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path();
    std::fs::create_dir_all(src.join("store/dynamo")).unwrap();
    std::fs::write(src.join("lib.rs"), "pub mod store;").unwrap();
    std::fs::write(src.join("store/mod.rs"), "pub mod dynamo;").unwrap();
    std::fs::write(src.join("store/dynamo/mod.rs"), "mod a; mod b; mod c;").unwrap();
    std::fs::write(src.join("store/dynamo/a.rs"), "use super::b::helper;").unwrap();
    std::fs::write(src.join("store/dynamo/b.rs"), "use crate::store::dynamo::c::Thing;").unwrap();
    std::fs::write(src.join("store/dynamo/c.rs"), "fn f() { super::a::g(); }").unwrap();
    let cycles = cycles_in_folders(&read_sources_in(src));
    assert_eq!(cycles, vec!["in store::dynamo: a -> b -> c -> a".to_owned()]);
    std::fs::write(src.join("store/dynamo/c.rs"), "fn f() { super::helpers::g(); }").unwrap();
    assert!(cycles_in_folders(&read_sources_in(src)).is_empty());
}

/// The checker itself, on paths that must be seen.
#[test]
fn the_checker_resolves_crate_super_and_self_paths() {
    let module = vec!["store".to_owned(), "dynamo".to_owned()];
    let path = |p: &str| p.split("::").map(str::to_owned).collect::<Vec<_>>();
    assert_eq!(resolve(&module, &path("crate::app::App")).unwrap()[0], "app");
    assert_eq!(resolve(&module, &path("super::super::http")).unwrap()[0], "http");
    assert_eq!(resolve(&module, &path("super::Store")).unwrap(), path("store::Store"));
    assert_eq!(
        resolve(&module, &path("self::items")).unwrap()[..2],
        path("store::dynamo")[..]
    );
    let mut found = Paths::default();
    found.scan_tokens(
        "tracing::info!(x = %crate::runtime::Env::process(), \"y\")"
            .parse()
            .unwrap(),
    );
    assert!(
        found
            .found
            .iter()
            .any(|n| n.path == path("crate::runtime::Env::process")),
        "{:?}",
        found.found
    );
}

/// Where a version marker would be: after no word character, `(v`, a
/// digit 2-9, then `)`, `:`, `;`, `,` or a space (an IPv6 variable named
/// after the version in a call or an index is code, not a marker).
fn version_markers(text: &str) -> Vec<usize> {
    let bytes = text.as_bytes();
    let opening = |i: usize| {
        bytes[i] == b'('
            && bytes[i + 1] == b'v'
            && (b'2'..=b'9').contains(&bytes[i + 2])
            && matches!(bytes[i + 3], b')' | b':' | b';' | b',' | b' ')
            && (i == 0 || !(bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_'))
    };
    // A citation's version, after a page's name on its line or the one
    // before. Code such as `f(dir, v3)` names no page.
    let closing = |i: usize| {
        bytes[i..].starts_with(b", v")
            && bytes.get(i + 3).is_some_and(|d| (b'2'..=b'9').contains(d))
            && matches!(bytes.get(i + 4), Some(b')' | b';'))
            && {
                // The line so far and the one before it.
                let line = text[..i].rfind('\n').unwrap_or(0);
                text[text[..line].rfind('\n').map_or(0, |n| n + 1)..i].contains(".md")
            }
    };
    (0..bytes.len().saturating_sub(3))
        .filter(|&i| opening(i) || closing(i))
        .collect()
}

/// docs/DESIGN.md, Layout: code, OpenAPI texts and docs say what is, never
/// which version brought it (git keeps the history). Generated load
/// reports and vendored files are not ours to word.
#[test]
fn no_tracked_file_marks_which_version_brought_something() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let listed = std::process::Command::new("git")
        .arg("ls-files")
        .current_dir(&root)
        .output()
        .expect("git ls-files");
    assert!(listed.status.success(), "git ls-files failed");
    let mut found = Vec::new();
    for file in String::from_utf8_lossy(&listed.stdout).lines() {
        if ["docs/load/", "web/assets/vendor/", "shared/data/"]
            .iter()
            .any(|skipped| file.starts_with(skipped))
        {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(root.join(file)) else {
            continue; // binary
        };
        for at in version_markers(&text) {
            let line = text[..at].matches('\n').count() + 1;
            found.push(format!("{file}:{line}"));
        }
    }
    assert!(found.is_empty(), "version markers: {found:?}");
}

#[test]
fn a_version_marker_is_told_from_code() {
    // Built here, so that this file carries none.
    let v = "(v";
    assert_eq!(version_markers(&format!("**{v}4)** text {v}3: old) {v}2, x)")).len(), 3);
    assert!(version_markers("IpAddr::V6(v6) f(v6.x) (v10) app(dir, v3)").is_empty());
    assert_eq!(
        version_markers(&format!("(docs/API.md, Conventions, {}3)", "v")).len(),
        1
    );
}
