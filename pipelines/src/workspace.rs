//! The library API for tools (editors, language servers, build tools): a
//! [`Workspace`] holds file texts by path — XIR modules, pipeline RON files,
//! WGSL / GLSL compute shaders — and answers, incrementally, what a tool
//! asks: the diagnostics of a file, the XIR of a function after any step of
//! a pipeline, a kernel's SPIR-V words, disassembly and shader artifact.
//!
//! It lives in `xir-pipelines` because it needs the pass registry with the
//! backend's hook bound and the backend itself (`xir-spirv`); `xir` holds the
//! incremental database underneath ([`xir::db::Session`]), one session per
//! file and compilation (pipeline, step limit), each recompiling only what
//! an edit can affect. Errors are typed ([`WorkspaceError`]), never strings.
//!
//! ```
//! use xir_pipelines::workspace::Workspace;
//!
//! let mut ws = Workspace::new();
//! ws.set_file("k.xir", "kernel @k(%out: buffer<u32>) block_size(1, 1, 1) {\n^entry:\n  buffer.write %out, u32 0, u32 7\n  return\n}\n");
//! assert!(ws.diagnostics("k.xir").unwrap().is_empty());
//! let words = ws.spirv("k.xir", "k", "spirv").unwrap();
//! assert_eq!(words[0], 0x0723_0203); // the SPIR-V magic number
//! ```
#![deny(missing_docs)]

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use xir::db::{Emitted, FunctionCompiler, KernelEmitter, Session};
use xir::diag::{Diagnostic, Rule};
use xir::pass::PassRegistry;
use xir::pipeline::{LoadFailure, PassManager, Pipeline, RunOptions};

/// Compilation options every query of a workspace uses.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Options {
    /// Optimization level 0..=3 (pipeline `OptGroup`s and the backend's preset).
    pub opt_level: u8,
    /// Allow value-changing float rewrites.
    pub fast_math: bool,
    /// `-g`: debug info in the SPIR-V (`xir_spirv::CompileOptions::debug_info`).
    pub debug_info: bool,
}

/// Why a workspace query has no answer.
#[derive(Clone, Debug, thiserror::Error)]
pub enum WorkspaceError {
    /// No file of that path was set.
    #[error("no file `{0}` in the workspace")]
    NoFile(String),
    /// The file is of a kind the query does not apply to (a pipeline file
    /// asked for a function, ...).
    #[error("`{path}` is not {expected}")]
    WrongKind {
        /// The file.
        path: String,
        /// What the query needs (`an XIR module or a shader`).
        expected: &'static str,
    },
    /// The module has no function of that name.
    #[error("no function `@{function}` in `{path}`")]
    NoFunction {
        /// The file.
        path: String,
        /// The function asked for.
        function: String,
    },
    /// The function is not a kernel (only kernels have target code).
    #[error("`@{0}` is not a kernel")]
    NotAKernel(String),
    /// The pipeline did not load (its located diagnostics).
    #[error("the pipeline does not load: {}", xir::diag::render_short(.0))]
    Pipeline(Vec<Diagnostic>),
    /// The input, the pipeline run or the backend failed: located diagnostics
    /// (in the file's coordinates; empty when the failure is a function's
    /// own errors, which [`Workspace::diagnostics`] reports).
    #[error("compilation failed: {}", xir::diag::render_short(.0))]
    Compile(Vec<Diagnostic>),
}

/// One file's text and what it is.
enum File {
    /// XIR text (or a shader's, as the front end lowered it).
    Module {
        text: String,
        /// A shader's front-end failure (the module text is then empty).
        front_end: Vec<Diagnostic>,
        /// Sessions by compilation key: `""` checks only, else
        /// `pipeline#steps`.
        sessions: HashMap<String, Session>,
    },
    Pipeline {
        text: String,
    },
}

/// Files by path and the compilations asked of them.
pub struct Workspace {
    registry: PassRegistry,
    options: Options,
    files: HashMap<String, File>,
    /// Loaded pipelines by name (dropped when a pipeline file changes).
    pipelines: HashMap<String, Arc<Pipeline>>,
}

