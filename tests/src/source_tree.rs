//! The repository's own sources, for the tidy tests: where the workspace
//! root is, and every Rust (or other text) file under a folder.

use std::path::{Path, PathBuf};

/// The workspace root (the folder above the `tests` crate).
pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("workspace root").to_path_buf()
}

/// Every `.rs` file under `dir` (absolute, or relative to the repository),
/// build outputs and hidden folders skipped, sorted. A missing folder has
/// none.
pub fn rust_files(dir: impl AsRef<Path>) -> Vec<PathBuf> {
    files_with(dir, &[".rs"])
}

/// Every file under `dir` whose name ends with one of `suffixes`, build
/// outputs and hidden folders skipped, sorted.
pub fn files_with(dir: impl AsRef<Path>, suffixes: &[&str]) -> Vec<PathBuf> {
    fn walk(dir: &Path, suffixes: &[&str], out: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else { return };
        for e in entries.flatten() {
            let p = e.path();
            let name = e.file_name().to_string_lossy().to_string();
            if name.starts_with('.') || name == "target" {
                continue;
            }
            if p.is_dir() {
                walk(&p, suffixes, out);
            } else if suffixes.iter().any(|s| name.ends_with(s)) {
                out.push(p);
            }
        }
    }
    let mut out = Vec::new();
    walk(&repo().join(dir), suffixes, &mut out);
    out.sort();
    out
}
