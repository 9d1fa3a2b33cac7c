//! Scaling of the dominator tree and fixed-point argument usage on generated
//! functions of 10^3 to 10^6 instructions, reported per instruction.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use xir::{
    analysis::{ArgumentUsage, DomTree},
    ArgKind, Builder, FuncId, Function, FunctionKind, Metadata, Module, Opcode, TypeTable, Value,
};

/// A callable with a chain of if-diamonds (raw CFG), each arm loading,
/// computing and storing through a reference argument, then a call to a
/// helper that writes its own reference argument.
fn diamond_chain(target_insts: usize) -> (Module, FuncId) {
    let mut m = Module::new();
    m.intern_register_types();
    let mut helper = Function::new("helper", FunctionKind::Callable, TypeTable::VOID);
    helper.add_arg(TypeTable::F32, ArgKind::Reference, Metadata::named("p"));
    let helper = m.add_function(helper);
    {
        let mut b = Builder::new(&mut m, helper);
        let e = b.create_block();
        b.switch_to(e);
        let one = b.module.const_f32(1.0);
        b.store(Value::Arg(0), one);
        b.ret(None);
    }
    let mut f = Function::new("big", FunctionKind::Callable, TypeTable::VOID);
    f.add_arg(TypeTable::F32, ArgKind::Reference, Metadata::named("acc"));
    f.add_arg(TypeTable::F32, ArgKind::Value, Metadata::named("x"));
    f.add_arg(TypeTable::F32, ArgKind::Reference, Metadata::named("out"));
    let fid = m.add_function(f);
    let mut b = Builder::new(&mut m, fid);
    let entry = b.create_block();
    b.switch_to(entry);
    let (acc, x) = (Value::Arg(0), Value::Arg(1));
    let mut count = 0;
    while count < target_insts {
        let (t, e, j) = (b.create_block(), b.create_block(), b.create_block());
        let v = b.load(acc);
        let c = b.compare(Opcode::Lt, v, x);
        b.cond_br(c, t, e);
        for arm in [t, e] {
            b.switch_to(arm);
            let v = b.load(acc);
            let w = b.binary(Opcode::Add, v, x);
            b.store(acc, w);
            b.br(j);
        }
        b.switch_to(j);
        count += 11;
    }
    b.op(Opcode::Call, TypeTable::VOID, &[Value::Func(helper), Value::Arg(2)], &[]);
    b.ret(None);
    (m, fid)
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("analysis");
    group.sample_size(10);
    for &n in &[1_000usize, 10_000, 100_000, 1_000_000] {
        let (m, f) = diamond_chain(n);
        group.throughput(Throughput::Elements(m.inst_count() as u64));
        group.bench_with_input(BenchmarkId::new("dominator_tree", n), &n, |bch, _| {
            bch.iter(|| DomTree::compute(m.func(f)))
        });
        group.bench_with_input(BenchmarkId::new("argument_usage", n), &n, |bch, _| {
            bch.iter(|| ArgumentUsage::compute(&m))
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
