//! Tidy: each crate means one thing (ARCHITECTURE.md, code map and API
//! boundaries). Embedding the compiler (`xir-spirv`, and `xir-pipelines`
//! without its `run` feature) pulls in no Vulkan and no proptest: `ash` is
//! a dependency of `xir-vulkan` only, `proptest` and `xir-testgen` are
//! dev-dependencies everywhere but in `xir-testgen` itself. The backend's
//! plans never read emission (plans are computed first; emission reads
//! them). Read from the manifests and sources, so a dependency added in the
//! wrong section fails here, not in a user's build.

use std::collections::BTreeMap;

use xir_tests::source_tree::{repo, rust_files};

/// A manifest's dependencies: (section, dependency name) pairs, the section
/// being the last dotted part of its header (`dependencies`,
/// `dev-dependencies`, `build-dependencies`; `target.*.dependencies` too).
fn dependencies(manifest: &str) -> Vec<(String, String)> {
    dependency_lines(manifest).into_iter().map(|(s, n, _)| (s, n)).collect()
}

/// [`dependencies`] with whether each is `optional = true` (one-line entries).
fn dependency_lines(manifest: &str) -> Vec<(String, String, bool)> {
    let mut section = String::new();
    let mut out = Vec::new();
    for line in manifest.lines().map(str::trim) {
        if let Some(h) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            section = h.rsplit('.').next().unwrap_or(h).trim().to_string();
            continue;
        }
        if !section.ends_with("dependencies") || line.starts_with('#') || line.is_empty() {
            continue;
        }
        let name = line.split(['=', '.']).next().unwrap_or("").trim();
        if !name.is_empty() {
            out.push((section.clone(), name.to_string(), line.contains("optional = true")));
        }
    }
    out
}

/// `package name -> (directory, manifest text)` of every workspace member.
fn members() -> BTreeMap<String, (String, String)> {
    let root = repo();
    let top = std::fs::read_to_string(root.join("Cargo.toml")).expect("workspace manifest");
    let list = top.split("members = [").nth(1).and_then(|s| s.split(']').next()).expect("members list");
    let mut out = BTreeMap::new();
    for dir in list.split(',').map(|s| s.trim().trim_matches('"')).filter(|s| !s.is_empty()) {
        let text = std::fs::read_to_string(root.join(dir).join("Cargo.toml")).expect("member manifest");
        let name = text
            .lines()
            .find_map(|l| l.trim().strip_prefix("name = \""))
            .and_then(|l| l.strip_suffix('"'))
            .expect("package name")
            .to_string();
        out.insert(name, (dir.to_string(), text));
    }
    out
}

#[test]
fn the_manifest_reader_sees_sections() {
    let deps = dependencies(
        "[package]\nname = \"x\"\n[dependencies]\nxir.workspace = true\nhalf = \"2\"\n# ash = 1\n\
         [dev-dependencies]\nproptest = { workspace = true }\n[target.'cfg(unix)'.dependencies]\nlibc = \"0.2\"\n",
    );
    let want =
        [("dependencies", "xir"), ("dependencies", "half"), ("dev-dependencies", "proptest"), ("dependencies", "libc")];
    assert_eq!(deps, want.map(|(s, n)| (s.to_string(), n.to_string())));
    let opt =
        dependency_lines("[dependencies]\nxir-vulkan = { workspace = true, optional = true }\nxir.workspace = true\n");
    assert_eq!(opt, [("dependencies".into(), "xir-vulkan".into(), true), ("dependencies".into(), "xir".into(), false)]);
}

#[test]
fn proptest_and_the_generators_are_dev_dependencies_only() {
    let members = members();
    assert!(members.contains_key("xir-testgen") && members.contains_key("xir-vulkan"), "{:?}", members.keys());
    let mut found = Vec::new();
    for (name, (dir, text)) in &members {
        for (section, dep) in dependencies(text) {
            let generator = dep == "proptest" || dep == "xir-testgen";
            if generator && section != "dev-dependencies" && name != "xir-testgen" {
                found.push(format!("{dir}/Cargo.toml: `{dep}` in [{section}]"));
            }
            if dep == "ash" && name != "xir-vulkan" {
                found.push(format!("{dir}/Cargo.toml: `ash` in [{section}]: the Vulkan runner is xir-vulkan"));
            }
        }
    }
    assert!(found.is_empty(), "{}", found.join("\n"));
}

#[test]
fn embedding_the_compiler_pulls_in_no_vulkan_and_no_proptest() {
    let members = members();
    // The non-optional normal-dependency closure of the backend and of the
    // pipelines crate without its default `run` feature (`xir-run`'s runner),
    // through workspace crates.
    let mut closure = vec!["xir-spirv".to_string(), "xir-pipelines".to_string()];
    let mut i = 0;
    while i < closure.len() {
        if let Some((_, text)) = members.get(&closure[i]) {
            for (section, dep, optional) in dependency_lines(text) {
                if section == "dependencies" && !optional && !closure.contains(&dep) {
                    closure.push(dep);
                }
            }
        }
        i += 1;
    }
    for banned in ["ash", "proptest", "xir-vulkan", "xir-testgen"] {
        assert!(!closure.contains(&banned.to_string()), "the compiler pulls in `{banned}`: {closure:?}");
    }
    for wanted in ["xir", "xir-spec", "xir-passes", "xir-frontend", "rspirv", "spirv-tools"] {
        assert!(closure.contains(&wanted.to_string()), "closure misses `{wanted}`: {closure:?}");
    }
}

#[test]
fn backend_plans_do_not_read_emission() {
    let root = repo();
    let files = rust_files(root.join("backend-spirv/src/plan"));
    assert!(files.len() >= 10, "the plan directory moved? {files:?}");
    let mut found = Vec::new();
    for f in files {
        let text = std::fs::read_to_string(&f).expect("readable source");
        for (n, line) in text.lines().enumerate() {
            if ["crate::emit", "super::super::emit", "crate::{emit"].iter().any(|p| line.contains(p)) {
                found.push(format!("{}:{}: {}", f.strip_prefix(&root).unwrap_or(&f).display(), n + 1, line.trim()));
            }
        }
    }
    assert!(found.is_empty(), "plan/ reads emit/ (move the shared item to plan/):\n{}", found.join("\n"));
}
