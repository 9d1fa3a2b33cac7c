//! Usage checks the drivers share: a flag that would do nothing, or names
//! nothing, is refused by name instead of ignored in silence (a misspelt
//! `--print-after` printing nothing reads as "the pass never ran";
//! `--override` on an XIR module, as "the value made no difference").

use xir::pass::PassRegistry;

/// Why a pass name given to a flag (`--print-before NAME`, ...; `flags`
/// pairs each flag with its names) is no registered pass, with the
/// nearest registered name.
pub fn unknown_pass(reg: &PassRegistry, flags: &[(&str, &[String])]) -> Option<String> {
    let (flag, name) =
        flags.iter().flat_map(|(f, names)| names.iter().map(move |n| (*f, n))).find(|(_, n)| reg.get(n).is_none())?;
    let hint = match xir::pipeline::suggest(name, reg.names()) {
        Some(s) => format!("did you mean `{s}`?"),
        None => "`xir-opt --list-passes` lists them".to_string(),
    };
    Some(format!("{flag} {name}: no pass is registered under that name; {hint}"))
}

/// `--override` where no input is a shader; `which` says what the inputs
/// are instead ("k.xir is none").
pub fn overrides_without_shader(which: &str) -> String {
    format!("--override sets `override` constants of a WGSL or GLSL shader or a SPIR-V module's specialization constants; {which}")
}

/// A compile flag (`--opt-level`, `--fast-math`, ...) given to `xir-opt`
/// where no pipeline runs and the `--emit` form stops short of the backend.
pub fn compiles_nothing(flag: &str) -> String {
    format!("{flag} has no effect: no pipeline runs (name one with --pipeline) and this --emit form does not reach the backend")
}

/// Binary output (`--emit spirv | artifact`, `binary` naming the form)
/// bound for a terminal (`out` none or `-`, standard output a terminal) is
/// refused before any work, as `spirv-as` and `naga` do: it would only
/// garble the screen.
pub fn binary_to_terminal(binary: Option<&str>, out: Option<&str>) -> Option<String> {
    let what = binary?;
    let to_stdout = out.is_none_or(|o| o == "-");
    (to_stdout && std::io::IsTerminal::is_terminal(&std::io::stdout())).then(|| {
        format!(
            "refusing to write binary `--emit {what}` output to a terminal\n  \
             = help: give `-o FILE`, redirect standard output, or use `--emit spirv-asm` for text"
        )
    })
}
