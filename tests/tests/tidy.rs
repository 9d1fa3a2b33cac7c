//! Tidy tests (rust-analyzer's practice): rules about the source tree that
//! reviews forget, checked by `cargo test` so they cannot rot. Each rule is
//! one test; ARCHITECTURE.md ("Tidy") lists them. The fourth rule, every
//! README/docs command runs, is `pipelines/tests/doc_commands.rs`.

use std::collections::BTreeMap;

use xir::pass::{PassInfo, Produces};

/// The workspace crates' folders (the members of the root `Cargo.toml`,
/// and `fuzz`, its own nightly workspace).
const CRATES: &[&str] = &[
    "ir-spec",
    "framework",
    "ast",
    "frontend",
    "passes",
    "backend-spirv",
    "vulkan",
    "testgen",
    "pipelines",
    "tests",
    "lsp",
    "reduce",
    "fuzz",
];

/// Where pass files live; a pass's file is the one that declares its
/// `PassInfo` (`name: "NAME"`).
const PASS_DIRS: &[&str] = &["passes/src", "backend-spirv/src"];

/// The most lines a Rust file may have without an allowlist entry.
const MAX_LINES: usize = 800;

use xir_tests::source_tree::repo;

/// Every `.rs` file under `dir`, relative to the repository, sorted.
fn rust_files(dir: &str) -> Vec<String> {
    let root = repo();
    xir_tests::source_tree::rust_files(dir)
        .iter()
        .map(|p| p.strip_prefix(&root).expect("under the repository").display().to_string())
        .collect()
}

fn all_rust_files() -> Vec<String> {
    CRATES.iter().flat_map(|c| rust_files(c)).collect()
}

