//! Embeds every shipped pipeline (`pipelines/*.ron`) in the crate, so the
//! drivers find them by name wherever the binaries are installed or moved;
//! nothing is looked up through a build-time path at run time. Their RON
//! syntax is checked here, which the loader then skips. Also computes the
//! build identity the compile cache keys on (`XIR_BUILD_ID`, below), and
//! links the drivers for a fast start (`link_drivers`).

use std::{env, fmt::Write, fs, path::Path};

use sha2::{Digest, Sha256};

/// The crates whose code or data decide what the compiler emits, relative
/// to the workspace root (docs/compile-cache.md, "Key").
const COMPILER_CRATES: &[&str] = &["ir-spec", "framework", "passes", "backend-spirv", "frontend", "ast", "pipelines"];

/// Folders of those crates that hold no compiler code or data.
const SKIPPED_DIRS: &[&str] = &["tests", "benches", "examples", "snapshots", "bad", "target"];

/// `XIR_BUILD_ID`: SHA-256 over the compiler's sources and data (every file
/// of [`COMPILER_CRATES`] but tests, benches and docs, by relative path),
/// the workspace's `Cargo.lock` (dependency versions), the `rustc -vV`
/// text, the profile and the target. A compile-cache entry written by any
/// other build misses, whether or not the crate version changed; built from
/// a published package (no workspace around it) it covers this crate alone.
fn build_id(manifest_dir: &Path) -> String {
    let root = manifest_dir.parent().filter(|r| r.join("Cargo.lock").is_file() && r.join("framework").is_dir());
    let mut files: Vec<(String, std::path::PathBuf)> = Vec::new();
    let crates: Vec<std::path::PathBuf> = match root {
        Some(r) => {
            println!("cargo:rerun-if-changed={}", r.join("Cargo.lock").display());
            files.push(("Cargo.lock".into(), r.join("Cargo.lock")));
            COMPILER_CRATES.iter().map(|c| r.join(c)).collect()
        }
        None => vec![manifest_dir.to_path_buf()],
    };
    for dir in &crates {
        let name = dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let start = files.len();
        collect(dir, &name, &mut files);
        // Re-run for what is hashed, not for the crate's tests: an edited
        // test must not rebuild this crate and everything above it.
        let mut tops: Vec<std::path::PathBuf> = files[start..]
            .iter()
            .filter_map(|(_, p)| p.strip_prefix(dir).ok()?.components().next().map(|c| dir.join(c)))
            .collect();
        tops.dedup();
        for t in tops {
            println!("cargo:rerun-if-changed={}", t.display());
        }
    }
    files.sort();
    let mut h = Sha256::new();
    for (rel, path) in &files {
        let bytes = fs::read(path).unwrap_or_default();
        h.update((rel.len() as u64).to_le_bytes());
        h.update(rel.as_bytes());
        h.update((bytes.len() as u64).to_le_bytes());
        h.update(&bytes);
    }
    let rustc = env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let version = std::process::Command::new(rustc).arg("-vV").output().map(|o| o.stdout).unwrap_or_default();
    h.update(&version);
    for var in ["PROFILE", "TARGET"] {
        h.update(env::var(var).unwrap_or_default().as_bytes());
        h.update([0]);
    }
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// Every file under `dir` (its path as `rel/...`) but hidden entries,
/// Markdown and the [`SKIPPED_DIRS`].
fn collect(dir: &Path, rel: &str, out: &mut Vec<(String, std::path::PathBuf)>) {
    let Ok(entries) = fs::read_dir(dir) else { return };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') || name.ends_with(".md") {
            continue;
        }
        let path = e.path();
        let sub = format!("{rel}/{name}");
        if path.is_dir() {
            if !SKIPPED_DIRS.contains(&name.as_str()) {
                collect(&path, &sub, out);
            }
        } else {
            out.push((sub, path));
        }
    }
}