impl Default for Workspace {
    fn default() -> Self {
        Workspace::new()
    }
}

/// What a query compiles with: a pipeline and how far into it.
fn key(pipeline: &str, steps: Option<usize>) -> String {
    match steps {
        Some(n) => format!("{pipeline}#{n}"),
        None => pipeline.to_string(),
    }
}

impl Workspace {
    /// An empty workspace with every registered pass, at `--opt-level 0`.
    pub fn new() -> Self {
        Workspace::with_options(Options::default())
    }

    /// An empty workspace compiling with `options`.
    pub fn with_options(options: Options) -> Self {
        Workspace { registry: crate::registry(), options, files: HashMap::new(), pipelines: HashMap::new() }
    }

    /// Set (or replace) the text of the file `path`. Its kind follows the
    /// extension: `.ron` is a pipeline, `.wgsl` / `.comp` / `.glsl` a
    /// shader for the front end, anything else XIR text. Only what the edit
    /// can affect is recompiled when next asked.
    pub fn set_file(&mut self, path: &str, text: &str) {
        let ext = Path::new(path).extension().and_then(|e| e.to_str()).unwrap_or("");
        if ext == "ron" {
            self.files.insert(path.to_string(), File::Pipeline { text: text.to_string() });
            // Any loaded pipeline may include it: load again when asked.
            self.pipelines.clear();
            for f in self.files.values_mut() {
                if let File::Module { sessions, .. } = f {
                    sessions.retain(|k, _| k.is_empty());
                }
            }
            return;
        }
        let (module_text, front_end) = match crate::io::detect(path, text) {
            crate::io::InputFormat::Shader(language) => {
                let src = xir_frontend::Source { path, text, language };
                match xir_frontend::compile(&src, &xir_frontend::Overrides::default()) {
                    Ok(m) => (xir::text::print_module(&m), Vec::new()),
                    Err(d) => (String::new(), vec![*d]),
                }
            }
            crate::io::InputFormat::Json => match xir::text::json::from_json(text, path) {
                Ok(m) => (xir::text::print_module(&m), Vec::new()),
                Err(d) => (String::new(), d),
            },
            crate::io::InputFormat::Text => (text.to_string(), Vec::new()),
        };
        match self.files.get_mut(path) {
            Some(File::Module { text, front_end: fe, .. }) => {
                *text = module_text;
                *fe = front_end;
            }
            _ => {
                let file = File::Module { text: module_text, front_end, sessions: HashMap::new() };
                self.files.insert(path.to_string(), file);
            }
        }
    }

    /// Forget the file `path`.
    pub fn remove_file(&mut self, path: &str) {
        if matches!(self.files.remove(path), Some(File::Pipeline { .. })) {
            self.set_file_dropped_pipeline();
        }
    }

    fn set_file_dropped_pipeline(&mut self) {
        self.pipelines.clear();
        for f in self.files.values_mut() {
            if let File::Module { sessions, .. } = f {
                sessions.retain(|k, _| k.is_empty());
            }
        }
    }

    /// The pass registry the workspace's pipelines load against.
    pub fn registry(&self) -> &PassRegistry {
        &self.registry
    }

    /// The paths of every file, sorted.
    pub fn paths(&self) -> Vec<&str> {
        let mut v: Vec<&str> = self.files.keys().map(String::as_str).collect();
        v.sort_unstable();
        v
    }

    /// Every diagnostic of the file: for a module its parse and verifier
    /// findings (a shader's front-end error), for a pipeline its load
    /// errors and lint warnings.
    pub fn diagnostics(&mut self, path: &str) -> Result<Vec<Diagnostic>, WorkspaceError> {
        match self.files.get(path) {
            None => Err(WorkspaceError::NoFile(path.to_string())),
            Some(File::Pipeline { text }) => {
                let loader = crate::loader(&self.registry, None);
                let display: Arc<str> = path.into();
                Ok(match loader.load_text(display, None, text) {
                    Ok(p) => p.warnings.iter().map(|w| w.to_diagnostic()).collect(),
                    Err(f) => f.diagnostics.iter().map(|d| d.to_diagnostic()).collect(),
                })
            }
            Some(File::Module { front_end, .. }) if !front_end.is_empty() => Ok(front_end.clone()),
            Some(File::Module { .. }) => Ok(self.session(path, None)?.diagnostics()),
        }
    }

