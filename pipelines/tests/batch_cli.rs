//! `xir-opt --jobs N INPUTS... -o OUTDIR`, the batch mode: the corpus
//! compiled as a batch gives the bytes one-by-one compilation gives (cold
//! cache and warm), a failing input fails the batch without an output of
//! its own and with its diagnostics printed whole in input order, and the
//! usage errors are refused before any work.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::scratch;

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/corpus")
}

fn xir_opt(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_xir-opt")).args(args).output().expect("xir-opt runs")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// The corpus kernels' names, sorted.
fn kernels() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(corpus_dir())
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.strip_suffix(".xir").map(str::to_string))
        .collect();
    names.sort();
    names
}

#[test]
fn the_corpus_as_a_batch_is_byte_for_byte_one_by_one_compilation() {
    let dir = scratch("batch-corpus");
    let (batch, cache, single) = (dir.join("batch"), dir.join("cache"), dir.join("single"));
    let corpus = corpus_dir();
    let common = ["--pipeline", "spirv", "--opt-level", "2", "--emit", "artifact"];
    let mut args = vec!["--jobs", "2", s(&corpus), "-o", s(&batch), "--cache-dir", s(&cache)];
    args.extend_from_slice(&common);
    let cold = xir_opt(&args);
    assert!(cold.status.success(), "{}", stderr(&cold));
    assert_eq!(stderr(&cold), "");
    let names = kernels();
    assert!(names.len() >= 30, "{names:?}");
    let mut written: Vec<String> =
        std::fs::read_dir(&batch).unwrap().flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect();
    written.sort();
    assert_eq!(written, names.iter().map(|n| format!("{n}.xsa")).collect::<Vec<_>>());
    std::fs::create_dir(&single).unwrap();
    for n in &names {
        let input = corpus.join(format!("{n}.xir"));
        let out = single.join(format!("{n}.xsa"));
        let mut a = vec![s(&input), "-o", s(&out), "--no-cache"];
        a.extend_from_slice(&common);
        let o = xir_opt(&a);
        assert!(o.status.success(), "{n}: {}", stderr(&o));
        assert_eq!(std::fs::read(&out).unwrap(), std::fs::read(batch.join(format!("{n}.xsa"))).unwrap(), "{n}");
    }
    // Warm: every kernel a hit, the same bytes again.
    std::fs::remove_dir_all(&batch).unwrap();
    args.push("-v");
    let warm = xir_opt(&args);
    assert!(warm.status.success(), "{}", stderr(&warm));
    let err = stderr(&warm);
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), names.len(), "{err}");
    for (line, n) in lines.iter().zip(&names) {
        let input = corpus.join(format!("{n}.xir"));
        let prefix = format!("xir-opt: compile cache: {}: hit {}/v1/", input.display(), cache.display());
        assert!(line.starts_with(&prefix), "{line}");
    }
    for n in &names {
        let file = format!("{n}.xsa");
        assert_eq!(std::fs::read(batch.join(&file)).unwrap(), std::fs::read(single.join(&file)).unwrap(), "{n}");
    }
}

