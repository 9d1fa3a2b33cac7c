//! File-based pass tests: every `tests/filetests/**/*.xir` is one test (one
//! libtest-mimic trial, so `cargo test -- NAME` selects files). A file names
//! its pipeline in a header line, holds the input module, and states what the
//! pipeline must make of it: the exact printed module, FileCheck-style lines,
//! or the errors. Adding a case means adding a file; `XIR_BLESS=1` rewrites
//! exact blocks. The format is docs/filetests.md.

use std::path::{Path, PathBuf};

use libtest_mimic::{Arguments, Failed, Trial};
use xir::pipeline::{PassManager, RunOptions};

/// The line that opens an exact expectation; every line after it is the
/// printed output, each behind `// ` (an empty line is a bare `//`).
const MARKER: &str = "// ---- expected ----";

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("filetests")
}

fn main() {
    let args = Arguments::from_args();
    let mut files = Vec::new();
    collect(&root(), &mut files);
    files.sort();
    let mut trials: Vec<Trial> = files
        .into_iter()
        .map(|path| {
            let name = path.strip_prefix(root()).unwrap().display().to_string();
            Trial::test(name, move || run_file(&path).map_err(Failed::from))
        })
        .collect();
    trials.push(Trial::test("every_pass_and_shipped_pipeline_has_a_file_test", || coverage().map_err(Failed::from)));
    trials.push(Trial::test("runner_fails_what_it_should", || self_test().map_err(Failed::from)));
    libtest_mimic::run(&args, trials).exit();
}

/// Every registered pass (but the `debug.*` test aids) and every shipped
/// pipeline has a folder of its name holding at least one file test.
fn coverage() -> Result<(), String> {
    let reg = xir_pipelines::registry();
    let loader = shipped_loader(&reg);
    let names = reg.names().filter(|n| !n.starts_with("debug.")).map(String::from).chain(loader.shipped());
    let missing: Vec<String> = names
        .filter(|n| {
            let mut files = Vec::new();
            let dir = root().join(n);
            if dir.is_dir() {
                collect(&dir, &mut files);
            }
            files.is_empty()
        })
        .collect();
    if missing.is_empty() {
        Ok(())
    } else {
        Err(format!("no file test under tests/filetests/NAME/ for: {}", missing.join(", ")))
    }
}

/// The shipped pipelines only: a `$XIR_PIPELINE_DIR` in the environment
/// must not change what a file test runs.
fn shipped_loader(reg: &xir::pass::PassRegistry) -> xir::pipeline::Loader<'_> {
    xir::pipeline::Loader::new(reg).with_shipped(xir_pipelines::SHIPPED)
}

fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())).flatten() {
        let p = e.path();
        if p.is_dir() {
            collect(&p, out);
        } else if p.extension().is_some_and(|x| x == "xir") {
            out.push(p);
        }
    }
}

/// One FileCheck directive.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum CheckKind {
    Check,
    Next,
    Not,
    Label,
}

#[derive(Debug)]
struct Check {
    kind: CheckKind,
    pattern: String,
    /// 1-based line of the directive in the test file.
    line: usize,
}

/// An expected error: the diagnostic's rule and, when given, its position
/// and the positions of its secondary labels in the same file (`None`: the
/// labels are not compared).
#[derive(Debug, PartialEq, Eq)]
struct ExpectedError {
    rule: String,
    at: Option<(u32, u32)>,
    labels: Option<Vec<(u32, u32)>>,
}

impl ExpectedError {
    /// Whether `got` (an actual error, labels always known) meets `self`.
    fn admits(&self, got: &ExpectedError) -> bool {
        self.rule == got.rule && self.at == got.at && (self.labels.is_none() || self.labels == got.labels)
    }
}

impl std::fmt::Display for ExpectedError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.at {
            Some((l, c)) => write!(f, "{} at {l}:{c}", self.rule)?,
            None => write!(f, "{}", self.rule)?,
        }
        for (l, c) in self.labels.iter().flatten() {
            write!(f, "; label at {l}:{c}")?;
        }
        Ok(())
    }
}

