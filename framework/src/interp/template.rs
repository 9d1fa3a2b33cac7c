//! An inputs file to start from (`xir-run --inputs-template`): every
//! argument of a kernel at zero, written in the encoding [`super::run_kernel`]
//! reads (docs/inputs-format.md), so that a user edits values instead of
//! first learning how each kind of argument is written (a struct element is
//! the list of its members, a texture a size and texels, ...).
//!
//! The dispatch is one block of the kernel and every buffer holds one
//! element per thread of it: the shape most kernels index by, and one the
//! interpreter runs without an input error. A buffer the kernel only ever
//! reaches at constant indices (the front end's one-element buffer of
//! `var<storage> n: atomic<u32>` or of a storage struct's header member)
//! holds just the elements those indices reach, so that the template is
//! also what naga's module of the same shader takes.

use serde_json::{json, Map, Value as Json};

use super::{arg_names, io, undef_of, Val};
use crate::ir::{ArgKind, FuncId, FunctionKind, Module, Type, TypeId, TypeTable};

/// A kernel's inputs at zero: the dispatch and each argument's value, in
/// the kernel's parameter order.
#[derive(Clone, Debug, PartialEq)]
pub struct InputsTemplate {
    pub dispatch: [u32; 3],
    pub args: Vec<(String, Json)>,
}

impl InputsTemplate {
    /// The inputs file as JSON.
    pub fn to_json(&self) -> Json {
        let args: Map<String, Json> = self.args.iter().cloned().collect();
        json!({"dispatch": self.dispatch, "args": args})
    }

    /// The inputs file as text to edit: one argument a line, in the
    /// kernel's order.
    pub fn to_text(&self) -> String {
        let [x, y, z] = self.dispatch;
        let mut out = format!("{{\n  \"dispatch\": [{x}, {y}, {z}],\n  \"args\": {{");
        for (k, (name, value)) in self.args.iter().enumerate() {
            let sep = if k + 1 < self.args.len() { "," } else { "" };
            out.push_str(&format!("\n    {}: {value}{sep}", Json::String(name.clone())));
        }
        out.push_str("\n  }\n}\n");
        out
    }
}

/// Every argument of `kernel` at zero, the dispatch one block.
pub fn inputs_template(module: &Module, kernel: FuncId) -> InputsTemplate {
    let f = module.func(kernel);
    let block = match f.kind {
        FunctionKind::Kernel { block_size, .. } => block_size,
        _ => [1, 1, 1],
    };
    let threads: u64 = block.iter().map(|&b| u64::from(b)).product();
    let types = &module.types;
    let args = arg_names(f)
        .into_iter()
        .zip(&f.args)
        .enumerate()
        .map(|(k, (name, a))| {
            let value = match (a.kind, types.get(a.ty)) {
                (ArgKind::Resource, Type::Buffer(elem)) => {
                    let len = constant_extent(module, kernel, k as u32, 0)
                        .filter(|&n| n <= MAX_CONSTANT_EXTENT)
                        .unwrap_or(threads);
                    json!({"fill": zero(types, *elem), "len": len})
                }
                (ArgKind::Resource, Type::ByteBuffer) => json!({"fill": 0, "len": 4 * threads}),
                (ArgKind::Resource, Type::Texture { dim, elem }) => {
                    let size: Vec<u32> = block[..usize::from(*dim)].to_vec();
                    json!({"size": size, "fill": vec![zero(types, *elem); 4]})
                }
                (ArgKind::Resource, Type::BindlessArray) => json!({"slots": []}),
                (ArgKind::Resource, Type::Accel) => json!({"instances": []}),
                _ => zero(types, a.ty),
            };
            (name, value)
        })
        .collect();
    InputsTemplate { dispatch: block, args }
}

/// The longest buffer a template sizes by a constant index (a larger one
/// gets the thread count instead, as any other buffer).
const MAX_CONSTANT_EXTENT: u64 = 1 << 20;

/// How deep [`constant_extent`] follows a buffer through calls.
const MAX_CALL_DEPTH: u32 = 16;

/// The elements buffer argument `arg` of `func` needs when every use of
/// it, in callees too, is a read, write or atomic at a constant index: the
/// largest index plus one. `None` when any use is not (a computed index,
/// `buffer.size`, ...) or it has no use.
fn constant_extent(module: &Module, func: FuncId, arg: u32, depth: u32) -> Option<u64> {
    use xir_spec::Opcode::*;
    let f = module.func(func);
    let mut extent = None;
    for u in f.uses(crate::ir::Value::Arg(arg)) {
        let d = f.inst(u.user);
        let index_operand = match d.opcode {
            BufferRead | BufferVolatileRead | BufferWrite | BufferVolatileWrite | BufferWritePart if u.index == 0 => 1,
            AtomicCompareExchange if u.index == 0 => 3,
            AtomicExchange | AtomicFetchAdd | AtomicFetchSub | AtomicFetchAnd | AtomicFetchOr | AtomicFetchXor
            | AtomicFetchMin | AtomicFetchMax
                if u.index == 0 =>
            {
                2
            }
            Call if u.index > 0 && depth < MAX_CALL_DEPTH => {
                let crate::ir::Value::Func(callee) = d.operands[0] else { return None };
                let n = constant_extent(module, callee, u.index - 1, depth + 1)?;
                extent = Some(extent.unwrap_or(0).max(n));
                continue;
            }
            _ => return None,
        };
        let index = module.const_bits(*d.operands.get(index_operand)?)?;
        extent = Some(extent.unwrap_or(0).max(index.checked_add(1)?));
    }
    extent
}