/// Link arguments of the drivers (`xir-opt`, `xir-run`) on Linux with the
/// GNU toolchain, for start-up time. Measured with callgrind on `xir-opt
/// tests/wgsl/saxpy.wgsl --pipeline spirv --emit spirv` (a compile-cache
/// hit, 8.34 M instructions before; BENCHMARKS.md, "WGSL compile speed"):
///
/// - libstdc++ (SPIRV-Tools' runtime) linked statically: the dynamic
///   loader bound about 3,300 of libstdc++.so's own symbol references at
///   every start (1.64 M instructions); linked in, the few parts used are
///   bound by the static linker. `spirv-tools-sys` asks for `-lstdc++`, so
///   a search directory holding only `libstdc++.a` is put first. Gives up:
///   the drivers carry their own copy of what they use (0.66 MB more
///   binary) instead of sharing the system's library and its updates.
///   Without a `libstdc++.a` they link it dynamically, as before.
/// - `-no-pie`: a position-dependent executable has no `R_X86_64_RELATIVE`
///   relocations for the loader to apply (22,661 of them, 0.33 M
///   instructions). Gives up: address-space layout randomization of the
///   executable's own code and data (shared libraries, stack and heap are
///   still randomized).
///
/// Lazy binding (`-z lazy`) was measured too and not taken: 0.06 M
/// instructions for giving up the read-only GOT of full RELRO. Nothing
/// here changes the library crates, tests or other binaries.
fn link_drivers() {
    println!("cargo:rerun-if-env-changed=CC");
    let linux_gnu = env::var("CARGO_CFG_TARGET_OS").is_ok_and(|o| o == "linux")
        && env::var("CARGO_CFG_TARGET_ENV").is_ok_and(|e| e == "gnu");
    if !linux_gnu {
        return;
    }
    println!("cargo:rustc-link-arg-bins=-no-pie");
    // The host's `cc` knows where the host's `libstdc++.a` is, not a
    // cross target's.
    if env::var("TARGET").ok() != env::var("HOST").ok() {
        return;
    }
    let cc = env::var("CC").unwrap_or_else(|_| "cc".into());
    let found = std::process::Command::new(cc)
        .arg("-print-file-name=libstdc++.a")
        .output()
        .ok()
        .map(|o| std::path::PathBuf::from(String::from_utf8_lossy(&o.stdout).trim()))
        .filter(|p| p.is_absolute() && p.is_file());
    let Some(archive) = found else {
        println!("cargo:warning=no libstdc++.a found: the drivers link libstdc++ dynamically (slower start-up)");
        return;
    };
    let dir = Path::new(&env::var("OUT_DIR").expect("cargo sets OUT_DIR")).join("static-libstdcxx");
    fs::create_dir_all(&dir).expect("OUT_DIR is writable");
    let link = dir.join("libstdc++.a");
    let _ = fs::remove_file(&link);
    if fs::copy(&archive, &link).is_err() {
        println!("cargo:warning=cannot copy {}: the drivers link libstdc++ dynamically", archive.display());
        return;
    }
    println!("cargo:rustc-link-arg-bins=-L{}", dir.display());
}

fn main() {
    link_drivers();
    let dir = env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    println!("cargo:rerun-if-changed={dir}");
    println!("cargo:rustc-env=XIR_BUILD_ID={}", build_id(Path::new(&dir)));
    let mut names: Vec<String> = fs::read_dir(&dir)
        .expect("the crate directory is readable")
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter_map(|n| n.strip_suffix(".ron").map(str::to_string))
        .collect();
    names.sort();
    let mut out = String::from("/// The shipped pipelines by name, with their text (generated by `build.rs`).\n");
    out.push_str("pub const SHIPPED: &[(&str, &str)] = &[\n");
    for name in &names {
        let path = Path::new(&dir).join(format!("{name}.ron"));
        println!("cargo:rerun-if-changed={}", path.display());
        // `Loader::with_shipped` skips `ron`'s syntax pass for embedded
        // texts: it runs here, once, instead of at every start.
        let text = fs::read_to_string(&path).expect("a shipped pipeline is readable");
        if let Err(e) = ron::from_str::<ron::Value>(&text) {
            panic!("pipelines/{name}.ron:{e}");
        }
        writeln!(out, "    ({name:?}, include_str!({:?})),", path.display().to_string()).unwrap();
    }
    out.push_str("];\n");
    fs::write(Path::new(&env::var("OUT_DIR").expect("cargo sets OUT_DIR")).join("shipped.rs"), out)
        .expect("OUT_DIR is writable");
}
