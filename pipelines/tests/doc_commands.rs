//! Every command the README and the docs show, run as shown: each line of a
//! fenced `sh` block in `README.md`, `*/README.md` and `docs/*.md` that calls
//! `xir-opt` or `xir-run` (directly or through `cargo run`) runs with the
//! built binaries, from a scratch directory that sees the repository's
//! `tests/`, `pipelines/` and `docs/`, and must exit 0. The test command
//! and the install command are checked for what they are; the set-up
//! commands (apt, rustup) are left alone; any other command fails the test,
//! so a new doc command cannot go unchecked. Vulkan runs skip loudly
//! without a Vulkan device. One of the tidy rules (ARCHITECTURE.md, "Tidy";
//! the others are `tests/tests/tidy.rs`).

use std::path::{Path, PathBuf};
use std::process::Command;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

/// The documents whose commands are checked.
fn documents() -> Vec<PathBuf> {
    let root = repo();
    let mut docs = vec![root.join("README.md")];
    for e in std::fs::read_dir(&root).unwrap().flatten() {
        let readme = e.path().join("README.md");
        if readme.is_file() {
            docs.push(readme);
        }
    }
    for e in std::fs::read_dir(root.join("docs")).unwrap().flatten() {
        if e.path().extension().is_some_and(|x| x == "md") {
            docs.push(e.path());
        }
    }
    docs.sort();
    docs
}

/// The command lines of the fenced `sh` blocks: comments dropped, `\`
/// continuations joined; each with its `file:line`.
fn commands(doc: &Path) -> Vec<(String, String)> {
    let text = std::fs::read_to_string(doc).unwrap();
    let name = doc.strip_prefix(repo()).unwrap().display().to_string();
    let (mut out, mut in_sh, mut pending) = (Vec::new(), false, None::<(String, String)>);
    for (i, line) in text.lines().enumerate() {
        let trimmed = line.trim();
        if let Some(info) = trimmed.strip_prefix("```") {
            in_sh = !in_sh && matches!(info.trim(), "sh" | "bash" | "shell");
            continue;
        }
        if !in_sh {
            continue;
        }
        let code = trimmed.split(" #").next().unwrap().trim();
        if code.is_empty() || code.starts_with('#') {
            continue;
        }
        let (at, mut cmd) = pending.take().unwrap_or_else(|| (format!("{name}:{}", i + 1), String::new()));
        match code.strip_suffix('\\') {
            Some(head) => {
                cmd.push_str(head);
                cmd.push(' ');
                pending = Some((at, cmd));
            }
            None => {
                cmd.push_str(code);
                out.push((at, cmd));
            }
        }
    }
    out
}

enum Kind {
    /// One of the drivers, with its arguments.
    Driver(&'static str, Vec<String>),
    /// The README's test command.
    TestCommand,
    /// `cargo install` of the drivers.
    Install,
    /// Machine set-up, not the project's.
    SetUp,
}

fn classify(words: &[&str]) -> Option<Kind> {
    let bin = |b: &str| match b {
        "xir-opt" => Some(env!("CARGO_BIN_EXE_xir-opt")),
        "xir-run" => Some(env!("CARGO_BIN_EXE_xir-run")),
        _ => None,
    };
    let rest = |w: &[&str]| w.iter().map(|s| s.to_string()).collect();
    match words {
        ["cargo", "run", "-p", "xir-pipelines", "--bin", b, "--", args @ ..] => Some(Kind::Driver(bin(b)?, rest(args))),
        [b, args @ ..] if bin(b).is_some() => Some(Kind::Driver(bin(b)?, rest(args))),
        ["scripts/test", ..] => Some(Kind::TestCommand),
        ["cargo", "install", .., "--path", "pipelines"] => Some(Kind::Install),
        ["sudo" | "echo" | "rustup" | "curl", ..] => Some(Kind::SetUp),
        _ => None,
    }
}

fn vulkan_available() -> bool {
    match xir_vulkan::Device::new() {
        Ok(_) => true,
        Err(xir_vulkan::RunError::NoVulkan(why)) => {
            eprintln!("\n!!!!!!!! SKIPPING THE DOCS' VULKAN COMMANDS: no Vulkan device ({why}) !!!!!!!!\n");
            false
        }
        Err(e) => panic!("Vulkan device creation failed: {e}"),
    }
}

#[test]
fn every_command_in_the_readme_and_docs_runs_as_shown() {
    let tmp = tempfile::tempdir().unwrap();
    let scratch = tmp.path();
    for dir in ["tests", "pipelines", "docs"] {
        std::os::unix::fs::symlink(repo().join(dir), scratch.join(dir)).unwrap();
    }
    let vulkan = vulkan_available();
    let (mut ran, mut failures) = (0, Vec::new());
    for doc in documents() {
        for (at, cmd) in commands(&doc) {
            assert!(!cmd.contains(['"', '\'', '$', '|', '>', '<', ';', '&']), "{at}: keep doc commands plain: {cmd}");
            let words: Vec<&str> = cmd.split_whitespace().collect();
            match classify(&words) {
                None => failures.push(format!("{at}: a command this test does not know how to check: {cmd}")),
                Some(Kind::SetUp) => {}
                Some(Kind::TestCommand) => {
                    let ci = std::fs::read_to_string(repo().join(".ci/run")).unwrap();
                    assert!(ci.lines().any(|l| l.trim() == "scripts/test"), "{at}: .ci/run must run {cmd}");
                    assert!(repo().join("scripts/test").is_file());
                }
                Some(Kind::Install) => {
                    // CI runs it and the installed binary (`.ci/run`); here,
                    // what it builds: both drivers, which find their
                    // pipelines without files (output_cli.rs runs a moved one).
                    let ci = std::fs::read_to_string(repo().join(".ci/run")).unwrap();
                    assert!(ci.contains("cargo install --locked --path pipelines"), "{at}: .ci/run must run {cmd}");
                    let manifest = std::fs::read_to_string(repo().join("pipelines/Cargo.toml")).unwrap();
                    assert!(manifest.contains("name = \"xir-opt\"") && manifest.contains("name = \"xir-run\""));
                }
                Some(Kind::Driver(bin, args)) => {
                    let on_vulkan =
                        args.iter().any(|a| ["--vulkan", "--compare", "--artifact", "--oracle"].contains(&a.as_str()));
                    if on_vulkan && !vulkan {
                        continue;
                    }
                    let o = Command::new(bin).args(&args).current_dir(scratch).output().unwrap();
                    ran += 1;
                    if !o.status.success() {
                        failures.push(format!("{at}: `{cmd}` failed:\n{}", String::from_utf8_lossy(&o.stderr)));
                    }
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(ran >= 10, "only {ran} commands found: is the README's sh block still fenced as `sh`?");
}

/// The pipeline format example of `pipelines/README.md` loads: it is what
/// a user copies to start a pipeline. Its relative include gets a file.
#[test]
fn the_pipeline_format_example_loads() {
    let text = std::fs::read_to_string(repo().join("pipelines/README.md")).unwrap();
    let start = text.find("```ron\n").expect("a ron block") + "```ron\n".len();
    let example = &text[start..start + text[start..].find("```").unwrap()];
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("p")).unwrap();
    std::fs::create_dir_all(dir.path().join("experiments")).unwrap();
    let extra = "Pipeline(name: \"extra\", input: \"xir\", output: \"xir\", steps: [Pass(\"dce\")])";
    std::fs::write(dir.path().join("experiments/extra.ron"), extra).unwrap();
    let file = dir.path().join("p/example.ron");
    std::fs::write(&file, example).unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_xir-opt")).arg("--check-pipeline").arg(&file).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}
