//! Kernels for the autodiff tests: scalar f64 inputs marked in one scope,
//! a body computing `%y`, the gradients written out; and their inputs.

/// The numbers of an output buffer (negative zero, infinities and NaNs are
/// written as strings: "-0.0").
macro_rules! numbers {
    ($j:expr) => {
        $j.as_array()
            .expect("array")
            .iter()
            .map(|x| xir::interp::json_float(x).unwrap_or_else(|| panic!("not a number: {x}")))
            .collect::<Vec<f64>>()
    };
}

/// The kernel: inputs marked in one scope (or none), the body, `%y` to
/// `%val` and the gradients to `%out`.
pub fn kernel(n: usize, body: &str, with_scope: bool) -> String {
    let params: Vec<String> = (0..n).map(|k| format!("%x{k}: f64")).collect();
    let mut s = format!(
        "kernel @k({}, %out: buffer<f64>, %val: buffer<f64>) block_size(1, 1, 1) {{\n^entry:\n",
        params.join(", ")
    );
    for k in 0..n {
        s += &format!("  %v{k} = alloca : f64\n  store %v{k}, %x{k}\n");
    }
    s += if with_scope { "  autodiff.scope body ^body, merge ^done\n^body:\n" } else { "  br target ^body\n^body:\n" };
    if with_scope {
        for k in 0..n {
            s += &format!("  autodiff.requires_gradient %v{k}\n");
        }
    }
    for k in 0..n {
        s += &format!("  %a{k} = load %v{k} : f64\n");
    }
    s += body;
    s += "  buffer.write %val, u32 0, %y\n";
    if with_scope {
        s += "  autodiff.backward %y\n";
        for k in 0..n {
            s += &format!("  %g{k} = autodiff.gradient %v{k} : f64\n  buffer.write %out, u32 {k}, %g{k}\n");
        }
    }
    s + "  br target ^done\n^done:\n  return\n}\n"
}

pub fn inputs(xs: &[f64]) -> String {
    let args: Vec<String> = xs.iter().enumerate().map(|(k, x)| format!("\"x{k}\": {x:?}")).collect();
    format!(
        "{{\"args\": {{{}, \"out\": {{\"fill\": 0, \"len\": {}}}, \"val\": {{\"fill\": 0, \"len\": 1}}}}}}",
        args.join(", "),
        xs.len()
    )
}
