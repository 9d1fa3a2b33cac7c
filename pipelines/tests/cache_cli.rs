//! `xir-opt`'s compile cache as a user sees it: `-v` says hit or miss with
//! the entry's path, a hit writes exactly what a fresh compilation writes
//! (for every backend emit, which share one entry), flags that watch the
//! passes bypass it, `--no-cache` leaves no directory, the directory follows
//! `--cache-dir`, `$XIR_CACHE_DIR`, `$XDG_CACHE_HOME` and `$HOME`, and a
//! corrupted entry is a warning, deleted and recompiled.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::scratch;

fn corpus(name: &str) -> String {
    format!("{}/../tests/corpus/{name}", env!("CARGO_MANIFEST_DIR"))
}

/// `xir-opt ARGS` with the short diagnostics and no cache variables from
/// the test's own environment; `env` sets some.
fn xir_opt_env(args: &[&str], env: &[(&str, &Path)]) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_xir-opt"));
    c.arg("--diagnostics=short").args(args);
    for var in ["XIR_CACHE_DIR", "XDG_CACHE_HOME", "HOME"] {
        c.env_remove(var);
    }
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().expect("xir-opt runs")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Every `.xce` entry under `dir`.
fn entries(dir: &Path) -> Vec<PathBuf> {
    fn walk(d: &Path, out: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(&p, out);
            } else {
                out.push(p);
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, &mut out);
    out.sort();
    out
}

/// `xir-opt saxpy --pipeline spirv -O2 --emit EMIT -o OUT --cache-dir CACHE -v EXTRA`.
fn compile(cache: &Path, emit: &str, out: &Path, extra: &[&str]) -> Output {
    compile_env(cache, emit, out, extra, &[])
}

/// `compile` with environment variables set.
fn compile_env(cache: &Path, emit: &str, out: &Path, extra: &[&str], env: &[(&str, &Path)]) -> Output {
    let saxpy = corpus("saxpy.xir");
    let mut args = vec![
        saxpy.as_str(),
        "--pipeline",
        "spirv",
        "--opt-level",
        "2",
        "--emit",
        emit,
        "-o",
        out.to_str().unwrap(),
        "--cache-dir",
        cache.to_str().unwrap(),
        "-v",
    ];
    args.extend_from_slice(extra);
    xir_opt_env(&args, env)
}

