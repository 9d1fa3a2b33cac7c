//! Batch compilation (`xir-opt --jobs N a.xir b.xir dir/ -o OUTDIR`): the
//! inputs a command line names (directories expanded to their kernels), the
//! output path of each, and a runner that compiles them on N threads and
//! hands back each input's output text whole, in input order, so the
//! diagnostics of two inputs never interleave and a run prints the same
//! text whatever the scheduling. A progress bar (`indicatif`) is drawn
//! only when stderr is a terminal.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

/// The extensions a directory is searched for: XIR text and the front
/// end's shaders. Not `.json`: the corpus keeps interpreter inputs
/// (`NAME.inputs.json`) beside its kernels; name a JSON module explicitly.
pub const DIRECTORY_EXTENSIONS: &[&str] = &["xir", "wgsl", "comp", "glsl", "spv"];

/// Why a batch cannot start (a usage error: nothing was compiled).
#[derive(Debug, thiserror::Error)]
pub enum BatchError {
    #[error("`-` (standard input) cannot be one of several inputs")]
    Stdin,
    #[error("{}: cannot read the directory: {source}", .dir.display())]
    ReadDir { dir: PathBuf, source: std::io::Error },
    #[error("{}: no `.xir`, `.wgsl`, `.comp`, `.glsl` or `.spv` file in the directory", .0.display())]
    EmptyDir(PathBuf),
    #[error("{}: no such file or directory", .0.display())]
    Missing(PathBuf),
    #[error("several inputs need `-o OUTDIR`, the directory their outputs go to")]
    NoOutputDir,
    #[error("{}: the output directory is a file", .0.display())]
    OutputIsFile(PathBuf),
    #[error("`{}` and `{}` would both write `{}`", .first.display(), .second.display(), .output.display())]
    Collision { first: PathBuf, second: PathBuf, output: PathBuf },
    #[error("`{}` would overwrite its own input", .0.display())]
    OverwritesInput(PathBuf),
}

/// The files `args` name: files as given, directories replaced by their
/// [`DIRECTORY_EXTENSIONS`] files (not recursive, hidden files skipped),
/// sorted by name.
pub fn expand_inputs(args: &[String]) -> Result<Vec<PathBuf>, BatchError> {
    let mut out = Vec::new();
    for a in args {
        if a == "-" {
            return Err(BatchError::Stdin);
        }
        let p = PathBuf::from(a);
        if p.is_dir() {
            let read = std::fs::read_dir(&p).map_err(|source| BatchError::ReadDir { dir: p.clone(), source })?;
            let mut found: Vec<PathBuf> = read
                .flatten()
                .map(|e| e.path())
                .filter(|f| {
                    f.is_file()
                        && !f.file_name().is_some_and(|n| n.to_string_lossy().starts_with('.'))
                        && f.extension().is_some_and(|e| DIRECTORY_EXTENSIONS.iter().any(|x| e.eq_ignore_ascii_case(x)))
                })
                .collect();
            if found.is_empty() {
                return Err(BatchError::EmptyDir(p));
            }
            found.sort();
            out.extend(found);
        } else if p.exists() {
            out.push(p);
        } else {
            return Err(BatchError::Missing(p));
        }
    }
    Ok(out)
}

/// `OUTDIR/<input's file stem>.<ext>` for each input; refused when two
/// inputs would write one file or an output is an input.
pub fn output_paths(inputs: &[PathBuf], out_dir: &Path, ext: &str) -> Result<Vec<PathBuf>, BatchError> {
    if out_dir.is_file() {
        return Err(BatchError::OutputIsFile(out_dir.to_path_buf()));
    }
    let mut seen: std::collections::HashMap<PathBuf, &PathBuf> = std::collections::HashMap::new();
    let mut outs = Vec::with_capacity(inputs.len());
    for input in inputs {
        let stem = input.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
        let output = out_dir.join(format!("{stem}.{ext}"));
        if let Some(first) = seen.insert(output.clone(), input) {
            return Err(BatchError::Collision { first: first.clone(), second: input.clone(), output });
        }
        let same = |a: &Path, b: &Path| matches!((a.canonicalize(), b.canonicalize()), (Ok(x), Ok(y)) if x == y);
        if inputs.iter().any(|i| same(i, &output)) {
            return Err(BatchError::OverwritesInput(output));
        }
        outs.push(output);
    }
    Ok(outs)
}

/// What one input's compilation gave: its exit code and everything it
/// printed.
pub struct Done {
    pub code: i32,
    pub log: Vec<u8>,
}

/// Run `work(state, i)` for every `i < count` on `jobs` threads, each
/// thread with its own `init()` state (registries, pipelines and renderers
/// are not shared), and call `done(i, result)` on the calling thread in
/// index order as results arrive. With `progress`, a bar labelled by
/// `label(i)` counts finished inputs (drawn only on a terminal).
pub fn run<S, I, W, L, D>(count: usize, jobs: usize, progress: bool, init: I, work: W, label: L, mut done: D)
where
    I: Fn() -> S + Sync,
    W: Fn(&mut S, usize) -> Done + Sync,
    L: Fn(usize) -> String,
    D: FnMut(usize, Done),
{
    let next = AtomicUsize::new(0);
    let (tx, rx) = std::sync::mpsc::channel::<(usize, Done)>();
    let bar = progress.then(|| {
        let bar = indicatif::ProgressBar::with_draw_target(Some(count as u64), indicatif::ProgressDrawTarget::stderr());
        let style = indicatif::ProgressStyle::with_template("{bar:30} {pos}/{len} {elapsed} {wide_msg}")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar());
        bar.set_style(style);
        bar
    });
    std::thread::scope(|scope| {
        for _ in 0..jobs.clamp(1, count.max(1)) {
            let tx = tx.clone();
            let (next, init, work) = (&next, &init, &work);
            scope.spawn(move || {
                let mut state = init();
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= count {
                        break;
                    }
                    if tx.send((i, work(&mut state, i))).is_err() {
                        break;
                    }
                }
            });
        }
        drop(tx);
        let mut pending: std::collections::BTreeMap<usize, Done> = std::collections::BTreeMap::new();
        let mut printed = 0;
        for (i, d) in rx {
            if let Some(bar) = &bar {
                bar.inc(1);
                bar.set_message(label(i));
            }
            pending.insert(i, d);
            while let Some(d) = pending.remove(&printed) {
                match &bar {
                    Some(bar) => bar.suspend(|| done(printed, d)),
                    None => done(printed, d),
                }
                printed += 1;
            }
        }
    });
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
}
