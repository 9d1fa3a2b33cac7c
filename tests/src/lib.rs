//! Shared helpers for the integration tests: the kernel corpus
//! (`tests/corpus/NAME.xir` with `NAME.inputs.json`), parsing and printing
//! with readable failures, running a corpus kernel in the reference
//! interpreter, and reading its output buffers back as typed values.
//!
//! The corpus is the spine of the end-to-end tests: every later stage
//! (passes, SPIR-V emission, Vulkan runs) takes [`corpus`] as its input set,
//! compares against [`run`], and holds its own results to the hand-computed
//! values of [`expect::check`].

use std::path::{Path, PathBuf};

pub mod device;
pub mod expect;
pub mod shaders;
pub mod source_tree;

use xir::Module;

/// One kernel of the corpus: its XIR text and its interpreter inputs.
#[derive(Clone, Debug)]
pub struct CorpusKernel {
    /// File stem: `saxpy` for `corpus/saxpy.xir`.
    pub name: String,
    /// Path of the `.xir` file.
    pub path: PathBuf,
    /// Path of the `.inputs.json` file.
    pub inputs_path: PathBuf,
    pub text: String,
    pub inputs_json: String,
}

/// The folder holding the corpus (`XIR_CORPUS_DIR` overrides it, for test
/// binaries run on another machine, such as the GPU runs).
pub fn corpus_dir() -> PathBuf {
    match std::env::var_os("XIR_CORPUS_DIR") {
        Some(d) => PathBuf::from(d),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus"),
    }
}

/// The folder of regression fixtures: kernels that once miscompiled on some
/// device, each with its inputs (`XIR_REGRESSIONS_DIR` overrides it).
pub fn regressions_dir() -> PathBuf {
    match std::env::var_os("XIR_REGRESSIONS_DIR") {
        Some(d) => PathBuf::from(d),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("regressions"),
    }
}

/// Every kernel of the corpus, sorted by name. Panics when a `.xir` file has
/// no `.inputs.json` sibling (or the other way round): a corpus kernel
/// without inputs cannot be compared across runs.
pub fn corpus() -> Vec<CorpusKernel> {
    kernels_in(&corpus_dir())
}

/// Every kernel of `dir` (a `.xir` with its `.inputs.json`), sorted by name.
pub fn kernels_in(dir: &Path) -> Vec<CorpusKernel> {
    let mut names = Vec::new();
    let entries = std::fs::read_dir(dir).unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()));
    for entry in entries {
        let path = entry.expect("corpus directory entry").path();
        let file = path.file_name().and_then(|f| f.to_str()).unwrap_or_default().to_string();
        if let Some(stem) = file.strip_suffix(".xir") {
            names.push(stem.to_string());
        } else if let Some(stem) = file.strip_suffix(".inputs.json") {
            assert!(dir.join(format!("{stem}.xir")).exists(), "{} has no kernel {stem}.xir", path.display());
        }
    }
    names.sort();
    names.iter().map(|n| kernel_in(dir, n)).collect()
}

/// One corpus kernel by name.
pub fn kernel(name: &str) -> CorpusKernel {
    kernel_in(&corpus_dir(), name)
}

/// One kernel of `dir` by name.
pub fn kernel_in(dir: &Path, name: &str) -> CorpusKernel {
    let path = dir.join(format!("{name}.xir"));
    let inputs_path = dir.join(format!("{name}.inputs.json"));
    let read = |p: &Path| std::fs::read_to_string(p).unwrap_or_else(|e| panic!("cannot read {}: {e}", p.display()));
    CorpusKernel { name: name.to_string(), text: read(&path), inputs_json: read(&inputs_path), path, inputs_path }
}

/// Parse a corpus kernel; panics with the rendered diagnostics on failure.
pub fn parse(k: &CorpusKernel) -> Module {
    parse_text(&k.text, &k.path.display().to_string())
}

/// Parse XIR text; panics with the rendered diagnostics (named after `file`)
/// on failure.
pub fn parse_text(text: &str, file: &str) -> Module {
    xir::text::parse_module(text, file)
        .unwrap_or_else(|diags| panic!("{file} does not parse:\n{}", xir::diag::render(&diags)))
}

/// The module in the text format.
pub fn print(m: &Module) -> String {
    xir::text::print_module(m)
}

/// Float equality for exact-result tests: equal bits, or both NaN (NaN
/// payloads and signs are not compared).
pub fn same_f32(a: f32, b: f32) -> bool {
    a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
}

/// [`same_f32`] for `f64`.
pub fn same_f64(a: f64, b: f64) -> bool {
    a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
}

/// The kernel a corpus file defines: the function named like the file, else
/// the module's only kernel.
pub fn kernel_id(m: &Module, k: &CorpusKernel) -> xir::FuncId {
    if let Some(f) = m.find_function(&k.name).filter(|&f| m.func(f).is_kernel()) {
        return f;
    }
    let kernels: Vec<_> = m.func_ids().filter(|&f| m.func(f).is_kernel()).collect();
    match kernels[..] {
        [only] => only,
        _ => panic!("{}: expected a kernel named @{} or exactly one kernel", k.path.display(), k.name),
    }
}

/// The interpreter inputs of a corpus kernel.
pub fn inputs(k: &CorpusKernel) -> xir::interp::Inputs {
    xir::interp::Inputs::from_json(&k.inputs_json)
        .unwrap_or_else(|e| panic!("{}: bad inputs: {e}", k.inputs_path.display()))
}

/// Run a corpus kernel in the reference interpreter with its inputs; panics
/// with the located interpreter error on failure.
pub fn run(k: &CorpusKernel) -> Outputs {
    let m = parse(k);
    run_module(&m, k)
}

