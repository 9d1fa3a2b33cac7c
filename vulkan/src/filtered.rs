//! Comparing filtered sampling with the interpreter (docs/vulkan.md,
//! "Sampling"): devices quantize filter weights, so an output that may hold
//! a value derived from a filtered sample is compared within
//! [`super::filter_tolerance`]; every other output stays bit-exact.
//!
//! Which outputs: a forward taint over the whole module. A sample whose
//! selector is not provably a point selector (`0..4`: a constant, or an
//! unsigned `mod x, c <= 4` / `bit_and x, c < 4`) is a source; an
//! instruction with a tainted operand is tainted; calls taint their callee's
//! parameters and results through returns; a read of a kernel resource
//! written with a tainted value is tainted, and so is every local-memory
//! load once a tainted value is stored anywhere, and every resource read
//! once a callable writes a tainted value to a resource (no alias reasoning
//! beyond that: more outputs get the bound, never fewer; the texture heaps
//! are read-only, so samples and heap reads are never tainted by memory). A kernel resource argument written with a
//! tainted operand is a filtered output; a tainted write inside a callable
//! makes every kernel resource argument one.

use std::collections::{BTreeSet, HashSet};

use serde_json::Value as Json;
use xir::interp::{BoundedMismatch, Comparison, Inputs, Outputs};
use xir::{ArgKind, FuncId, Inst, Module, Opcode, Trait, Value};

use super::device::Device;

/// An upper bound of an unsigned selector value: a constant, `mod x, c`
/// (`< c`) or `bit_and x, c` (`<= c`) of an unsigned integer.
fn selector_bound(m: &Module, f: &xir::Function, v: Value) -> Option<u64> {
    if let Some(c) = m.const_int_value(v) {
        return u64::try_from(c).ok();
    }
    let Value::Inst(i) = v else { return None };
    let d = f.inst(i);
    if !matches!(m.types.get(d.ty), xir::Type::Int { signed: false, .. }) || d.operands.len() != 2 {
        return None;
    }
    let c = u64::try_from(m.const_int_value(d.operands[1])?).ok()?;
    match d.opcode {
        Opcode::Mod if c > 0 => Some(c - 1),
        Opcode::BitAnd => Some(c),
        _ => None,
    }
}

/// A sample whose selector may be a filtering one (not provably `0..4`).
fn is_filtered_sample(m: &Module, f: &xir::Function, op: Opcode, operands: &[Value]) -> bool {
    matches!(op, Opcode::TextureSample | Opcode::TextureSampleLevel | Opcode::TextureSampleGrad)
        && operands.last().and_then(|&s| selector_bound(m, f, s)).is_none_or(|b| b >= 4)
}