/// A test file, split into its parts.
#[derive(Debug, Default)]
struct TestFile {
    pipeline: Option<String>,
    dialect: Option<String>,
    opt_level: u8,
    fast_math: bool,
    /// `// inputs: JSON` lines: on each, the first kernel must give the same
    /// outputs (or the same interpreter error) before and after the pipeline.
    inputs: Vec<String>,
    /// `// stat: PASS.KEY = VALUE`: a statistic the pass reports
    /// (`--time-passes`' column), summed over its steps and runs.
    stats: Vec<(String, String, String)>,
    /// The file with every directive and the expected block blanked out
    /// (line numbers kept, so diagnostics point into the file).
    module_text: String,
    /// Index of the marker line, when the file has an exact block.
    marker: Option<usize>,
    expected: Option<String>,
    checks: Vec<Check>,
    errors: Vec<ExpectedError>,
}

fn parse_file(text: &str) -> Result<TestFile, String> {
    let mut t = TestFile::default();
    let lines: Vec<&str> = text.lines().collect();
    let mut module = Vec::with_capacity(lines.len());
    let mut in_header = true;
    for (i, &line) in lines.iter().enumerate() {
        let n = i + 1;
        if t.marker.is_some() {
            module.push("");
            continue;
        }
        if line == MARKER {
            t.marker = Some(i);
            module.push("");
            continue;
        }
        let trimmed = line.trim_start();
        let Some(comment) = trimmed.strip_prefix("//") else {
            if !trimmed.is_empty() {
                in_header = false;
            }
            module.push(line);
            continue;
        };
        let body = comment.strip_prefix(' ').unwrap_or(comment);
        let directive = |prefix: &str| body.strip_prefix(prefix).map(str::trim);
        if let Some((kind, pattern)) = [
            ("CHECK:", CheckKind::Check),
            ("CHECK-NEXT:", CheckKind::Next),
            ("CHECK-NOT:", CheckKind::Not),
            ("CHECK-LABEL:", CheckKind::Label),
        ]
        .iter()
        .find_map(|&(p, k)| directive(p).map(|rest| (k, rest)))
        {
            if pattern.is_empty() {
                return Err(format!("line {n}: empty CHECK pattern"));
            }
            t.checks.push(Check { kind, pattern: pattern.to_string(), line: n });
            module.push("");
            continue;
        }
        if body.split_once(':').is_some_and(|(w, _)| w.starts_with("CHECK") && !w.contains(' ')) {
            return Err(format!("line {n}: unknown directive `{body}` (CHECK, CHECK-NEXT, CHECK-NOT, CHECK-LABEL)"));
        }
        if let Some(rest) = directive("error:") {
            t.errors.push(parse_error(rest).map_err(|e| format!("line {n}: {e}"))?);
            module.push("");
            continue;
        }
        if in_header {
            // The leading comment block is the header: directives and prose,
            // none of it part of the module.
            if let Some(v) = directive("pipeline:") {
                t.pipeline = Some(v.to_string());
            } else if let Some(v) = directive("dialect:") {
                t.dialect = Some(v.to_string());
            } else if let Some(v) = directive("opt-level:") {
                t.opt_level =
                    v.parse().ok().filter(|&l| l <= 3).ok_or(format!("line {n}: opt-level `{v}` is not 0..=3"))?;
            } else if let Some(v) = directive("stat:") {
                let bad = || format!("line {n}: want `// stat: PASS.KEY = VALUE`");
                let (lhs, value) = v.split_once('=').ok_or_else(bad)?;
                let (pass, key) = lhs.trim().rsplit_once('.').ok_or_else(bad)?;
                t.stats.push((pass.to_string(), key.to_string(), value.trim().to_string()));
            } else if let Some(v) = directive("inputs:") {
                t.inputs.push(v.to_string());
            } else if body.trim() == "fast-math" {
                t.fast_math = true;
            }
            module.push("");
            continue;
        }
        module.push(line);
    }
    if let Some(m) = t.marker {
        let mut block = String::new();
        for (k, &l) in lines[m + 1..].iter().enumerate() {
            let content = if l == "//" {
                ""
            } else {
                l.strip_prefix("// ")
                    .ok_or(format!("line {}: an expected-block line must start with `// `", m + k + 2))?
            };
            block.push_str(content);
            block.push('\n');
        }
        t.expected = Some(block);
    }
    if t.pipeline.is_none() {
        return Err("no `// pipeline: ...` header line".into());
    }
    if t.fast_math && !t.inputs.is_empty() {
        return Err("`// fast-math` may change results: no `// inputs:` with it".into());
    }
    let kinds = [t.marker.is_some(), !t.checks.is_empty(), !t.errors.is_empty()];
    if kinds.iter().filter(|&&k| k).count() > 1 {
        return Err("a file has one kind of expectation: an exact block, CHECK lines, or `// error:` lines".into());
    }
    t.module_text = module.join("\n") + "\n";
    Ok(t)
}