    /// The names of the module's functions, in file order.
    pub fn functions(&mut self, path: &str) -> Result<Vec<String>, WorkspaceError> {
        Ok(self.session(path, None)?.function_names().map(String::from).collect())
    }

    /// The names of the module's kernels, in file order.
    pub fn kernels(&mut self, path: &str) -> Result<Vec<String>, WorkspaceError> {
        let s = self.session(path, None)?;
        let names: Vec<String> = s.function_names().map(String::from).collect();
        Ok(names.into_iter().filter(|n| s.is_kernel(n)).collect())
    }

    /// The pipeline `name`: a pipeline file of the workspace by its path, or
    /// a shipped pipeline by name.
    pub fn pipeline(&mut self, name: &str) -> Result<Arc<Pipeline>, WorkspaceError> {
        if let Some(p) = self.pipelines.get(name) {
            return Ok(p.clone());
        }
        let loader = crate::loader(&self.registry, None);
        let loaded = match self.files.get(name) {
            Some(File::Pipeline { text }) => loader.load_text(name.into(), None, text),
            _ => loader.load(name),
        };
        let p = Arc::new(loaded.map_err(|f: LoadFailure| {
            WorkspaceError::Pipeline(f.diagnostics.iter().map(|d| d.to_diagnostic()).collect())
        })?);
        self.pipelines.insert(name.to_string(), p.clone());
        Ok(p)
    }

    /// The session of `path` for a compilation (`None`: checks only),
    /// brought up to the file's text.
    fn session(&mut self, path: &str, compile: Option<(&str, Option<usize>)>) -> Result<&mut Session, WorkspaceError> {
        let k = compile.map(|(p, s)| key(p, s)).unwrap_or_default();
        let needs_new = match self.files.get(path) {
            None => return Err(WorkspaceError::NoFile(path.to_string())),
            Some(File::Pipeline { .. }) => {
                return Err(WorkspaceError::WrongKind { path: path.to_string(), expected: "an XIR module or a shader" })
            }
            Some(File::Module { sessions, .. }) => !sessions.contains_key(&k),
        };
        if needs_new {
            let session = match compile {
                None => Session::new(path, "", None),
                Some((p, steps)) => {
                    let pipeline = self.pipeline(p)?;
                    let (compiler, emitter) = compilers(pipeline, self.options, steps);
                    Session::new(path, &k, Some(compiler)).with_emitter(emitter)
                }
            };
            if let Some(File::Module { sessions, .. }) = self.files.get_mut(path) {
                sessions.insert(k.clone(), session);
            }
        }
        let Some(File::Module { text, sessions, .. }) = self.files.get_mut(path) else {
            return Err(WorkspaceError::NoFile(path.to_string()));
        };
        let s = sessions.get_mut(&k).ok_or_else(|| WorkspaceError::NoFile(path.to_string()))?;
        s.update_file(path, text);
        Ok(s)
    }

    /// The session compiling `path` with `pipeline` (first `steps` pass
    /// executions only, when given): for tools that want the incremental
    /// database's finer queries (what re-ran, analyses).
    pub fn session_for(
        &mut self,
        path: &str,
        pipeline: &str,
        steps: Option<usize>,
    ) -> Result<&mut Session, WorkspaceError> {
        self.session(path, Some((pipeline, steps)))
    }

    /// The XIR of `function` after the first `steps` pass executions of
    /// `pipeline` (`None`: all of it; `Some(0)`: as parsed), compiled with
    /// the functions it calls. Empty when the pipeline removed the function.
    pub fn function_after(
        &mut self,
        path: &str,
        function: &str,
        pipeline: &str,
        steps: Option<usize>,
    ) -> Result<String, WorkspaceError> {
        self.ensure_clean(path)?;
        let s = self.session(path, Some((pipeline, steps)))?;
        let r = s.compiled(function).ok_or_else(|| no_function(path, function))?;
        r.map_err(|e| WorkspaceError::Compile(s.place_error(&e)))
    }