/// The zero of a data type in the element encoding: the undefined value's
/// shape with every scalar leaf zero.
fn zero(types: &TypeTable, ty: TypeId) -> Json {
    fn zeroed(v: Val) -> Val {
        match v {
            Val::A(members) => Val::agg(members.iter().cloned().map(zeroed).collect()),
            _ => Val::S(0),
        }
    }
    io::val_to_json(types, ty, &zeroed(undef_of(types, ty)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::interp::{run_kernel, Inputs};

    fn template(src: &str) -> (Module, InputsTemplate) {
        let m = crate::text::parse_module(src, "t.xir").expect("parses");
        let t = inputs_template(&m, FuncId::new(0));
        (m, t)
    }

    /// A buffer reached only at constant indices (through a callee too)
    /// holds the elements they reach; any other use (a computed index,
    /// `buffer.size`, none at all) gives one element per thread.
    #[test]
    fn a_buffer_reached_at_constant_indices_holds_just_those_elements() {
        let src = "kernel @k(%n: buffer<u32>, %m: buffer<f32>, %d: buffer<u32>, %s: buffer<u32>, %u: buffer<u32>) \
                   block_size(8, 1, 1) {\n^e:\n  %i = extract $dispatch_id, u32 0 : u32\n  \
                   %o = atomic.fetch_add %n, u32 1, u32 0 : u32\n  buffer.write %n, u32 1, %o\n  \
                   call @bump, %m\n  buffer.write %d, %i, %i\n  %z = buffer.size %s : u32\n  \
                   buffer.write %s, u32 0, %z\n  return\n}\n\
                   callable @bump(%b: buffer<f32>) -> void {\n^e:\n  %v = buffer.read %b, u32 3 : f32\n  \
                   buffer.write %b, u32 2, %v\n  return\n}\n";
        let (m, t) = template(src);
        let lens: Vec<(&str, &Json)> = t.args.iter().map(|(n, v)| (n.as_str(), &v["len"])).collect();
        assert_eq!(lens, [("n", &json!(2)), ("m", &json!(4)), ("d", &json!(8)), ("s", &json!(8)), ("u", &json!(8))]);
        let inputs = Inputs::from_json(&t.to_text()).expect("an inputs file");
        run_kernel(&m, FuncId::new(0), &inputs).expect("the interpreter takes it");
    }

    #[test]
    fn every_argument_kind_at_zero_and_the_interpreter_takes_it() {
        let src = "kernel @k(%a: f32, %v: vec<i32, 3>, %s: struct<align 8>{vec<f32, 2>, u32}, %x: buffer<f32>, \
                   %p: buffer<struct<align 8>{vec<f32, 2>, u16}>, %b: byte_buffer, %t: texture2d<u32>, \
                   %h: bindless_array) block_size(4, 2, 1) {\n^e:\n  return\n}\n";
        let (m, t) = template(src);
        assert_eq!(
            t.to_json(),
            json!({
                "dispatch": [4, 2, 1],
                "args": {
                    "a": 0.0,
                    "v": [0, 0, 0],
                    "s": [[0.0, 0.0], 0],
                    "x": {"fill": 0.0, "len": 8},
                    "p": {"fill": [[0.0, 0.0], 0], "len": 8},
                    "b": {"fill": 0, "len": 32},
                    "t": {"size": [4, 2], "fill": [0, 0, 0, 0]},
                    "h": {"slots": []},
                }
            })
        );
        let names: Vec<&str> = t.args.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["a", "v", "s", "x", "p", "b", "t", "h"], "the kernel's order");
        let text = t.to_text();
        assert!(text.starts_with("{\n  \"dispatch\": [4, 2, 1],\n  \"args\": {\n    \"a\": 0.0,\n"), "{text}");
        assert!(text.ends_with("\n    \"h\": {\"slots\":[]}\n  }\n}\n"), "{text}");
        let inputs = Inputs::from_json(&text).expect("the template is an inputs file");
        assert_eq!(serde_json::from_str::<Json>(&text).unwrap(), t.to_json());
        run_kernel(&m, FuncId::new(0), &inputs).expect("the interpreter takes every argument");
    }
}
