//! The interpreter never panics: every kernel of many random well-formed
//! modules (`testgen::modules`, which mixes every type, awkward constants,
//! structured and raw control flow) runs to a result or a located error
//! with generic inputs. Generation is seeded, so a failure names its seed.

use serde_json::{json, Value as Json};
use xir::interp::{run_kernel_with, Inputs, Options};
use xir::{ArgKind, FloatFormat, Module, Type, TypeId};
use xir_testgen::modules::generate;

/// A JSON value of type `ty` (small, nonzero where it matters).
fn value(m: &Module, ty: TypeId) -> Json {
    match m.types.get(ty) {
        Type::Bool => json!(true),
        Type::Int { .. } => json!(1),
        Type::Float(FloatFormat::E4M3 | FloatFormat::E5M2) => json!(1.0),
        Type::Float(_) => json!(1.5),
        Type::Vector { elem, lanes } => Json::Array(vec![value(m, *elem); *lanes as usize]),
        Type::Matrix { elem, dim } => {
            Json::Array(vec![Json::Array(vec![value(m, *elem); *dim as usize]); *dim as usize])
        }
        Type::Array { elem, len } => Json::Array(vec![value(m, *elem); (*len).min(64) as usize]),
        Type::Struct { fields, .. } => Json::Array(fields.iter().map(|f| value(m, *f)).collect()),
        _ => Json::Null,
    }
}

fn inputs(m: &Module, k: xir::FuncId) -> Option<Inputs> {
    let mut inputs = Inputs::new();
    let names = xir::interp::arg_names(m.func(k));
    for (a, name) in m.func(k).args.iter().zip(names) {
        let j = match (a.kind, m.types.get(a.ty)) {
            (ArgKind::Resource, Type::Buffer(e)) => json!({"fill": value(m, *e), "len": 8}),
            (ArgKind::Resource, Type::ByteBuffer) => json!({"fill": 0, "len": 256}),
            (ArgKind::Resource, Type::Texture { dim, elem }) => {
                json!({"size": vec![2; *dim as usize], "fill": vec![value(m, *elem); 4]})
            }
            (ArgKind::Resource, Type::BindlessArray) => json!({"slots": [{"bytes": vec![0; 256]}]}),
            (ArgKind::Resource, _) => return None,
            (_, Type::Array { len, .. }) if *len > 64 => return None,
            _ => value(m, a.ty),
        };
        inputs.args.insert(name, j);
    }
    Some(inputs)
}

#[test]
fn random_modules_never_panic_the_interpreter() {
    let opts = Options { dispatch: Some([4, 2, 1]), max_steps: 20_000, ..Options::default() };
    let (mut ran, mut ok) = (0, 0);
    for seed in 0..300u64 {
        let m = generate(seed, 3, 12);
        for k in m.func_ids().filter(|&f| m.func(f).is_kernel()) {
            let Some(inputs) = inputs(&m, k) else { continue };
            let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run_kernel_with(&m, k, &inputs, &opts)));
            match r {
                Ok(res) => {
                    ran += 1;
                    ok += res.is_ok() as u32;
                    if let (Err(e), Ok(_)) = (&res, std::env::var("SHOW")) {
                        eprintln!("ERR {}", e.message);
                    }
                }
                Err(_) => panic!("the interpreter panicked on seed {seed}, kernel @{}", m.func(k).name),
            }
        }
    }
    assert!(ran > 100, "only {ran} kernels ran");
    eprintln!("{ran} random kernels ran, {ok} without error");
}