    /// The SPIR-V words of `kernel` compiled by `pipeline` (which must end
    /// in `xir.spirv`, as `spirv` and `opt-spirv` do).
    pub fn spirv(&mut self, path: &str, kernel: &str, pipeline: &str) -> Result<Vec<u32>, WorkspaceError> {
        Ok(self.emitted(path, kernel, pipeline)?.words.clone())
    }

    /// The disassembly of [`Workspace::spirv`].
    pub fn spirv_disassembly(&mut self, path: &str, kernel: &str, pipeline: &str) -> Result<String, WorkspaceError> {
        Ok(xir_spirv::disassemble(&self.emitted(path, kernel, pipeline)?.words))
    }

    /// The shader artifact of `kernel` (SPIR-V plus its ABI; docs/artifact.md).
    pub fn artifact(&mut self, path: &str, kernel: &str, pipeline: &str) -> Result<Vec<u8>, WorkspaceError> {
        Ok(self.emitted(path, kernel, pipeline)?.artifact.clone())
    }

    /// A kernel's target code, memoized on its compiled module.
    pub fn emitted(&mut self, path: &str, kernel: &str, pipeline: &str) -> Result<Arc<Emitted>, WorkspaceError> {
        self.ensure_clean(path)?;
        let s = self.session(path, Some((pipeline, None)))?;
        if s.function(kernel).is_none() {
            return Err(no_function(path, kernel));
        }
        if !s.is_kernel(kernel) {
            return Err(WorkspaceError::NotAKernel(kernel.to_string()));
        }
        let r = s.emitted(kernel).ok_or_else(|| no_function(path, kernel))?;
        r.map_err(|e| WorkspaceError::Compile(s.place_error(&e)))
    }

    /// A file with errors compiles nothing: its diagnostics are the answer.
    fn ensure_clean(&mut self, path: &str) -> Result<(), WorkspaceError> {
        let errors: Vec<Diagnostic> = self.diagnostics(path)?.into_iter().filter(Diagnostic::is_error).collect();
        if errors.is_empty() {
            Ok(())
        } else {
            Err(WorkspaceError::Compile(errors))
        }
    }
}

fn no_function(path: &str, function: &str) -> WorkspaceError {
    WorkspaceError::NoFunction { path: path.to_string(), function: function.to_string() }
}

/// The database's compiler (the pipeline, stopped after `steps` pass
/// executions when given) and emitter (the SPIR-V backend) for `options`.
pub fn compilers(pipeline: Arc<Pipeline>, options: Options, steps: Option<usize>) -> (FunctionCompiler, KernelEmitter) {
    let run = RunOptions {
        opt_level: options.opt_level,
        fast_math: options.fast_math,
        bisect_limit: steps,
        ..RunOptions::default()
    };
    let compiler: FunctionCompiler = Arc::new(move |m: &mut xir::Module| {
        PassManager::new(&pipeline, run.clone())
            .run(m, &mut std::io::sink())
            .map(|_| ())
            .map_err(|e| e.to_diagnostics())
    });
    let emitter: KernelEmitter = Arc::new(move |m: &xir::Module, k: xir::FuncId| {
        let opts = xir_spirv::CompileOptions {
            opt_level: options.opt_level,
            fast_math: options.fast_math,
            device_features: None,
            debug_info: options.debug_info,
        };
        let out = xir_spirv::compile(m, k, &opts)?;
        let artifact = xir_spirv::artifact::ShaderArtifact::from_compiled(m, k, &out).encode().map_err(|e| {
            vec![Diagnostic::error(Rule::SpirvEmit, format!("cannot write the shader artifact: {e}"))
                .in_function(&m.func(k).name)]
        })?;
        Ok(Emitted { words: out.words, artifact })
    });
    (compiler, emitter)
}