/// Run the corpus kernel's entry point of `m` (the corpus module itself, or
/// one transformed from it) with the kernel's inputs.
pub fn run_module(m: &Module, k: &CorpusKernel) -> Outputs {
    let f = kernel_id(m, k);
    let raw = xir::interp::run_kernel(m, f, &inputs(k)).unwrap_or_else(|e| {
        panic!("{} fails in the interpreter:\n{}", k.name, e.with_file(k.path.display().to_string()))
    });
    Outputs { name: k.name.clone(), raw }
}

/// The output buffers of a run, readable as typed values. Accessors panic
/// with the kernel and buffer name when a buffer is missing or an element
/// does not have the asked-for type.
#[derive(Clone, Debug)]
pub struct Outputs {
    pub name: String,
    pub raw: xir::interp::Outputs,
}

impl Outputs {
    /// The elements of buffer `buf` in the interpreter's JSON encoding
    /// (bytes for a `byte_buffer`).
    pub fn json(&self, buf: &str) -> Vec<serde_json::Value> {
        let j = self.raw.buffers.get(buf).unwrap_or_else(|| panic!("{}: no output buffer `{buf}`", self.name));
        match j {
            serde_json::Value::Array(a) => a.clone(),
            serde_json::Value::Object(o) => match o.get("bytes") {
                Some(serde_json::Value::Array(a)) => a.clone(),
                _ => panic!("{}: buffer `{buf}` is {j}", self.name),
            },
            other => panic!("{}: buffer `{buf}` is {other}", self.name),
        }
    }

    fn ints(&self, buf: &str) -> Vec<i128> {
        self.json(buf)
            .iter()
            .enumerate()
            .map(|(k, e)| json_int(e).unwrap_or_else(|| panic!("{}: `{buf}`[{k}] = {e} is not an integer", self.name)))
            .collect()
    }

    fn floats(&self, buf: &str, bits: u32) -> Vec<u64> {
        self.json(buf)
            .iter()
            .enumerate()
            .map(|(k, e)| {
                json_float_bits(e, bits).unwrap_or_else(|| panic!("{}: `{buf}`[{k}] = {e} is not a float", self.name))
            })
            .collect()
    }

    fn narrow<T: TryFrom<i128>>(&self, buf: &str, ty: &str) -> Vec<T> {
        self.ints(buf)
            .into_iter()
            .enumerate()
            .map(|(k, v)| T::try_from(v).unwrap_or_else(|_| panic!("{}: `{buf}`[{k}] = {v} is not a {ty}", self.name)))
            .collect()
    }

    pub fn u8s(&self, buf: &str) -> Vec<u8> {
        self.narrow(buf, "u8")
    }
    pub fn i16s(&self, buf: &str) -> Vec<i16> {
        self.narrow(buf, "i16")
    }
    pub fn u32s(&self, buf: &str) -> Vec<u32> {
        self.narrow(buf, "u32")
    }
    pub fn i32s(&self, buf: &str) -> Vec<i32> {
        self.narrow(buf, "i32")
    }
    pub fn u64s(&self, buf: &str) -> Vec<u64> {
        self.narrow(buf, "u64")
    }
    pub fn i64s(&self, buf: &str) -> Vec<i64> {
        self.narrow(buf, "i64")
    }
    /// Bytes of a `byte_buffer` (or of a `buffer<u8>`).
    pub fn bytes(&self, buf: &str) -> Vec<u8> {
        self.u8s(buf)
    }
    /// Bit patterns of a `buffer<f16>`.
    pub fn f16_bits(&self, buf: &str) -> Vec<u16> {
        self.floats(buf, 16).into_iter().map(|b| b as u16).collect()
    }
    pub fn f32s(&self, buf: &str) -> Vec<f32> {
        self.floats(buf, 32).into_iter().map(|b| f32::from_bits(b as u32)).collect()
    }
    pub fn f64s(&self, buf: &str) -> Vec<f64> {
        self.floats(buf, 64).into_iter().map(f64::from_bits).collect()
    }
}

/// An integer element: a JSON number or a decimal / `0x` string.
fn json_int(e: &serde_json::Value) -> Option<i128> {
    match e {
        serde_json::Value::Number(n) => n.as_i64().map(i128::from).or_else(|| n.as_u64().map(i128::from)),
        serde_json::Value::String(s) => match s.strip_prefix("0x") {
            Some(hex) => u64::from_str_radix(hex, 16).ok().map(i128::from),
            None => s.parse().ok(),
        },
        _ => None,
    }
}

/// The bits of a float element of width `bits`: a JSON number (exact for
/// every value of that width) or one of `"nan"`, `"-nan"`, `"inf"`,
/// `"-inf"`, `"-0.0"`, or a `0x` bit pattern.
fn json_float_bits(e: &serde_json::Value, bits: u32) -> Option<u64> {
    let from_f64 = |v: f64| match bits {
        16 => half::f16::from_f64(v).to_bits() as u64,
        32 => (v as f32).to_bits() as u64,
        _ => v.to_bits(),
    };
    match e {
        serde_json::Value::Number(n) => n.as_f64().map(from_f64),
        serde_json::Value::String(s) => match s.as_str() {
            "nan" => Some(from_f64(f64::NAN)),
            "-nan" => Some(from_f64(-f64::NAN)),
            "inf" | "+inf" => Some(from_f64(f64::INFINITY)),
            "-inf" => Some(from_f64(f64::NEG_INFINITY)),
            s => match s.strip_prefix("0x") {
                Some(hex) => u64::from_str_radix(hex, 16).ok(),
                None => s.parse::<f64>().ok().map(from_f64),
            },
        },
        _ => None,
    }
}
