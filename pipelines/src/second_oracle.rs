//! The second oracle of `xir-run --compare`: a SPIR-V module that is not
//! ours, run on Vulkan with the same inputs as the kernel (the foreign
//! runner, `xir_vulkan::run_foreign_on`). Either naga's module of a WGSL /
//! GLSL shader (`--oracle naga`), or, when the input is itself a SPIR-V
//! module that `xir-run` lowers through the SPIR-V front end, that module
//! as it was given.

use xir::interp::{Inputs, Outputs};

/// Why naga's module of a shader cannot serve as the second oracle.
#[derive(Debug, thiserror::Error)]
pub enum SecondOracleError {
    #[error("xir-run: --oracle naga needs a .wgsl or .comp shader; {0} is not one")]
    NotAShader(String),
    /// The shader could not be read (rendered diagnostics).
    #[error("{0}")]
    Read(String),
    #[error(transparent)]
    Naga(#[from] xir_frontend::oracle::OracleError),
}

/// A foreign module to compare a kernel's outputs with.
pub struct SecondOracle {
    pub words: Vec<u32>,
    /// What it is, for messages: "naga's module", "the module itself".
    pub what: &'static str,
    /// It declares neither `NoContraction` nor float controls, so a device
    /// may fuse, round either way and flush subnormals in it: where the
    /// exact precision model does not hold, the `--fast-math` one may.
    pub loose_floats: bool,
}

impl SecondOracle {
    /// naga's module of the shader `input` (the same overrides); refused
    /// for anything but a `.wgsl` / `.comp` text.
    pub fn naga(input: &str, overrides: &xir_frontend::Overrides) -> Result<SecondOracle, SecondOracleError> {
        let display = crate::io::display_name(input);
        let language = xir_frontend::Language::from_path(input)
            .ok_or_else(|| SecondOracleError::NotAShader(display.to_string()))?;
        let text = crate::io::read_text(input, "input").map_err(|d| SecondOracleError::Read(xir::diag::render(&d)))?;
        let words = xir_frontend::oracle::naga_spirv_with(&text, language, display, overrides)?;
        Ok(SecondOracle { loose_floats: !declares_exact_floats(&words), words, what: "naga's module" })
    }

    /// The SPIR-V input module itself.
    pub fn module_itself(words: Vec<u32>) -> SecondOracle {
        SecondOracle { loose_floats: !declares_exact_floats(&words), words, what: "the module itself" }
    }

    /// Run it on a device of its own, entry point `entry`, `threads` threads.
    pub fn run(&self, entry: &str, inputs: &Inputs, threads: [u32; 3]) -> Result<Outputs, xir_vulkan::RunError> {
        let device = xir_vulkan::Device::new()?;
        xir_vulkan::run_foreign_on(&device, &self.words, Some(entry), inputs, Some(threads)).map(|(o, _)| o)
    }
}

/// Whether `words` ask for exact float semantics anywhere: a
/// `NoContraction` decoration or a float-controls execution mode
/// (`DenormPreserve`, `DenormFlushToZero`, `SignedZeroInfNanPreserve`,
/// `RoundingModeRTE`, `RoundingModeRTZ`).
fn declares_exact_floats(words: &[u32]) -> bool {
    const OP_EXECUTION_MODE: u32 = 16;
    const OP_DECORATE: u32 = 71;
    const NO_CONTRACTION: u32 = 42;
    const FLOAT_CONTROLS: std::ops::RangeInclusive<u32> = 4459..=4463;
    let mut at = 5;
    while at < words.len() {
        let (count, opcode) = ((words[at] >> 16) as usize, words[at] & 0xffff);
        let operand = words.get(at + 2).copied();
        match (opcode, operand) {
            (OP_DECORATE, Some(NO_CONTRACTION)) => return true,
            (OP_EXECUTION_MODE, Some(mode)) if FLOAT_CONTROLS.contains(&mode) => return true,
            _ => {}
        }
        at += count.max(1);
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    /// naga's modules ask for nothing; ours do (`--fast-math` aside).
    #[test]
    fn exact_floats_are_read_from_the_module() {
        let wgsl = "@group(0) @binding(0) var<storage, read_write> x: array<f32>;\n\
                    @compute @workgroup_size(1) fn main() { x[0] = x[1] * x[2] + x[3]; }\n";
        let naga = xir_frontend::oracle::naga_spirv(wgsl, xir_frontend::Language::Wgsl, "t.wgsl").expect("naga");
        assert!(!declares_exact_floats(&naga));
        let src = xir_frontend::Source { path: "t.wgsl", text: wgsl, language: xir_frontend::Language::Wgsl };
        let m = xir_frontend::compile(&src, &xir_frontend::Overrides::new()).expect("compiles");
        let ours = |fast_math| crate::backend::legalize_and_compile(&m, None, 0, fast_math).expect("compiles").2.words;
        assert!(declares_exact_floats(&ours(false)));
        assert!(!declares_exact_floats(&ours(true)));
    }
}
