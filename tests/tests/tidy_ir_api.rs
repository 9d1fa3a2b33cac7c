//! Tidy: passes and the backend mutate IR only through the core's API,
//! and leave cache tuning to the core's walks (ARCHITECTURE.md, "IR
//! mutation"). Operand and block lists are private, so most of this is the
//! compiler's to enforce; this test keeps the names of the removed escape
//! hatches and of the look-ahead machinery from coming back outside the
//! core.

use std::path::Path;

/// Names that must not appear outside `framework/src/ir/` (the core), each
/// with the reason.
const FORBIDDEN: &[(&str, &str)] = &[
    ("inst_mut(", "operand lists change through set_operand(s), retarget, set_phi_incomings, ..."),
    ("block_mut(", "block lists change through the cursor, the rewriter or Function's methods"),
    ("set_parent(", "an instruction's block is set by whatever places it"),
    ("place_unlisted", "batched insertions go through Function::rewriter"),
    ("prefetch_ahead", "walks ask ahead: Function::walk with a Reads"),
    ("PREFETCH_DISTANCE", "no pass names a distance: Function::walk with a Reads"),
    ("_walk_ahead(", "walks ask ahead: Function::walk with a Reads"),
    ("prefetch_terminator_ahead", "walks ask ahead: Function::walk(.., reads::Terminator)"),
];

use xir_tests::source_tree::{repo, rust_files};

#[test]
fn passes_use_only_the_core_mutation_api_and_walks() {
    let root = repo();
    let core = root.join("framework/src/ir");
    let mut files = Vec::new();
    for dir in [
        "passes",
        "backend-spirv",
        "vulkan",
        "testgen",
        "pipelines",
        "ast",
        "frontend",
        "framework",
        "tests",
        "lsp",
        "reduce",
    ] {
        files.extend(rust_files(dir));
    }
    let this = Path::new(file!()).file_name().expect("file name");
    let mut found = Vec::new();
    for f in files {
        if f.starts_with(&core) || f.file_name() == Some(this) {
            continue;
        }
        let text = std::fs::read_to_string(&f).expect("readable source");
        for (n, line) in text.lines().enumerate() {
            for (name, why) in FORBIDDEN {
                if line.contains(name) {
                    found.push(format!("{}:{}: `{name}`: {why}", f.strip_prefix(&root).unwrap_or(&f).display(), n + 1));
                }
            }
        }
    }
    assert!(found.is_empty(), "outside the IR core:\n{}", found.join("\n"));
}

/// Passes and the backend say what a walk reads by composing `ir::reads`;
/// only the core (IR and analyses) names the prefetch hints themselves.
#[test]
fn passes_name_no_prefetch_hint() {
    let root = repo();
    let mut files = Vec::new();
    for dir in ["passes/src", "backend-spirv/src", "vulkan/src", "pipelines/src", "ast/src", "frontend/src"] {
        files.extend(rust_files(dir));
    }
    let found: Vec<String> = files
        .iter()
        .flat_map(|f| {
            let text = std::fs::read_to_string(f).expect("readable source");
            let rel = f.strip_prefix(&root).unwrap_or(f).display().to_string();
            text.lines()
                .enumerate()
                .filter(|(_, l)| l.contains(".prefetch_"))
                .map(|(n, _)| format!("{rel}:{}", n + 1))
                .collect::<Vec<_>>()
        })
        .collect();
    assert!(found.is_empty(), "prefetch hints outside the core (compose `xir::reads` instead):\n{}", found.join("\n"));
}
