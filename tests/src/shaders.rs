//! Shader kernels (WGSL / GLSL) for the end-to-end tests: the front end's
//! file tests (`frontend/tests/kernels`, inputs in a `// inputs:` line) and
//! the shader corpus (`tests/wgsl`, `tests/glsl`), whose inputs are the
//! mirrored XIR kernel's `tests/corpus/NAME.inputs.json` unless the shader
//! has its own `NAME.inputs.json` beside it.

use std::path::{Path, PathBuf};

use xir::Module;
use xir_frontend::{Language, Overrides, Source};

/// One shader with the inputs to run it.
#[derive(Clone, Debug)]
pub struct Shader {
    /// File name, for messages.
    pub name: String,
    pub path: PathBuf,
    pub text: String,
    pub inputs: xir::interp::Inputs,
    /// The XIR corpus kernel it mirrors, when it is a corpus twin.
    pub twin: Option<String>,
}

/// The repository root.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("the workspace root").to_path_buf()
}

/// Every shader of the front end's tests and of the shader corpus.
pub fn shaders() -> Vec<Shader> {
    let mut out = Vec::new();
    let dirs = [root().join("frontend/tests/kernels"), root().join("tests/wgsl"), root().join("tests/glsl")];
    for dir in dirs {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        let mut paths: Vec<PathBuf> = entries.filter_map(|e| Some(e.ok()?.path())).collect();
        paths.sort();
        for path in paths {
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default().to_string();
            if Language::from_path(&name).is_none() {
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or_default().to_string();
            let in_corpus = !dir.ends_with("kernels");
            let json = if let Some(line) = text.lines().find_map(|l| l.strip_prefix("// inputs: ")) {
                line.to_string()
            } else {
                let own = path.with_file_name(format!("{stem}.inputs.json"));
                let twin = crate::corpus_dir().join(format!("{stem}.inputs.json"));
                let file = if own.exists() { own } else { twin };
                std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: no inputs ({e})", file.display()))
            };
            let inputs = serde_json::from_str(&json).unwrap_or_else(|e| panic!("{name}: inputs: {e}"));
            let twin = (in_corpus && crate::corpus_dir().join(format!("{stem}.xir")).exists()).then_some(stem);
            out.push(Shader { name, path, text, inputs, twin });
        }
    }
    out
}

/// The shader through the front end (structured XIR), or a panic naming
/// the diagnostic.
pub fn compile(s: &Shader) -> Module {
    let path = s.path.display().to_string();
    let language = Language::from_path(&path).expect("a shader extension");
    xir_frontend::compile(&Source { path: &path, text: &s.text, language }, &Overrides::new())
        .unwrap_or_else(|d| panic!("{d}"))
}

/// The shader's one kernel.
pub fn kernel(m: &Module) -> xir::FuncId {
    m.func_ids().find(|&f| m.func(f).is_kernel()).expect("a shader has a compute entry point")
}
