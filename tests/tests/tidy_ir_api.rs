//! Tidy: passes and the backend mutate IR only through the core's API,
//! and leave cache tuning to the core's walks (ARCHITECTURE.md, "IR
//! mutation"). Operand and block lists are private, so most of this is the
//! compiler's to enforce; this test keeps the names of the removed escape
//! hatches and of the look-ahead machinery from coming back outside the
//! core.

use std::path::{Path, PathBuf};

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

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("workspace root").to_path_buf()
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

#[test]
fn passes_use_only_the_core_mutation_api_and_walks() {
    let root = repo();
    let core = root.join("framework/src/ir");
    let mut files = Vec::new();
    for dir in ["passes", "backend-spirv", "vulkan", "testgen", "pipelines", "ast", "frontend", "framework", "tests"] {
        rust_files(&root.join(dir), &mut files);
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
