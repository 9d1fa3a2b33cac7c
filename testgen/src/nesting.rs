//! Deterministic deeply nested kernels, for the tests that every walk (parse,
//! verify, restructure, emit, interpret) is iterative or bounded: `depth`
//! nested two-way branches on one condition, the innermost level writing
//! `out[t] = 7` for the threads `t < 3` of an 8-thread block.

/// How each level branches.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Form {
    /// Structured `if` with its merge block (`xir.structured`).
    Structured,
    /// A raw `cond_br` diamond (`xir.raw`).
    Raw,
}

/// The kernel `@k(%out: buffer<u32>)` with `depth` (>= 1) nested levels.
pub fn nested_ifs(depth: usize, form: Form) -> String {
    let branch = |to: usize| match form {
        Form::Structured => format!("if %c, true ^t{to}, false ^m{to}, merge ^m{to}\n"),
        Form::Raw => format!("cond_br %c, true ^t{to}, false ^m{to}\n"),
    };
    let mut s = String::from(
        "kernel @k(%out: buffer<u32>) block_size(8, 1, 1) {\n^entry:\n  %t = extract $dispatch_id, u32 0 : u32\n  \
         %c = lt %t, u32 3 : bool\n  ",
    );
    s += &branch(0);
    for i in 0..depth {
        if i + 1 < depth {
            s += &format!("^t{i}:\n  {}", branch(i + 1));
        } else {
            s += &format!("^t{i}:\n  buffer.write %out, %t, u32 7\n  br target ^m{i}\n");
        }
    }
    for i in (0..depth).rev() {
        if i > 0 {
            s += &format!("^m{i}:\n  br target ^m{}\n", i - 1);
        } else {
            s += "^m0:\n  return\n";
        }
    }
    s + "}\n"
}