/// Names of the kernel's resource arguments that may receive a value derived
/// from a filtered sample (empty when the module has none).
pub fn filtered_outputs(m: &Module, kernel: FuncId) -> BTreeSet<String> {
    let has = |t: Trait, op: Opcode| xir_spec::spec().op(op).has(t);
    let mut tainted: HashSet<(FuncId, Inst)> = HashSet::new();
    let mut args: HashSet<(FuncId, u32)> = HashSet::new();
    let mut returns: HashSet<FuncId> = HashSet::new();
    // Tainted local memory (any `load` then), tainted kernel resources (their reads then), or
    // a tainted resource write inside a callable (every resource read then).
    let mut memory = false;
    let mut resources: HashSet<u32> = HashSet::new();
    let mut any_resource = false;
    loop {
        let before = (tainted.len(), args.len(), returns.len(), memory, resources.len(), any_resource);
        for fid in m.func_ids() {
            let f = m.func(fid);
            for (_, i) in f.all_insts() {
                let d = f.inst(i);
                let t = |v: &Value| match v {
                    Value::Inst(j) => tainted.contains(&(fid, *j)),
                    Value::Arg(a) => args.contains(&(fid, *a)),
                    _ => false,
                };
                let any = d.operands.iter().any(t);
                let written = d.operands.iter().skip(1).any(t);
                let passed: Vec<u32> =
                    (1..d.operands.len()).filter(|&k| t(&d.operands[k])).map(|k| k as u32 - 1).collect();
                let mut res = any || is_filtered_sample(m, f, d.opcode, &d.operands);
                if d.opcode == Opcode::Call {
                    if let Some(&Value::Func(c)) = d.operands.first() {
                        args.extend(passed.into_iter().map(|k| (c, k)));
                        res |= returns.contains(&c);
                    }
                }
                if d.opcode == Opcode::Return && any {
                    returns.insert(fid);
                }
                let resource = has(Trait::Resource, d.opcode);
                // The texture heaps are read-only: a sample or heap read never sees a written value.
                let heap = xir_spirv::plan::texture_heap::is_bindless_texture_op(d.opcode);
                let target = match d.operands.first() {
                    Some(Value::Arg(a)) if fid == kernel => Some(*a),
                    _ => None,
                };
                if has(Trait::MemoryRead, d.opcode) && !heap {
                    res |=
                        if resource { any_resource || target.is_some_and(|a| resources.contains(&a)) } else { memory };
                }
                if has(Trait::MemoryWrite, d.opcode) && written {
                    match (resource, target) {
                        (false, _) => memory = true,
                        (true, Some(a)) => {
                            resources.insert(a);
                        }
                        (true, None) => any_resource = true,
                    }
                }
                if res {
                    tainted.insert((fid, i));
                }
            }
        }
        if before == (tainted.len(), args.len(), returns.len(), memory, resources.len(), any_resource) {
            break;
        }
    }
    let k = m.func(kernel);
    let name = |a: usize| k.args[a].md.name.clone().unwrap_or_else(|| a.to_string());
    let mut out = BTreeSet::new();
    for fid in m.func_ids() {
        let f = m.func(fid);
        for (_, i) in f.all_insts() {
            let d = f.inst(i);
            if !has(Trait::MemoryWrite, d.opcode) || !has(Trait::Resource, d.opcode) {
                continue;
            }
            let t = |v: &Value| match v {
                Value::Inst(j) => tainted.contains(&(fid, *j)),
                Value::Arg(a) => args.contains(&(fid, *a)),
                _ => false,
            };
            if !d.operands.iter().skip(1).any(t) {
                continue;
            }
            match d.operands.first() {
                Some(Value::Arg(a)) if fid == kernel => {
                    out.insert(name(*a as usize));
                }
                _ => out.extend((0..k.args.len()).filter(|&a| k.args[a].kind == ArgKind::Resource).map(name)),
            }
        }
    }
    out
}

/// The spread (max - min) of every f32 texel lane of the bindless texture
/// slots in `inputs`, and the largest texture dimension (2 when none).
pub fn texel_range(inputs: &Inputs) -> (f64, u32) {
    let (mut lo, mut hi, mut dim) = (f64::INFINITY, f64::NEG_INFINITY, 2u32);
    let mut visit = |j: &Json| {
        let mut stack = vec![j];
        while let Some(x) = stack.pop() {
            match x {
                Json::Array(a) => stack.extend(a),
                Json::Number(n) => {
                    if let Some(v) = n.as_f64() {
                        lo = lo.min(v);
                        hi = hi.max(v);
                    }
                }
                _ => {}
            }
        }
    };
    for j in inputs.args.values() {
        let Some(slots) = j.get("slots").and_then(Json::as_array) else { continue };
        for s in slots.iter().filter(|s| s.get("elem").is_some()) {
            dim = dim.max(s.get("size").and_then(Json::as_array).map_or(2, |a| a.len() as u32));
            for key in ["texels", "mips", "fill"] {
                if let Some(t) = s.get(key) {
                    visit(t);
                }
            }
        }
    }
    (if hi >= lo { hi - lo } else { 0.0 }, dim)
}