#[test]
fn a_second_run_is_a_hit_and_writes_the_same_bytes_for_every_backend_emit() {
    let dir = scratch("cache-cli-hit");
    let cache = dir.join("cache");
    let o = compile(&cache, "spirv", &dir.join("1.spv"), &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    let [entry] = entries(&cache).try_into().expect("one entry");
    assert_eq!(
        stderr(&o),
        format!("xir-opt: compile cache: {}: miss, stored {}\n", corpus("saxpy.xir"), entry.display())
    );
    for (emit, name) in [("spirv", "2.spv"), ("spirv-asm", "2.spvasm"), ("artifact", "2.xsa")] {
        let o = compile(&cache, emit, &dir.join(name), &[]);
        assert!(o.status.success(), "{}", stderr(&o));
        assert_eq!(
            stderr(&o),
            format!("xir-opt: compile cache: {}: hit {}\n", corpus("saxpy.xir"), entry.display()),
            "{emit}"
        );
        let fresh = compile(&cache, emit, &dir.join(format!("fresh-{name}")), &["--no-cache"]);
        assert_eq!(stderr(&fresh), "xir-opt: compile cache: off (--no-cache)\n");
        assert_eq!(
            std::fs::read(dir.join(name)).unwrap(),
            std::fs::read(dir.join(format!("fresh-{name}"))).unwrap(),
            "--emit {emit}: the hit wrote other bytes than a fresh compilation"
        );
    }
    assert_eq!(entries(&cache), [entry]);
}

#[test]
fn a_changed_option_misses() {
    let dir = scratch("cache-cli-options");
    let cache = dir.join("cache");
    let out = dir.join("k.spv");
    assert!(compile(&cache, "spirv", &out, &[]).status.success());
    for extra in [&["--fast-math"][..], &["--device-features", "lavapipe"], &["--device-features", "all"]] {
        let o = compile(&cache, "spirv", &out, extra);
        let miss = format!("xir-opt: compile cache: {}: miss, stored ", corpus("saxpy.xir"));
        assert!(stderr(&o).starts_with(&miss), "{extra:?}: {}", stderr(&o));
    }
    assert_eq!(entries(&cache).len(), 4);
}

#[test]
fn flags_that_watch_the_passes_bypass_the_cache() {
    let dir = scratch("cache-cli-bypass");
    let cache = dir.join("cache");
    let out = dir.join("k.spv");
    assert!(compile(&cache, "spirv", &out, &[]).status.success());
    for (flag, extra) in [
        ("--time-passes", &["--time-passes"][..]),
        ("--print-after-all", &["--print-after-all"]),
        ("--print-after", &["--print-after", "mem2reg"]),
        ("--print-before", &["--print-before", "mem2reg"]),
        ("--print-changed", &["--print-changed"]),
        ("--verify-each", &["--verify-each"]),
        ("--bisect-limit", &["--bisect-limit", "100"]),
    ] {
        let o = compile(&cache, "spirv", &out, extra);
        assert!(o.status.success(), "{flag}: {}", stderr(&o));
        let first = stderr(&o).lines().next().unwrap_or_default().to_string();
        assert_eq!(
            first,
            format!("xir-opt: compile cache: bypassed: {flag} watches the passes, so every kernel is compiled")
        );
    }
    // --time-passes still times the passes (a hit would have none).
    let o = compile(&cache, "spirv", &out, &["--time-passes"]);
    assert!(stderr(&o).contains("mem2reg"), "{}", stderr(&o));
    assert_eq!(entries(&cache).len(), 1);
}

/// A debug build's planted failure (`XIR_DEBUG_*`) changes what the
/// compiler makes but not the key: the cache is bypassed, so the planted
/// failure is seen (and a cached good module is not served in its place).
#[test]
fn a_planted_debug_failure_bypasses_the_cache() {
    if !cfg!(debug_assertions) {
        return eprintln!("skipped: the planted failures exist in debug builds only");
    }
    let dir = scratch("cache-cli-debug");
    let cache = dir.join("cache");
    let out = dir.join("k.spv");
    assert!(compile(&cache, "spirv", &out, &[]).status.success());
    let o = compile_env(&cache, "spirv", &out, &[], &[("XIR_DEBUG_MISCOMPILE_SPIRV", Path::new("1"))]);
    assert!(o.status.success(), "{}", stderr(&o));
    let first = stderr(&o).lines().next().unwrap_or_default().to_string();
    assert_eq!(
        first,
        "xir-opt: compile cache: bypassed: XIR_DEBUG_MISCOMPILE_SPIRV plants a failure, so every kernel is compiled"
    );
    assert_eq!(entries(&cache).len(), 1);
}

#[test]
fn no_cache_and_non_backend_emits_leave_no_directory() {
    let dir = scratch("cache-cli-none");
    let cache = dir.join("cache");
    let o = compile(&cache, "spirv", &dir.join("k.spv"), &["--no-cache"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = compile(&cache, "xir", &dir.join("k.xir"), &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stderr(&o), "");
    assert!(!cache.exists());
}

#[test]
fn the_directory_follows_the_flag_and_the_environment() {
    let dir = scratch("cache-cli-env");
    let saxpy = corpus("saxpy.xir");
    let out = dir.join("k.spv");
    let args = ["--pipeline", "spirv", "--emit", "spirv", "-o", out.to_str().unwrap(), saxpy.as_str()];
    let (flag, var, xdg, home) = (dir.join("flag"), dir.join("var"), dir.join("xdg"), dir.join("home"));
    type Case<'a> = (&'a [&'a str], Vec<(&'a str, &'a Path)>, PathBuf);
    let cases: [Case; 5] = [
        (&["--cache-dir", flag.to_str().unwrap()], vec![("XIR_CACHE_DIR", &var)], flag.clone()),
        (&[], vec![("XIR_CACHE_DIR", &var), ("XDG_CACHE_HOME", &xdg)], var.clone()),
        (&[], vec![("XDG_CACHE_HOME", &xdg), ("HOME", &home)], xdg.join("xir")),
        // A relative XDG_CACHE_HOME is ignored, as the XDG spec says.
        (&[], vec![("XDG_CACHE_HOME", Path::new("relative")), ("HOME", &home)], home.join(".cache").join("xir")),
        (&[], vec![("HOME", &home)], home.join(".cache").join("xir")),
    ];
    for (extra, env, expected) in &cases {
        let mut a = args.to_vec();
        a.extend_from_slice(extra);
        let o = xir_opt_env(&a, env);
        assert!(o.status.success(), "{}", stderr(&o));
        assert_eq!(entries(expected).len(), 1, "{extra:?} {env:?}: expected an entry under {}", expected.display());
        std::fs::remove_dir_all(expected).unwrap();
    }
    // Without any of them, the kernel is compiled and `-v` says why there is no cache.
    let mut a = args.to_vec();
    a.push("-v");
    let o = xir_opt_env(&a, &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        stderr(&o),
        "xir-opt: compile cache: off: no directory (set --cache-dir, $XIR_CACHE_DIR, $XDG_CACHE_HOME or $HOME)\n"
    );
}

#[test]
fn a_corrupted_entry_is_a_warning_then_recompiled_and_stored_again() {
    let dir = scratch("cache-cli-corrupt");
    let cache = dir.join("cache");
    let out = dir.join("k.spv");
    assert!(compile(&cache, "spirv", &out, &[]).status.success());
    let fresh = std::fs::read(&out).unwrap();
    let [entry] = entries(&cache).try_into().expect("one entry");
    let good = std::fs::read(&entry).unwrap();
    let mut bad = good.clone();
    bad[44 + 400] ^= 0x04; // in the properties section, after the 360-byte header
    std::fs::write(&entry, &bad).unwrap();
    std::fs::remove_file(&out).unwrap();
    let o = compile(&cache, "spirv", &out, &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    let path = entry.display();
    assert_eq!(
        stderr(&o),
        format!(
            "{path}: warning: [compile-cache] rejected the cached entry (Properties section digest mismatch: \
             the section is corrupt); deleted it and recompiled\n\
             xir-opt: compile cache: {}: recompiled, stored {path}\n",
            corpus("saxpy.xir")
        )
    );
    assert_eq!(std::fs::read(&out).unwrap(), fresh);
    assert_eq!(std::fs::read(&entry).unwrap(), good);
    // Truncated: the same, with the codec's reason; no `-v`, only the warning.
    std::fs::write(&entry, &good[..good.len() / 2]).unwrap();
    let saxpy = corpus("saxpy.xir");
    let o = xir_opt_env(
        &[&saxpy, "--pipeline", "spirv", "--opt-level", "2", "--emit", "spirv", "-o", out.to_str().unwrap()],
        &[("XIR_CACHE_DIR", &cache)],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        stderr(&o),
        format!(
            "{path}: warning: [compile-cache] rejected the cached entry (artifact length {} does not match the \
             header's {}); deleted it and recompiled\n",
            good.len() / 2 - 44,
            good.len() - 44
        )
    );
    assert_eq!(std::fs::read(&entry).unwrap(), good);
}

#[test]
fn an_unwritable_cache_is_a_warning_and_the_kernel_still_compiles() {
    let dir = scratch("cache-cli-unwritable");
    let file = dir.join("file");
    std::fs::write(&file, "").unwrap();
    let out = dir.join("k.spv");
    let o = compile(&file, "spirv", &out, &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    let err = stderr(&o);
    let key_dir = err.split(": warning").next().unwrap();
    assert!(key_dir.starts_with(&format!("{}/v1/", file.display())), "{err}");
    assert_eq!(
        err,
        format!(
            "{key_dir}: warning: [compile-cache] cannot store the compiled kernel: Not a directory (os error 20)\n"
        )
    );
    assert!(out.is_file());
}

/// A directory where an entry belongs is rejected like a bad entry, but it
/// is not deleted, and the warning says so instead of claiming it was.
#[test]
fn a_directory_in_an_entrys_place_is_left_alone_and_said_so() {
    let dir = scratch("cache-cli-entry-dir");
    let cache = dir.join("cache");
    let out = dir.join("k.spv");
    assert!(compile(&cache, "spirv", &out, &[]).status.success());
    let fresh = std::fs::read(&out).unwrap();
    let [entry] = entries(&cache).try_into().expect("one entry");
    std::fs::remove_file(&entry).unwrap();
    std::fs::create_dir(&entry).unwrap();
    std::fs::remove_file(&out).unwrap();
    let o = compile(&cache, "spirv", &out, &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    let warning = stderr(&o).lines().next().unwrap_or_default().to_string();
    assert!(
        warning.starts_with(&format!("{}: warning: [compile-cache] rejected the cached entry (", entry.display())),
        "{warning}"
    );
    assert!(warning.ends_with("); recompiled") && warning.contains("; could not delete it ("), "{warning}");
    assert!(entry.is_dir());
    assert_eq!(std::fs::read(&out).unwrap(), fresh);
}