fn read(rel: &str) -> String {
    std::fs::read_to_string(repo().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

#[test]
fn every_rust_file_starts_with_a_module_doc() {
    let files = all_rust_files();
    assert!(files.len() > 100, "found only {} Rust files", files.len());
    let missing: Vec<&String> = files.iter().filter(|f| !read(f).starts_with("//!")).collect();
    assert!(
        missing.is_empty(),
        "these files do not start with a `//!` comment saying what they are for and why:\n{}",
        missing.iter().map(|f| format!("  {f}")).collect::<Vec<_>>().join("\n")
    );
}

/// The allowlist: `path  reason` per line, `#` comments.
fn allowlist() -> BTreeMap<String, String> {
    let text = read("tests/tidy-allowlist.txt");
    let mut out = BTreeMap::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (path, reason) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
        assert!(!reason.trim().is_empty(), "tests/tidy-allowlist.txt:{}: `{path}` needs a reason", i + 1);
        assert!(
            out.insert(path.to_string(), reason.trim().to_string()).is_none(),
            "tests/tidy-allowlist.txt:{}: `{path}` listed twice",
            i + 1
        );
    }
    out
}

#[test]
fn no_rust_file_is_over_the_line_limit_unless_allowlisted() {
    let allowed = allowlist();
    let mut problems = Vec::new();
    let mut long = Vec::new();
    for f in all_rust_files() {
        let n = read(&f).lines().count();
        if n > MAX_LINES {
            long.push(f.clone());
            if !allowed.contains_key(&f) {
                problems.push(format!("  {f}: {n} lines (over {MAX_LINES}): split it, or list it with a reason"));
            }
        }
    }
    for path in allowed.keys() {
        if !long.contains(path) {
            problems.push(format!("  {path}: listed but not over {MAX_LINES} lines (or gone): remove the entry"));
        }
    }
    assert!(problems.is_empty(), "tests/tidy-allowlist.txt:\n{}", problems.join("\n"));
}

/// The backticked names at the start of a contract line: `` `a`, `b` `` up to
/// the first text that is not part of the list.
fn leading_names(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = s.trim_start();
    while let Some(after) = rest.strip_prefix('`') {
        let Some(end) = after.find('`') else { break };
        out.push(after[..end].to_string());
        rest = after[end + 1..].trim_start();
        match rest.strip_prefix(',') {
            Some(r) => rest = r.trim_start(),
            None => break,
        }
    }
    out
}

/// The item `//! - KEY: ...` of the module doc, its continuation lines
/// (`//!   ...`) joined on.
fn contract_line(doc: &[&str], key: &str) -> Result<String, String> {
    let prefix = format!("//! - {key}: ");
    let hits: Vec<String> = doc
        .iter()
        .enumerate()
        .filter_map(|(i, l)| {
            let first = l.strip_prefix(prefix.as_str())?;
            let more = doc[i + 1..].iter().map_while(|l| l.strip_prefix("//!   "));
            Some(std::iter::once(first).chain(more).map(str::trim).collect::<Vec<_>>().join(" "))
        })
        .collect();
    match hits.as_slice() {
        [one] => Ok(one.clone()),
        [] => Err(format!("no `{}` line", prefix.trim_end())),
        _ => Err(format!("`{}` appears {} times", prefix.trim_end(), hits.len())),
    }
}

/// Check one pass's module doc against its declaration.
fn check_contract(info: &PassInfo, source: &str) -> Vec<String> {
    let doc: Vec<&str> = source.lines().take_while(|l| l.starts_with("//!")).collect();
    let mut errs = Vec::new();
    let consumes: Vec<String> = info.consumes.iter().map(|s| s.to_string()).collect();
    match contract_line(&doc, "Consumes") {
        Ok(l) if leading_names(&l) == consumes => {}
        Ok(l) => errs.push(format!("`Consumes: {l}` should name exactly {}", ticks(&consumes))),
        Err(e) => errs.push(e),
    }
    match (contract_line(&doc, "Produces"), info.produces) {
        (Ok(l), Produces::Same) if l.starts_with("the same dialect") => {}
        (Ok(l), Produces::Same) => errs.push(format!("`Produces: {l}` should start `the same dialect`")),
        (Ok(l), p) => {
            let want: Vec<String> = p.named().iter().map(|s| s.to_string()).collect();
            if leading_names(&l) != want {
                errs.push(format!("`Produces: {l}` should name exactly {}", ticks(&want)));
            }
        }
        (Err(e), _) => errs.push(e),
    }
    let preserves: Vec<String> = info.preserves.iter().map(|a| a.name().to_string()).collect();
    match contract_line(&doc, "Preserves") {
        Ok(l) if preserves.is_empty() && l.starts_with("nothing") => {}
        Ok(l) if info.preserves == xir::pass::AnalysisKind::ALL && l.starts_with("everything") => {}
        Ok(l) if !preserves.is_empty() && leading_names(&l) == preserves => {}
        Ok(l) => errs.push(format!(
            "`Preserves: {l}` should be {}",
            if preserves.is_empty() { "`nothing`".to_string() } else { format!("exactly {}", ticks(&preserves)) }
        )),
        Err(e) => errs.push(e),
    }
    errs
}

fn ticks(names: &[String]) -> String {
    names.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(", ")
}

/// The pass file of every declared `PassInfo` name under `PASS_DIRS`.
fn pass_files() -> BTreeMap<String, Vec<String>> {
    let mut out: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for dir in PASS_DIRS {
        for f in rust_files(dir) {
            let text = read(&f);
            let mut rest = text.as_str();
            while let Some(i) = rest.find("PassInfo {") {
                rest = &rest[i + "PassInfo {".len()..];
                let Some(name) = rest.trim_start().strip_prefix("name: \"") else { continue };
                let name = &name[..name.find('"').unwrap()];
                out.entry(name.to_string()).or_default().push(f.clone());
            }
        }
    }
    out
}

#[test]
fn every_pass_file_header_states_its_declared_contract() {
    let reg = xir_pipelines::registry();
    let files = pass_files();
    let mut problems = Vec::new();
    let mut checked = 0;
    for decl in reg.iter() {
        let info = &decl.info;
        // `debug.*` are the drivers' test aids (pipelines/src/debug_passes.rs,
        // three to a file): they break IR on purpose and have no contract.
        if info.name.starts_with("debug.") {
            continue;
        }
        let file = match files.get(info.name).map(Vec::as_slice) {
            Some([one]) => one,
            Some(many) => {
                problems.push(format!("{}: declared in {} files: {}", info.name, many.len(), many.join(", ")));
                continue;
            }
            None => {
                problems.push(format!("{}: no file under {} declares it", info.name, PASS_DIRS.join(" or ")));
                continue;
            }
        };
        checked += 1;
        for e in check_contract(info, &read(file)) {
            problems.push(format!("{file} ({}): {e}", info.name));
        }
    }
    let per_file: BTreeMap<&String, usize> = files.values().flatten().fold(BTreeMap::new(), |mut m, f| {
        *m.entry(f).or_insert(0) += 1;
        m
    });
    for (f, n) in per_file {
        if n > 1 {
            problems.push(format!("{f}: declares {n} passes; one pass per file"));
        }
    }
    assert!(checked >= 40, "checked only {checked} passes");
    assert!(
        problems.is_empty(),
        "pass headers and declarations disagree (the `//! - Consumes:` / `Produces:` / `Preserves:` lines, \
         ARCHITECTURE.md \"Tidy\"):\n{}",
        problems.join("\n")
    );
}

/// The contract check itself: a header that names the declared contract
/// passes, one naming anything else fails.
#[test]
fn the_contract_check_rejects_a_wrong_header() {
    use xir::pass::AnalysisKind;
    let info = PassInfo {
        name: "p",
        doc: "",
        consumes: &["xir.raw", "xir.structured"],
        produces: Produces::Dialect("xir.raw.phi_free"),
        preserves: &[AnalysisKind::Cfg, AnalysisKind::CallGraph],
        eliminates: &[],
    };
    let good = "//! `p`.\n//!\n//! - Consumes: `xir.raw`, `xir.structured` (prose, `xir`).\n\
                //! - Produces: `xir.raw.phi_free`.\n//! - Preserves: `cfg`, `call_graph`.\n\nfn x() {}\n";
    assert_eq!(check_contract(&info, good), Vec::<String>::new());
    let bad = good.replace("`cfg`, ", "");
    assert_eq!(check_contract(&info, &bad), vec!["`Preserves: `call_graph`.` should be exactly `cfg`, `call_graph`"]);
    let same = PassInfo { produces: Produces::Same, preserves: &[], ..info.clone() };
    let same_doc = good.replace("`xir.raw.phi_free`.", "the same dialect.").replace("`cfg`, `call_graph`.", "nothing.");
    assert_eq!(check_contract(&same, &same_doc), Vec::<String>::new());
    let missing = good.replace("//! - Produces", "//! Produces");
    assert_eq!(check_contract(&info, &missing), vec!["no `//! - Produces:` line"]);
    // Only the module doc counts: a contract line after it is not read.
    let late = format!("//! `p`.\n\n{}", good.lines().skip(2).collect::<Vec<_>>().join("\n"));
    assert_eq!(check_contract(&info, &late).len(), 3);
}

/// A merge that left conflict markers in a file is caught here, not by a
/// reader of ARCHITECTURE.md (it happened once).
#[test]
fn no_file_holds_merge_conflict_markers() {
    let texts = [".rs", ".md", ".ron", ".toml", ".xir", ".wgsl", ".comp", ".sh", ".lua", ".json", ".py"];
    let mut found = Vec::new();
    for p in xir_tests::source_tree::files_with("", &texts) {
        let Ok(text) = std::fs::read_to_string(&p) else { continue };
        for (k, line) in text.lines().enumerate() {
            if line.starts_with("<<<<<<< ") || line.starts_with(">>>>>>> ") {
                found.push(format!("{}:{}", p.display(), k + 1));
            }
        }
    }
    assert!(found.is_empty(), "merge conflict markers at:\n{}", found.join("\n"));
}