/// `LINE:COL`.
fn parse_position(pos: &str) -> Result<(u32, u32), String> {
    let (l, c) = pos.trim().split_once(':').ok_or(format!("position `{pos}` is not LINE:COL"))?;
    let parse = |x: &str| x.trim().parse::<u32>().map_err(|_| format!("position `{pos}` is not LINE:COL"));
    Ok((parse(l)?, parse(c)?))
}

/// `RULE` or `RULE at LINE:COL`, then any number of `; label at LINE:COL`
/// (the secondary labels in this file, in order; with none given, labels
/// are not compared).
fn parse_error(s: &str) -> Result<ExpectedError, String> {
    let mut parts = s.split("; ");
    let head = parts.next().unwrap_or_default();
    let (rule, at) = match head.split_once(" at ") {
        Some((rule, pos)) => (rule, Some(parse_position(pos)?)),
        None => (head, None),
    };
    if rule.trim().is_empty() || rule.contains(char::is_whitespace) {
        return Err(format!("`error: {s}`: want `error: RULE` or `error: RULE at LINE:COL`"));
    }
    let mut labels = Vec::new();
    for p in parts {
        let pos = p.strip_prefix("label at ").ok_or(format!("`{p}`: want `label at LINE:COL`"))?;
        labels.push(parse_position(pos)?);
    }
    let labels = (!labels.is_empty()).then_some(labels);
    Ok(ExpectedError { rule: rule.trim().to_string(), at, labels })
}

/// The pipeline RON for a header: a shipped pipeline name, a registered pass
/// (`name` or `name(options)`), or a list of those in `[...]`.
fn pipeline_ron(spec: &str, reg: &xir::pass::PassRegistry, input: &str) -> Result<String, String> {
    let items: Vec<String> = match spec.strip_prefix('[') {
        Some(rest) => split_top(rest.strip_suffix(']').ok_or("a pipeline list ends with `]`")?)
            .into_iter()
            .map(String::from)
            .collect(),
        None => vec![spec.to_string()],
    };
    let mut steps = Vec::new();
    for item in &items {
        let (name, opts) = match item.split_once('(') {
            Some((n, o)) => (n.trim(), Some(format!("({o}"))),
            None => (item.trim(), None),
        };
        if reg.get(name).is_some() {
            steps.push(match opts {
                Some(o) => format!("Pass({name:?}, {o})"),
                None => format!("Pass({name:?})"),
            });
        } else if opts.is_none() {
            steps.push(format!("Include({name:?})"));
        } else {
            return Err(format!("`{name}` is not a registered pass"));
        }
    }
    Ok(format!("Pipeline(name: \"filetest\", input: {input:?}, output: \"xir\", steps: [{}])", steps.join(", ")))
}

