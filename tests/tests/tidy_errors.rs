//! Tidy: errors that cross a module or crate boundary are typed
//! (ARCHITECTURE.md, "API boundary", and docs/diagnostics.md): no `pub` or
//! `pub(crate)` function of the libraries returns `Result<_, String>`, so
//! callers and tests match variants, not message text. The list of
//! exceptions below is empty and stays so.

use xir_tests::source_tree::{repo, rust_files};

/// `(file, function)` still returning `Result<_, String>`, with the reason
/// (empty: every library function's error is typed).
const ALLOWED: &[(&str, &str, &str)] = &[];

/// The signature starting at line `k`: its lines up to the body or `;`.
fn signature(lines: &[&str], k: usize) -> String {
    let mut sig = String::new();
    for line in lines.iter().skip(k).take(12) {
        sig.push_str(line.trim());
        sig.push(' ');
        if line.contains('{') || line.trim_end().ends_with(';') {
            break;
        }
    }
    sig
}

/// The function's name, when `sig` is a `pub` / `pub(crate)` function
/// returning `Result<_, String>`.
fn string_error_fn(sig: &str) -> Option<&str> {
    let rest = ["pub fn ", "pub(crate) fn "].iter().find_map(|p| sig.find(p).map(|at| &sig[at + p.len()..]))?;
    let name = &rest[..rest.find(['(', '<'])?];
    let ret = &rest[rest.find("-> Result<")?..];
    let ret = ret.split(['{', ';']).next()?.split(" where ").next()?.trim();
    ret.ends_with(", String>").then_some(name)
}

#[test]
fn public_functions_return_typed_errors() {
    let root = repo();
    let mut found = Vec::new();
    let mut allowed_seen = vec![false; ALLOWED.len()];
    for dir in [
        "framework/src",
        "passes/src",
        "pipelines/src",
        "backend-spirv/src",
        "frontend/src",
        "ast/src",
        "vulkan/src",
        "ir-spec/src",
    ] {
        for f in rust_files(dir) {
            let text = std::fs::read_to_string(&f).expect("readable source");
            let lines: Vec<&str> = text.lines().collect();
            let rel = f.strip_prefix(&root).unwrap_or(&f).display().to_string();
            for (k, line) in lines.iter().enumerate() {
                if !line.contains("pub fn ") && !line.contains("pub(crate) fn ") {
                    continue;
                }
                if let Some(name) = string_error_fn(&signature(&lines, k)) {
                    match ALLOWED.iter().position(|(file, f, _)| *file == rel && *f == name) {
                        Some(a) => allowed_seen[a] = true,
                        None => found.push(format!("{rel}:{}: `{name}` returns `Result<_, String>`", k + 1)),
                    }
                }
            }
        }
    }
    for ((file, name, _), seen) in ALLOWED.iter().zip(allowed_seen) {
        if !seen {
            found
                .push(format!("{file}: `{name}` is ALLOWED but no longer returns `Result<_, String>`: drop the entry"));
        }
    }
    assert!(found.is_empty(), "give these a typed error (or an ALLOWED entry with the reason):\n{}", found.join("\n"));
}

#[test]
fn the_signature_reader_finds_string_errors() {
    assert_eq!(string_error_fn("pub fn f(x: u32) -> Result<u32, String> {"), Some("f"));
    assert_eq!(
        string_error_fn("pub(crate) fn g<T>(x: T) -> Result<Vec<Option<T>>, String> where T: Copy {"),
        Some("g")
    );
    assert_eq!(string_error_fn("pub fn h() -> Result<u32, HError> {"), None);
    assert_eq!(string_error_fn("fn private() -> Result<u32, String> {"), None);
    assert_eq!(string_error_fn("pub fn m() -> Result<(String, u32), Error> {"), None);
}