/// The filtered outputs of `kernel` run with `inputs` on `device`, and their
/// bound; `None` when no output can hold a filtered sample.
pub fn sampling_tolerance(
    device: &Device,
    m: &Module,
    kernel: FuncId,
    inputs: &Inputs,
) -> Option<(BTreeSet<String>, f64)> {
    let outs = filtered_outputs(m, kernel);
    if outs.is_empty() {
        return None;
    }
    let (range, dim) = texel_range(inputs);
    Some((outs, super::filter_tolerance(device, dim, range)))
}

/// Compare `b` with the precision run `a`: the `filtered` buffers within
/// the absolute `bound` (lane by lane), every other one within its
/// elements' precision bounds or `exact` (`Outputs::compare_bounded`).
pub fn compare_sampling(
    a: &Outputs,
    b: &Outputs,
    filtered: &BTreeSet<String>,
    bound: f64,
    exact: impl Fn(&Json, &Json) -> bool,
) -> Comparison {
    let split = |o: &Outputs| {
        let (mut rest, mut filt) = (o.clone(), Outputs::default());
        for n in filtered {
            rest.bounds.remove(n);
            if let Some(j) = rest.buffers.remove(n) {
                filt.buffers.insert(n.clone(), j);
            }
        }
        (rest, filt)
    };
    let ((ra, fa), (rb, fb)) = (split(a), split(b));
    let mut c = ra.compare_bounded(&rb, exact);
    if c.mismatch.is_none() {
        c.mismatch =
            fa.first_mismatch(&fb, xir::interp::close(0.0, bound)).map(|mismatch| BoundedMismatch { mismatch, bound });
    }
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    fn module(src: &str) -> (Module, FuncId) {
        let m = xir::text::parse_module(src, "t.xir").expect("parses");
        let k = m.func_ids().find(|&f| m.func(f).is_kernel()).unwrap();
        (m, k)
    }

    #[test]
    fn only_outputs_fed_by_a_filtered_sample_get_the_bound() {
        let (m, k) = module(
            "kernel @k(%h: bindless_array, %p: buffer<vec<f32, 4>>, %l: buffer<vec<f32, 4>>, %n: buffer<f32>, \
             %s: u32) block_size(1, 1, 1) {\n^entry:\n\
             \x20 %a = texture.sample %h, u32 0, vec<f32, 2> [0.5, 0.5], u32 3 : vec<f32, 4>\n\
             \x20 buffer.write %p, u32 0, %a\n\
             \x20 %b = texture.sample %h, u32 0, vec<f32, 2> [0.5, 0.5], %s : vec<f32, 4>\n\
             \x20 %c = add %b, %a : vec<f32, 4>\n\
             \x20 buffer.write %l, u32 0, %c\n\
             \x20 buffer.write %n, u32 0, f32 1.0\n\
             \x20 %q = mod %s, u32 4 : u32\n\
             \x20 %e = texture.sample %h, u32 0, vec<f32, 2> [0.5, 0.5], %q : vec<f32, 4>\n\
             \x20 buffer.write %p, u32 1, %e\n  return\n}\n",
        );
        assert_eq!(filtered_outputs(&m, k), ["l".to_string()].into_iter().collect());
    }

    #[test]
    fn the_bound_applies_to_filtered_buffers_only() {
        let mut a = Outputs::default();
        a.buffers.insert("l".into(), serde_json::json!([[0.5, 0.0, 0.0, 1.0]]));
        a.buffers.insert("p".into(), serde_json::json!([[0.5, 0.0, 0.0, 1.0]]));
        let mut b = a.clone();
        b.buffers.insert("l".into(), serde_json::json!([[0.501, 0.0, 0.0, 1.0]]));
        let filt: BTreeSet<String> = ["l".to_string()].into_iter().collect();
        assert!(compare_sampling(&a, &b, &filt, 0.01, |x, y| x == y).mismatch.is_none());
        assert!(compare_sampling(&a, &b, &filt, 0.0001, |x, y| x == y).mismatch.is_some());
        b.buffers.insert("p".into(), serde_json::json!([[0.501, 0.0, 0.0, 1.0]]));
        assert!(compare_sampling(&a, &b, &filt, 0.01, |x, y| x == y).mismatch.is_some());
    }
}