#[test]
fn a_failing_input_fails_the_batch_with_its_diagnostics_whole_and_in_order() {
    let dir = scratch("batch-fail");
    let inputs = dir.join("in");
    std::fs::create_dir(&inputs).unwrap();
    let saxpy = std::fs::read_to_string(corpus_dir().join("saxpy.xir")).unwrap();
    std::fs::write(inputs.join("a.xir"), &saxpy).unwrap();
    std::fs::write(inputs.join("b.xir"), saxpy.replace("%r = add %ax, %yi : f32", "%r = add %ax, %nope : f32"))
        .unwrap();
    std::fs::write(inputs.join("c.xir"), saxpy.replace("block_size(64, 1, 1)", "block_size(64, 1")).unwrap();
    std::fs::write(inputs.join("d.xir"), &saxpy).unwrap();
    std::fs::write(inputs.join("notes.txt"), "not an input").unwrap();
    let out = dir.join("out");
    let o = xir_opt(&[
        "--jobs",
        "3",
        s(&inputs),
        "--pipeline",
        "spirv",
        "--emit",
        "spirv",
        "-o",
        s(&out),
        "--no-cache",
        "--diagnostics=human",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    // What each failing input prints alone, in input order, then the summary.
    let alone = |name: &str| {
        let input = inputs.join(name);
        let o = xir_opt(&[
            s(&input),
            "--pipeline",
            "spirv",
            "--emit",
            "spirv",
            "-o",
            s(&dir.join("alone.spv")),
            "--no-cache",
            "--diagnostics=human",
        ]);
        assert_eq!(o.status.code(), Some(1));
        stderr(&o)
    };
    let (b, c) = (alone("b.xir"), alone("c.xir"));
    assert!(b.lines().count() > 3 && c.lines().count() > 3, "multi-line diagnostics:\n{b}\n{c}");
    let expected = format!(
        "{b}{c}xir-opt: error: 2 of 4 inputs failed: {}, {}\n",
        inputs.join("b.xir").display(),
        inputs.join("c.xir").display()
    );
    assert_eq!(stderr(&o), expected);
    let mut written: Vec<String> =
        std::fs::read_dir(&out).unwrap().flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect();
    written.sort();
    assert_eq!(written, ["a.spv", "d.spv"]);
}

#[test]
fn usage_errors_are_refused_before_any_work() {
    let dir = scratch("batch-usage");
    let saxpy = corpus_dir().join("saxpy.xir");
    let (one, two, empty) = (dir.join("one"), dir.join("two"), dir.join("empty"));
    for d in [&one, &two, &empty] {
        std::fs::create_dir(d).unwrap();
    }
    std::fs::copy(&saxpy, one.join("k.xir")).unwrap();
    std::fs::copy(&saxpy, two.join("k.xir")).unwrap();
    std::fs::write(dir.join("file"), "").unwrap();
    let out = dir.join("out");
    let (missing, file) = (dir.join("missing.xir"), dir.join("file"));
    let cases: Vec<(Vec<&str>, String)> = vec![
        (
            vec![s(&saxpy), s(&saxpy)],
            "xir-opt: error: several inputs need `-o OUTDIR`, the directory their outputs go to\n".into(),
        ),
        (
            vec!["--jobs", "2", s(&saxpy), "-o", "-"],
            "xir-opt: error: several inputs need `-o OUTDIR`, the directory their outputs go to\n".into(),
        ),
        (
            vec![s(&one), s(&two), "-o", s(&out)],
            format!(
                "xir-opt: error: `{}` and `{}` would both write `{}`\n",
                one.join("k.xir").display(),
                two.join("k.xir").display(),
                out.join("k.xir").display()
            ),
        ),
        (
            vec![s(&one), "--emit", "xir", "-o", s(&one)],
            format!("xir-opt: error: `{}` would overwrite its own input\n", one.join("k.xir").display()),
        ),
        (
            vec![s(&saxpy), "-", "-o", s(&out)],
            "xir-opt: error: `-` (standard input) cannot be one of several inputs\n".into(),
        ),
        (
            vec![s(&empty), "-o", s(&out)],
            format!(
                "xir-opt: error: {}: no `.xir`, `.wgsl`, `.comp`, `.glsl` or `.spv` file in the directory\n",
                empty.display()
            ),
        ),
        (
            vec![s(&saxpy), s(&missing), "-o", s(&out)],
            format!("xir-opt: error: {}: no such file or directory\n", missing.display()),
        ),
        (
            vec![s(&one), "-o", s(&file)],
            format!("xir-opt: error: {}: the output directory is a file\n", file.display()),
        ),
        (
            vec![s(&one), s(&saxpy), "--pipeline", "spirv", "--then", s(&saxpy)],
            "xir-opt: error: --then takes one INPUT, not a batch\n".into(),
        ),
    ];
    for (args, expected) in &cases {
        let o = xir_opt(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert_eq!(&stderr(&o), expected, "{args:?}");
    }
    assert!(!out.exists(), "nothing was written");
    let o = xir_opt(&["--jobs", "0", s(&saxpy), "-o", s(&out)]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).starts_with("error: invalid value '0' for '--jobs <N>': 0 is not in 1.."), "{}", stderr(&o));
}

#[test]
fn one_input_with_jobs_is_a_batch_of_one() {
    let dir = scratch("batch-one");
    let saxpy = corpus_dir().join("saxpy.xir");
    let out = dir.join("out");
    let o = xir_opt(&["-j", "1", s(&saxpy), "--emit", "xir", "-o", s(&out)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let printed = std::fs::read_to_string(out.join("saxpy.xir")).unwrap();
    let single = xir_opt(&[s(&saxpy), "--emit", "xir"]);
    assert_eq!(printed.as_bytes(), single.stdout.as_slice());
}