/// Split on commas outside parentheses and brackets.
fn split_top(s: &str) -> Vec<&str> {
    let (mut out, mut depth, mut start) = (Vec::new(), 0i32, 0);
    for (i, c) in s.char_indices() {
        match c {
            '(' | '[' => depth += 1,
            ')' | ']' => depth -= 1,
            ',' if depth == 0 => {
                out.push(s[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(s[start..].trim());
    out.retain(|x| !x.is_empty());
    out
}

/// What running a file gave: the printed module, or its errors.
enum Outcome {
    Printed(String),
    Errors(Vec<ExpectedError>, String),
}

fn errors_of(diags: &[xir::Diagnostic], fallback_rule: &str, rendered: String) -> Outcome {
    let mut errs: Vec<ExpectedError> = diags
        .iter()
        .filter(|d| d.is_error())
        .map(|d| ExpectedError {
            rule: d.rule.name().to_string(),
            at: d.span.map(|s| (s.line, s.col)),
            labels: Some(
                d.labels
                    .iter()
                    .filter(|l| l.file.is_none() || l.file == d.file)
                    .map(|l| (l.span.line, l.span.col))
                    .collect(),
            ),
        })
        .collect();
    if errs.is_empty() {
        errs.push(ExpectedError { rule: fallback_rule.to_string(), at: None, labels: Some(Vec::new()) });
    }
    Outcome::Errors(errs, rendered)
}

fn execute(t: &TestFile, file: &str) -> Result<Outcome, String> {
    let mut module = match xir::text::parse_module(&t.module_text, file) {
        Ok(m) => m,
        Err(d) => return Ok(errors_of(&d, "parse", xir::diag::render(&d))),
    };
    let diags = xir::verify::verify_module(&module);
    if diags.iter().any(|d| d.is_error()) {
        return Ok(errors_of(&diags, "verify", xir::diag::render(&diags)));
    }
    let reg = xir_pipelines::registry();
    let loader = shipped_loader(&reg);
    let spec = t.pipeline.as_deref().unwrap_or_default();
    let is_pass_list = spec.starts_with('[') || reg.get(spec.split('(').next().unwrap_or("").trim()).is_some();
    let pipeline = if is_pass_list {
        let first = split_top(spec.trim_start_matches('[').trim_end_matches(']')).first().map(|s| s.to_string());
        // The first pass's first consumed dialect, or the input of the
        // first included pipeline.
        let first = first.unwrap_or_default();
        let first = first.split('(').next().unwrap_or("").trim();
        let input = match (&t.dialect, reg.get(first)) {
            (Some(d), _) => d.clone(),
            (None, Some(decl)) => decl.info.consumes.first().map_or("xir".to_string(), |s| s.to_string()),
            (None, None) => loader.load(first).map_err(|e| format!("pipeline `{first}`:\n{e}"))?.input,
        };
        let ron = pipeline_ron(spec, &reg, &input)?;
        loader.load_text("filetest.ron".into(), None, &ron).map_err(|e| format!("pipeline `{spec}`:\n{}", e))?
    } else {
        if t.dialect.is_some() {
            return Err("`// dialect:` is for pass lists; a shipped pipeline declares its input".into());
        }
        loader.load(spec).map_err(|e| format!("pipeline `{spec}`:\n{}", e))?
    };
    let options = RunOptions {
        opt_level: t.opt_level,
        fast_math: t.fast_math,
        verify_each: true,
        time_passes: !t.stats.is_empty(),
        ..RunOptions::default()
    };
    let inputs = t
        .inputs
        .iter()
        .map(|json| xir::interp::Inputs::from_json(json).map_err(|e| format!("`// inputs: {json}`: {e}")))
        .collect::<Result<Vec<_>, _>>()?;
    let kernel = module.func_ids().find(|&f| module.func(f).is_kernel());
    if !inputs.is_empty() && kernel.is_none() {
        return Err("`// inputs:` needs a kernel".into());
    }
    let before: Vec<_> = inputs.iter().map(|i| interpret(&module, i)).collect();
    match PassManager::new(&pipeline, options).run(&mut module, &mut std::io::sink()) {
        Ok(report) => {
            let printed = xir::text::print_module(&module);
            for (pass, key, want) in &t.stats {
                // Summed over every step of that pass.
                let values: Vec<&str> = report
                    .timings
                    .iter()
                    .filter(|r| &r.name == pass)
                    .filter_map(|r| r.stats.iter().find(|(k, _)| k == key))
                    .map(|(_, v)| v.as_str())
                    .collect();
                let got = match values.as_slice() {
                    [] => "none".to_string(),
                    [one] => one.to_string(),
                    many => many.iter().map(|v| v.parse::<i64>().unwrap_or(0)).sum::<i64>().to_string(),
                };
                if &got != want {
                    return Err(format!("stat {pass}.{key}: want {want}, got {got}"));
                }
            }
            // The printed result must read back as itself.
            let again = xir::text::parse_module(&printed, "printed.xir")
                .map_err(|d| format!("the printed result does not parse:\n{}\n{printed}", xir::diag::render(&d)))?;
            if xir::text::print_module(&again) != printed {
                return Err(format!("the printed result does not print back the same:\n{printed}"));
            }
            for ((before, inputs), json) in before.iter().zip(&inputs).zip(&t.inputs) {
                let after = interpret(&module, inputs);
                let differs = match (before, &after) {
                    (Ok(b), Ok(a)) => b.first_mismatch(a, |_, _| false).map(|mm| mm.to_string()),
                    (Err(b), Err(a)) if a == b => None,
                    _ => Some(format!("before: {before:?}\n after: {after:?}")),
                };
                if let Some(d) = differs {
                    return Err(format!("interpreter results on {json} changed by the pipeline: {d}\n{printed}"));
                }
            }
            Ok(Outcome::Printed(printed))
        }
        Err(e) => {
            let fallback = format!("{:?}", e.kind);
            Ok(errors_of(&e.diagnostics, &kebab(&fallback), e.to_string()))
        }
    }
}

/// Run the module's first kernel on the interpreter; an error is a result
/// too (a pass must keep a trap where it was).
fn interpret(m: &xir::Module, inputs: &xir::interp::Inputs) -> Result<xir::interp::Outputs, String> {
    let k = m.func_ids().find(|&f| m.func(f).is_kernel()).ok_or("no kernel")?;
    xir::interp::run_kernel(m, k, inputs).map_err(|e| e.message)
}

/// `PassError` -> `pass-error`: a failure without diagnostics is named by its kind.
fn kebab(s: &str) -> String {
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if c.is_uppercase() && i > 0 {
            out.push('-');
        }
        out.push(c.to_ascii_lowercase());
    }
    out
}

fn bless() -> bool {
    std::env::var_os("XIR_BLESS").is_some_and(|v| !v.is_empty() && v != "0")
}

fn run_file(path: &Path) -> Result<(), String> {
    run_file_as(path, bless())
}

/// Run one file; with `bless`, rewrite its exact block instead of comparing.
fn run_file_as(path: &Path, bless: bool) -> Result<(), String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let file = path.display().to_string();
    let t = parse_file(&text).map_err(|e| format!("{file}: {e}"))?;
    let outcome = execute(&t, &file).map_err(|e| format!("{file}: {e}"))?;
    if !t.errors.is_empty() {
        return match outcome {
            Outcome::Errors(got, _)
                if got.len() == t.errors.len() && t.errors.iter().zip(&got).all(|(want, got)| want.admits(got)) =>
            {
                Ok(())
            }
            Outcome::Errors(got, rendered) => {
                Err(format!("{file}: errors differ\n want: {}\n  got: {}\n{rendered}", list(&t.errors), list(&got)))
            }
            Outcome::Printed(p) => {
                Err(format!("{file}: expected errors {}, but the run succeeded:\n{p}", list(&t.errors)))
            }
        };
    }
    let printed = match outcome {
        Outcome::Printed(p) => p,
        Outcome::Errors(got, rendered) => {
            return Err(format!("{file}: the run failed ({}):\n{rendered}", list(&got)));
        }
    };
    if !t.checks.is_empty() {
        return filecheck(&t.checks, &printed).map_err(|e| format!("{file}:{e}\n--- output ---\n{printed}"));
    }
    if bless {
        let keep = match t.marker {
            Some(m) => text.lines().take(m).collect::<Vec<_>>().join("\n"),
            None => text.clone(),
        };
        let mut new = keep.trim_end().to_string();
        new.push_str("\n\n");
        new.push_str(MARKER);
        new.push('\n');
        for l in printed.lines() {
            new.push_str(if l.is_empty() { "//".to_string() } else { format!("// {l}") }.as_str());
            new.push('\n');
        }
        if new != text {
            std::fs::write(path, new).map_err(|e| format!("{file}: {e}"))?;
        }
        return Ok(());
    }
    let Some(expected) = &t.expected else {
        return Err(format!(
            "{file}: no expectation (an exact block, CHECK lines or `// error:`); XIR_BLESS=1 writes the exact block"
        ));
    };
    if expected.trim_end() == printed.trim_end() {
        return Ok(());
    }
    let diff = similar::TextDiff::from_lines(expected.trim_end(), printed.trim_end());
    Err(format!(
        "{file}: output differs from the expected block (XIR_BLESS=1 rewrites it)\n{}",
        diff.unified_diff().context_radius(3).header("expected", "actual")
    ))
}

fn list(errs: &[ExpectedError]) -> String {
    errs.iter().map(ToString::to_string).collect::<Vec<_>>().join(", ")
}

/// FileCheck, line-granular: `CHECK-LABEL` lines are found first, in order,
/// and cut the output into blocks; in each block `CHECK` finds the next line
/// containing its pattern, `CHECK-NEXT` must be the line right after the
/// previous match, and `CHECK-NOT` must not occur between the matches around
/// it. Patterns are literal substrings (surrounding spaces trimmed).
fn filecheck(checks: &[Check], output: &str) -> Result<(), String> {
    let lines: Vec<&str> = output.lines().collect();
    // Label positions, in order.
    let mut bounds = Vec::new();
    let mut from = 0;
    for c in checks.iter().filter(|c| c.kind == CheckKind::Label) {
        let at = (from..lines.len())
            .find(|&i| lines[i].contains(&c.pattern))
            .ok_or(format!("{}: CHECK-LABEL: `{}` not found", c.line, c.pattern))?;
        bounds.push(at);
        from = at + 1;
    }
    let mut label = 0;
    let mut end = bounds.first().copied().unwrap_or(lines.len());
    let mut cursor = 0; // next line a positive check may match
    let mut last: Option<usize> = None;
    let mut nots: Vec<&Check> = Vec::new();
    let check_nots = |nots: &mut Vec<&Check>, lo: usize, hi: usize| -> Result<(), String> {
        for n in nots.drain(..) {
            if let Some(i) = (lo..hi).find(|&i| lines[i].contains(&n.pattern)) {
                return Err(format!(
                    "{}: CHECK-NOT: `{}` found on output line {}: {}",
                    n.line,
                    n.pattern,
                    i + 1,
                    lines[i]
                ));
            }
        }
        Ok(())
    };
    for c in checks {
        match c.kind {
            CheckKind::Label => {
                let at = bounds[label];
                check_nots(&mut nots, cursor, at)?;
                label += 1;
                end = bounds.get(label).copied().unwrap_or(lines.len());
                cursor = at + 1;
                last = Some(at);
            }
            CheckKind::Not => nots.push(c),
            CheckKind::Check => {
                let at = (cursor..end)
                    .find(|&i| lines[i].contains(&c.pattern))
                    .ok_or(format!("{}: CHECK: `{}` not found after output line {}", c.line, c.pattern, cursor))?;
                check_nots(&mut nots, cursor, at)?;
                cursor = at + 1;
                last = Some(at);
            }
            CheckKind::Next => {
                let want = last.map_or(0, |l| l + 1);
                if want >= end || !lines[want].contains(&c.pattern) {
                    return Err(format!(
                        "{}: CHECK-NEXT: `{}` is not on output line {} ({})",
                        c.line,
                        c.pattern,
                        want + 1,
                        lines.get(want).copied().unwrap_or("<end>")
                    ));
                }
                check_nots(&mut nots, cursor, want)?;
                cursor = want + 1;
                last = Some(want);
            }
        }
    }
    check_nots(&mut nots, cursor, end)
}

/// The runner itself: each kind of expectation fails when it should (a
/// runner that passes everything would make every file test vacuous).
fn self_test() -> Result<(), String> {
    let checks = |text: &str| parse_file(&format!("// pipeline: dce\n{text}")).map(|t| t.checks);
    let out = "kernel @k() {\n^entry:\n  %a = add\n  %b = mul\n  return\n}\n";
    let run = |text: &str| filecheck(&checks(text)?, out);
    let cases: &[(&str, bool)] = &[
        ("// CHECK: %a = add\n// CHECK-NEXT: %b = mul\n// CHECK-NOT: sub\n", true),
        ("// CHECK: %b = mul\n// CHECK: %a = add\n", false), // order matters
        ("// CHECK: %a = add\n// CHECK-NEXT: return\n", false),
        ("// CHECK: ^entry\n// CHECK-NOT: mul\n// CHECK: return\n", false),
        ("// CHECK-LABEL: kernel @k\n// CHECK: return\n", true),
        ("// CHECK-LABEL: return\n// CHECK-LABEL: kernel\n", false),
        ("// CHECK: sub\n", false),
    ];
    for (text, ok) in cases {
        if run(text).is_ok() != *ok {
            return Err(format!(
                "filecheck on {text:?}: want {}, got {:?}",
                if *ok { "a pass" } else { "a failure" },
                run(text)
            ));
        }
    }
    for bad in [
        "kernel @k() {}\n",                                                // no pipeline
        "// pipeline: dce\n// CHECK: x\nk\n// ---- expected ----\n// k\n", // two kinds
        "// pipeline: dce\n// error: two words at 1:1\n",
        "// pipeline: dce\n// error: parse at one\n",
        "// pipeline: dce\n// error: parse at 1:1; lable at 2:2\n",
        "// pipeline: dce\n// CHECK-NXT: x\n",
        "// pipeline: dce\n// ---- expected ----\nnot a comment\n",
        "// pipeline: dce\n// fast-math\n// inputs: {}\n",
    ] {
        if parse_file(bad).is_ok() {
            return Err(format!("parse_file accepted {bad:?}"));
        }
    }
    // A wrong exact block fails with a diff; wrong errors and a run that
    // fails against an exact block fail too.
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let module =
        "kernel @k(%o: buffer<u32>) block_size(1, 1, 1) {\n^entry:\n  %x = add u32 1, u32 2 : u32\n  return\n}\n";
    let file = |name: &str, text: String| -> Result<PathBuf, String> {
        let p = dir.path().join(name);
        std::fs::write(&p, text).map_err(|e| e.to_string())?;
        Ok(p)
    };
    let stale = file("stale.xir", format!("// pipeline: dce\n\n{module}\n{MARKER}\n// kernel @k() {{\n"))?;
    match run_file_as(&stale, false) {
        Err(e) if e.contains("+^entry:") && e.contains("-kernel @k() {") => {}
        other => return Err(format!("a stale exact block: {other:?}")),
    }
    let wrong = file("wrong.xir", format!("// pipeline: dce\n\n{module}\n// error: parse at 3:3\n"))?;
    if run_file_as(&wrong, false).is_ok() {
        return Err("a run that succeeds passed an `error:` expectation".into());
    }
    let parse_error = "// pipeline: dce\n\nkernel @k( {\n// error: parse at 3:12\n";
    run_file_as(&file("parse.xir", parse_error.into())?, false).map_err(|e| format!("a located parse error: {e}"))?;
    // Secondary labels: compared when given, a wrong one fails.
    let twice = "// pipeline: dce\n\nkernel @k() block_size(1, 1, 1) {\n^entry:\n  %x = add u32 1, u32 2 : u32\n  \
                 %x = add u32 1, u32 2 : u32\n  return\n}\n";
    let label = |at: &str| file("label.xir", format!("{twice}// error: parse at 6:3; label at {at}\n"));
    run_file_as(&label("5:3")?, false).map_err(|e| format!("a redefinition labels the first definition: {e}"))?;
    if run_file_as(&label("6:3")?, false).is_ok() {
        return Err("a wrong `label at` passed".into());
    }
    let bad_pipeline = file("pipe.xir", format!("// pipeline: [dce, nosuchpass]\n\n{module}"))?;
    if run_file_as(&bad_pipeline, false).is_ok() {
        return Err("an unknown pass was accepted".into());
    }
    Ok(())
}
