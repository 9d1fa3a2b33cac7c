//! The generic verifier, one small module per rule: each invalid module is
//! built with `xir::Builder` (most cannot be written in text at all), and the
//! test asserts the broken rule's name and where it points (function,
//! block, instruction). Valid modules must verify clean.

use xir::verify::verify_module;
use xir::*;

/// A module with one function under construction.
struct Fixture {
    m: Module,
    f: FuncId,
}

impl Fixture {
    fn new(kind: FunctionKind, ret: TypeId) -> Self {
        let mut m = Module::new();
        m.intern_register_types();
        let f = m.add_function(Function::new("f", kind, ret));
        Fixture { m, f }
    }
    fn kernel() -> Self {
        Self::new(FunctionKind::Kernel { block_size: [64, 1, 1], whole_blocks: false, noalias: false }, TypeTable::VOID)
    }
    fn arg(&mut self, ty: TypeId, kind: ArgKind) -> Value {
        self.m.func_mut(self.f).add_arg(ty, kind, Metadata::default())
    }
    fn b(&mut self) -> Builder<'_> {
        Builder::new(&mut self.m, self.f)
    }
    fn block(&mut self) -> Block {
        self.m.func_mut(self.f).add_block()
    }
    fn at(&mut self, blk: Block) -> Builder<'_> {
        let mut b = self.b();
        b.switch_to(blk);
        b
    }
    fn verify(&self) -> Vec<Diagnostic> {
        verify_module(&self.m)
    }
}

/// Assert exactly one diagnostic of `rule`, at instruction `inst` (if given)
/// of function `f`, and return it.
#[track_caller]
fn expect_rule(diags: &[Diagnostic], rule: &str, inst: Option<Value>) -> Diagnostic {
    let hits: Vec<&Diagnostic> = diags.iter().filter(|d| d.rule == rule).collect();
    assert_eq!(hits.len(), 1, "expected one `{rule}` diagnostic, got:\n{}", diag::render(diags));
    let d = hits[0].clone();
    assert_eq!(d.function.as_deref(), Some("f"), "{d}");
    if let Some(Value::Inst(i)) = inst {
        assert_eq!(d.inst, Some(i), "wrong instruction: {d}");
        assert!(d.block.is_some(), "no block: {d}");
    }
    d
}

/// `kernel @saxpy(%a: f32, %x: buffer<f32>, %y: buffer<f32>)`, as in
/// docs/text-format.md: structured, with an `if` whose false arm is the merge.
fn saxpy() -> Fixture {
    let mut fx = Fixture::kernel();
    let buf = fx.m.types.buffer(TypeTable::F32);
    let a = fx.arg(TypeTable::F32, ArgKind::Value);
    let x = fx.arg(buf, ArgKind::Resource);
    let y = fx.arg(buf, ArgKind::Resource);
    let (entry, body, done) = (fx.block(), fx.block(), fx.block());
    let zero = fx.m.const_u32(0);
    let mut b = fx.at(entry);
    let i = b.op(Opcode::Extract, TypeTable::U32, &[Value::Reg(SpecialRegister::DispatchId), zero], &[]);
    let n = b.op(Opcode::BufferSize, TypeTable::U32, &[x], &[]);
    let ok = b.compare(Opcode::Lt, i, n);
    b.if_(ok, body, done, done);
    b.switch_to(body);
    let xi = b.op(Opcode::BufferRead, TypeTable::F32, &[x, i], &[]);
    let yi = b.op(Opcode::BufferRead, TypeTable::F32, &[y, i], &[]);
    let ax = b.binary(Opcode::Mul, a, xi);
    let r = b.binary(Opcode::Add, ax, yi);
    b.op(Opcode::BufferWrite, TypeTable::VOID, &[y, i, r], &[]);
    b.br(done);
    b.switch_to(done);
    b.ret(None);
    fx
}

#[test]
fn saxpy_is_valid() {
    let fx = saxpy();
    assert_eq!(fx.verify(), vec![], "{}", diag::render(&fx.verify()));
}

/// A raw-CFG callable with a loop carried by a Phi: valid.
fn counting_loop() -> (Fixture, Value) {
    let mut fx = Fixture::new(FunctionKind::Callable, TypeTable::U32);
    let n = fx.arg(TypeTable::U32, ArgKind::Value);
    let (entry, head, body, exit) = (fx.block(), fx.block(), fx.block(), fx.block());
    let zero = fx.m.const_u32(0);
    let one = fx.m.const_u32(1);
    let mut b = fx.at(entry);
    b.br(head);
    b.switch_to(head);
    let phi = b.phi(TypeTable::U32, &[(zero, entry)]);
    let c = b.compare(Opcode::Lt, phi, n);
    b.cond_br(c, body, exit);
    b.switch_to(body);
    let next = b.binary(Opcode::Add, phi, one);
    b.br(head);
    b.switch_to(exit);
    b.ret(Some(phi));
    // Close the cycle: the back-edge incoming.
    let pi = phi.as_inst().unwrap();
    let f = fx.m.func_mut(fx.f);
    let mut blocks = f.inst(pi).blocks.clone();
    blocks.push(body);
    f.set_block_operands(pi, blocks);
    let mut ops = f.inst(pi).operands.clone();
    ops.push(next);
    f.set_operands(pi, ops);
    (fx, phi)
}

#[test]
fn raw_loop_with_phi_is_valid() {
    let (fx, _) = counting_loop();
    assert_eq!(fx.verify(), vec![], "{}", diag::render(&fx.verify()));
}

#[test]
fn block_without_terminator() {
    let mut fx = Fixture::kernel();
    let e = fx.block();
    let mut b = fx.at(e);
    let v = b.alloca(TypeTable::F32);
    let d = expect_rule(&fx.verify(), "terminator", Some(v));
    assert!(d.message.contains("not a terminator"), "{d}");
}

#[test]
fn terminator_in_the_middle_of_a_block() {
    let mut fx = Fixture::kernel();
    let e = fx.block();
    let mut b = fx.at(e);
    b.ret(None);
    b.ret(None);
    let first = Value::Inst(fx.m.func(fx.f).block(e).insts()[0]);
    let d = expect_rule(&fx.verify(), "terminator", Some(first));
    assert!(d.message.contains("followed by"), "{d}");
}

#[test]
fn empty_block() {
    let mut fx = Fixture::kernel();
    let e = fx.block();
    fx.at(e).ret(None);
    let orphan = fx.block();
    let d = expect_rule(&fx.verify(), "terminator", None);
    assert_eq!(d.block, Some(orphan));
}

#[test]
fn operand_class_violation() {
    let mut fx = Fixture::kernel();
    let e = fx.block();
    let t = fx.m.const_bool(true);
    let one = fx.m.const_f32(1.0);
    let mut b = fx.at(e);
    let bad = b.op(Opcode::Add, TypeTable::BOOL, &[t, one], &[]);
    b.ret(None);
    let d = expect_rule(&fx.verify(), "operand:numeric", Some(bad));
    assert!(d.message.contains("operand 0") && d.message.contains("`bool`"), "{d}");
}

#[test]
fn operand_count() {
    let mut fx = Fixture::kernel();
    let e = fx.block();
    let one = fx.m.const_f32(1.0);
    let mut b = fx.at(e);
    let bad = b.op(Opcode::Add, TypeTable::F32, &[one], &[]);
    b.ret(None);
    expect_rule(&fx.verify(), "operand-count", Some(bad));
}

#[test]
fn result_rule_violation() {
    let mut fx = Fixture::kernel();
    let e = fx.block();
    let one = fx.m.const_f32(1.0);
    let mut b = fx.at(e);
    let bad = b.op(Opcode::Lt, TypeTable::F32, &[one, one], &[]);
    b.ret(None);
    let d = expect_rule(&fx.verify(), "result:bool_shape_of_0", Some(bad));
    assert!(d.message.contains("`f32`"), "{d}");
}

#[test]
fn operands_same_type_violation() {
    let mut fx = Fixture::kernel();
    let e = fx.block();
    let one = fx.m.const_f32(1.0);
    let two = fx.m.const_f64(2.0);
    let mut b = fx.at(e);
    let bad = b.op(Opcode::Add, TypeTable::F32, &[one, two], &[]);
    b.ret(None);
    expect_rule(&fx.verify(), "operands_same_type", Some(bad));
}

#[test]
fn store_must_be_exact_typed() {
    let mut fx = Fixture::kernel();
    let e = fx.block();
    let one = fx.m.const_f32(1.0);
    let mut b = fx.at(e);
    let slot = b.alloca(TypeTable::I32);
    b.store(slot, one);
    b.ret(None);
    let st = Value::Inst(fx.m.func(fx.f).block(e).insts()[1]);
    let d = expect_rule(&fx.verify(), "store_exact_type", Some(st));
    assert!(d.message.contains("`f32`") && d.message.contains("`i32`"), "{d}");
}

#[test]
fn load_needs_an_lvalue() {
    let mut fx = Fixture::kernel();
    let v = fx.arg(TypeTable::F32, ArgKind::Value);
    let e = fx.block();
    let mut b = fx.at(e);
    let bad = b.op(Opcode::Load, TypeTable::F32, &[v], &[]);
    b.ret(None);
    expect_rule(&fx.verify(), "operand:lvalue", Some(bad));
}

#[test]
fn use_before_definition_in_a_block() {
    let mut fx = Fixture::kernel();
    let e = fx.block();
    let one = fx.m.const_f32(1.0);
    let mut b = fx.at(e);
    let x = b.binary(Opcode::Add, one, one);
    let y = b.binary(Opcode::Mul, x, x);
    b.ret(None);
    // Make x use y, which is defined after it.
    fx.m.func_mut(fx.f).set_operand(x.as_inst().unwrap(), 1, y);
    let d = expect_rule(&fx.verify(), "ssa-dominance", Some(x));
    assert!(d.message.contains("operand 1"), "{d}");
}

#[test]
fn use_of_an_arm_value_in_the_merge() {
    let mut fx = saxpy();
    // Make the merge block `done` write `r`, computed in the `body` arm.
    let f = fx.m.func(fx.f);
    let (body, done) = (f.blocks()[1], f.blocks()[2]);
    let r = Value::Inst(f.block(body).insts()[3]);
    let zero = fx.m.const_u32(0);
    let f = fx.m.func_mut(fx.f);
    let mut d = InstData::new(Opcode::BufferWrite, TypeTable::VOID);
    d.operands = [Value::Arg(2), zero, r].into_iter().collect();
    let w = f.create_inst(d);
    f.insert_inst(done, 0, w);
    let d = expect_rule(&fx.verify(), "ssa-dominance", Some(Value::Inst(w)));
    assert_eq!(d.block, Some(done));
}

#[test]
fn phi_missing_an_incoming() {
    let (mut fx, phi) = counting_loop();
    let pi = phi.as_inst().unwrap();
    let f = fx.m.func_mut(fx.f);
    let keep: smallvec::SmallVec<[Value; 3]> = f.inst(pi).operands[..1].iter().copied().collect();
    f.set_operands(pi, keep);
    let first = f.inst(pi).blocks[..1].into();
    f.set_block_operands(pi, first);
    let d = expect_rule(&fx.verify(), "phi-predecessors", Some(phi));
    assert!(d.message.contains("0 time(s)"), "{d}");
}

#[test]
fn phi_after_other_instructions() {
    let (mut fx, phi) = counting_loop();
    let f = fx.m.func_mut(fx.f);
    let head = f.blocks()[1];
    let pi = phi.as_inst().unwrap();
    // Move the Phi after the comparison.
    f.move_inst(pi, head, 1);
    let diags = fx.verify();
    expect_rule(&diags, "phi-first", Some(phi));
    // The comparison now uses the Phi before it is defined.
    assert!(diags.iter().any(|d| d.rule == "ssa-dominance"), "{}", diag::render(&diags));
}

#[test]
fn branch_to_a_block_the_function_does_not_own() {
    let mut fx = Fixture::kernel();
    let (e, gone) = (fx.block(), fx.block());
    fx.at(gone).ret(None);
    let mut b = fx.at(e);
    b.br(gone);
    fx.m.func_mut(fx.f).remove_block(gone);
    let br = Value::Inst(fx.m.func(fx.f).block(e).insts()[0]);
    let d = expect_rule(&fx.verify(), "block-ownership", Some(br));
    assert!(d.message.contains("does not own"), "{d}");
}

#[test]
fn return_must_match_the_function() {
    let mut fx = Fixture::new(FunctionKind::Callable, TypeTable::F32);
    let e = fx.block();
    let mut b = fx.at(e);
    b.ret(None);
    let r = Value::Inst(fx.m.func(fx.f).block(e).insts()[0]);
    expect_rule(&fx.verify(), "return_matches_function", Some(r));
}

#[test]
fn call_with_wrong_arguments() {
    let mut fx = Fixture::kernel();
    let mut callee = Function::new("g", FunctionKind::External, TypeTable::F32);
    callee.add_arg(TypeTable::F32, ArgKind::Value, Metadata::default());
    let g = fx.m.add_function(callee);
    let e = fx.block();
    let one = fx.m.const_u32(1);
    let mut b = fx.at(e);
    let call = b.op(Opcode::Call, TypeTable::F32, &[Value::Func(g), one], &[]);
    b.ret(None);
    let d = expect_rule(&fx.verify(), "call_signature", Some(call));
    assert!(d.message.contains("argument 0"), "{d}");
}

#[test]
fn kernel_signature_rules() {
    let mut fx = Fixture::new(
        FunctionKind::Kernel { block_size: [64, 1, 1], whole_blocks: false, noalias: false },
        TypeTable::F32,
    );
    let buf = fx.m.types.buffer(TypeTable::F32);
    fx.arg(buf, ArgKind::Value);
    let e = fx.block();
    let one = fx.m.const_f32(1.0);
    fx.at(e).ret(Some(one));
    let diags = fx.verify();
    let sig: Vec<_> = diags.iter().filter(|d| d.rule == "signature").collect();
    assert_eq!(sig.len(), 2, "{}", diag::render(&diags));
    assert!(sig.iter().any(|d| d.message.contains("kernels return void")));
    assert!(sig.iter().any(|d| d.message.contains("cannot be a Value argument")));
}

#[test]
fn externals_have_no_blocks() {
    let mut fx = Fixture::new(FunctionKind::External, TypeTable::VOID);
    let e = fx.block();
    fx.at(e).ret(None);
    let d = expect_rule(&fx.verify(), "signature", None);
    assert!(d.message.contains("no blocks"), "{d}");
}

#[test]
fn vector_lanes_out_of_range() {
    let mut fx = Fixture::kernel();
    let v5 = fx.m.types.vector(TypeTable::F32, 5);
    let e = fx.block();
    let mut b = fx.at(e);
    b.alloca(v5);
    b.ret(None);
    let diags = fx.verify();
    let d = diags.iter().find(|d| d.rule == "type:vector_lanes_2_to_4").expect("lane rule");
    assert!(d.message.contains("vec<f32, 5>"), "{d}");
}

#[test]
fn struct_alignment_must_be_a_power_of_two() {
    let mut fx = Fixture::kernel();
    fx.m.types.intern(Type::Struct { fields: vec![TypeTable::F32], align: 6 });
    let e = fx.block();
    fx.at(e).ret(None);
    let diags = fx.verify();
    assert_eq!(diags.len(), 1, "{}", diag::render(&diags));
    assert_eq!(diags[0].rule, "type:align_power_of_two");
}

#[test]
fn duplicate_switch_cases() {
    let mut fx = Fixture::kernel();
    let v = fx.arg(TypeTable::I32, ArgKind::Value);
    let (e, c, m) = (fx.block(), fx.block(), fx.block());
    let mut b = fx.at(e);
    b.switch(v, m, m, &[(3, c), (3, c)]);
    b.switch_to(c);
    b.br(m);
    b.switch_to(m);
    b.ret(None);
    let sw = Value::Inst(fx.m.func(fx.f).block(e).insts()[0]);
    let d = expect_rule(&fx.verify(), "cases_unique", Some(sw));
    assert!(d.message.contains("appears twice"), "{d}");
}

#[test]
fn loop_roles_must_be_distinct() {
    let mut fx = Fixture::kernel();
    let (e, p, body, u) = (fx.block(), fx.block(), fx.block(), fx.block());
    let t = fx.m.const_bool(true);
    let mut b = fx.at(e);
    // body and merge are the same block.
    let lp = b.op(Opcode::Loop, TypeTable::VOID, &[], &[p, body, u, body]);
    b.switch_to(p);
    b.cond_br(t, body, body);
    b.switch_to(body);
    b.ret(None);
    b.switch_to(u);
    b.br(p);
    let d = expect_rule(&fx.verify(), "structured-roles", Some(lp));
    assert!(d.message.contains("`body` and `merge`"), "{d}");
}

#[test]
fn gep_into_a_struct_needs_a_constant_in_range() {
    let mut fx = Fixture::kernel();
    let s = fx.m.types.intern(Type::Struct { fields: vec![TypeTable::F32, TypeTable::U32], align: 4 });
    let e = fx.block();
    let two = fx.m.const_u32(2);
    let mut b = fx.at(e);
    let slot = b.alloca(s);
    let g = b.op(Opcode::Gep, TypeTable::U32, &[slot, two], &[]);
    b.ret(None);
    let d = expect_rule(&fx.verify(), "gep_path", Some(g));
    assert!(d.message.contains("out of range"), "{d}");
}

#[test]
fn texture_writes_take_four_lanes() {
    let mut fx = Fixture::kernel();
    let tex = fx.m.types.intern(Type::Texture { dim: 2, elem: TypeTable::F32 });
    let v3 = fx.m.types.vector(TypeTable::F32, 3);
    let u2 = fx.m.types.vector(TypeTable::U32, 2);
    let t = fx.arg(tex, ArgKind::Resource);
    let e = fx.block();
    let mut b = fx.at(e);
    let w = b.op(Opcode::TextureWrite, TypeTable::VOID, &[t, Value::Undef(u2), Value::Undef(v3)], &[]);
    b.ret(None);
    let d = expect_rule(&fx.verify(), "texel_write_vec4", Some(w));
    assert!(d.message.contains("4-lane"), "{d}");
}

#[test]
fn bitcast_between_different_sizes() {
    let mut fx = Fixture::kernel();
    let e = fx.block();
    let one = fx.m.const_f32(1.0);
    let u64t = fx.m.types.int(64, false);
    let mut b = fx.at(e);
    let c = b.op(Opcode::CastBitwise, u64t, &[one], &[]);
    b.ret(None);
    expect_rule(&fx.verify(), "bitcast_same_size", Some(c));
}

/// Found by the spec-driven generator: `vec<f32, 3>` and `vec<i32, 4>`
/// have the same padded storage size (16 bytes), and the verifier let the
/// bitcast through; the interpreter refused it at run time and SPIR-V
/// `OpBitcast` requires equal bit widths (96 and 128 here).
#[test]
fn bitcast_between_vectors_of_equal_storage_but_different_bits() {
    let mut fx = Fixture::kernel();
    let e = fx.block();
    let f3 = fx.m.types.vector(TypeTable::F32, 3);
    let i4 = fx.m.types.vector(TypeTable::I32, 4);
    let i3 = fx.m.types.vector(TypeTable::I32, 3);
    let one = fx.m.const_f32(1.0).as_const().expect("a constant");
    let v = fx.m.const_composite(f3, vec![one; 3]);
    let mut b = fx.at(e);
    let bad = b.op(Opcode::CastBitwise, i4, &[v], &[]);
    b.op(Opcode::CastBitwise, i3, &[v], &[]);
    b.ret(None);
    let diags = fx.verify();
    assert_eq!(diags.len(), 1, "only the 3-to-4-lane bitcast is wrong: {}", xir::diag::render(&diags));
    let d = expect_rule(&diags, "bitcast_same_size", Some(bad));
    assert!(d.message.contains("`vec<f32, 3>` is 96 bits but `vec<i32, 4>` is 128"), "{}", d.message);
}

#[test]
fn operands_must_name_existing_entities() {
    let mut fx = Fixture::kernel();
    let e = fx.block();
    let mut b = fx.at(e);
    let bad = b.op(Opcode::Neg, TypeTable::F32, &[Value::Inst(Inst(99))], &[]);
    b.ret(None);
    let d = expect_rule(&fx.verify(), "ids", Some(bad));
    assert!(d.message.contains("missing instruction inst99"), "{d}");
}

#[test]
fn unreachable_region_rule() {
    // Dead code using an entry value is accepted; a forward use inside a
    // dead block is not.
    let mut fx = Fixture::kernel();
    let (e, dead) = (fx.block(), fx.block());
    let one = fx.m.const_f32(1.0);
    let mut b = fx.at(e);
    let x = b.binary(Opcode::Add, one, one);
    b.ret(None);
    b.switch_to(dead);
    let y = b.binary(Opcode::Mul, x, x);
    let z = b.binary(Opcode::Mul, y, y);
    b.ret(None);
    assert_eq!(fx.verify(), vec![]);
    fx.m.func_mut(fx.f).set_operand(y.as_inst().unwrap(), 1, z);
    let d = expect_rule(&fx.verify(), "ssa-dominance", Some(y));
    assert_eq!(d.block, Some(dead));
}

#[test]
fn dead_blocks_do_not_see_each_other_unless_dominated() {
    // Two unreachable blocks that both only branch to a third: the third may
    // not use values of either.
    let mut fx = Fixture::kernel();
    let (e, d1, d2, d3) = (fx.block(), fx.block(), fx.block(), fx.block());
    let one = fx.m.const_f32(1.0);
    let mut b = fx.at(e);
    b.ret(None);
    b.switch_to(d1);
    let a = b.binary(Opcode::Add, one, one);
    b.br(d3);
    b.switch_to(d2);
    b.br(d3);
    b.switch_to(d3);
    let u = b.op(Opcode::Neg, TypeTable::F32, &[a], &[]);
    b.ret(None);
    expect_rule(&fx.verify(), "ssa-dominance", Some(u));
}

#[test]
fn many_errors_are_reported_in_one_run() {
    let mut fx = Fixture::kernel();
    let e = fx.block();
    let t = fx.m.const_bool(true);
    let one = fx.m.const_f32(1.0);
    let mut b = fx.at(e);
    b.op(Opcode::Add, TypeTable::BOOL, &[t, t], &[]);
    b.op(Opcode::Lt, TypeTable::F32, &[one, one], &[]);
    let diags = fx.verify();
    let rules: Vec<&str> = diags.iter().map(|d| d.rule.name()).collect();
    assert!(rules.contains(&"operand:numeric") && rules.contains(&"result:bool_shape_of_0"), "{rules:?}");
    assert!(rules.contains(&"terminator"), "{rules:?}");
}

#[test]
fn diagnostics_carry_text_spans() {
    let mut fx = Fixture::kernel();
    let e = fx.block();
    let mut b = fx.at(e);
    let v = b.alloca(TypeTable::VOID);
    b.ret(None);
    fx.m.func_mut(fx.f).set_inst_span(v.as_inst().unwrap(), Some(Span::new(7, 3)));
    let d = expect_rule(&fx.verify(), "result:explicit", Some(v));
    assert_eq!(d.span, Some(Span::new(7, 3)));
    assert!(d.to_string().starts_with("<input>:7:3: error: [result:explicit]"), "{d}");
}

#[test]
fn broken_layout_is_reported_not_panicked() {
    let mut fx = saxpy();
    let f = fx.m.func_mut(fx.f);
    let mut layout = f.blocks().to_vec();
    layout.push(Block(99));
    f.set_layout(layout);
    let d = expect_rule(&fx.verify(), "layout", None);
    assert!(d.message.contains("missing block bb99"), "{d}");
    // The dialect checker skips what it cannot walk instead of panicking.
    for dialect in &xir_spec::spec().dialects {
        let diags = xir::dialect::check_module(&fx.m, dialect);
        assert!(diags.iter().any(|d| d.rule == "layout"), "{}", diag::render(&diags));
    }
}

#[test]
fn verify_function_checks_one_function() {
    let mut fx = saxpy();
    let mut g = Function::new("g", FunctionKind::Callable, TypeTable::VOID);
    g.add_block();
    let g = fx.m.add_function(g);
    let mut diags = Vec::new();
    xir::verify::verify_function(&fx.m, fx.f, &mut diags);
    assert!(diags.is_empty(), "{}", diag::render(&diags));
    xir::verify::verify_function(&fx.m, g, &mut diags);
    assert_eq!(diags.len(), 1, "{}", diag::render(&diags));
    assert_eq!((diags[0].rule.name(), diags[0].function.as_deref()), ("terminator", Some("g")));
}

#[test]
fn diagnostics_are_shown_on_the_printed_ir() {
    let src = "\
// doc comment
callable @f(%a: f32) -> f32 {
^entry:
  // a comment above
  %x = add %a, f32 1.0 : f32
  %y = lt %x, %a : f32
  return %x
}
";
    let m = xir::text::parse_module(src, "t.xir").expect("parses");
    let diags = verify_module(&m);
    let shown = xir::verify::render_on_ir(&m, &diags);
    let want = "\
// doc comment
callable @f(%a: f32) -> f32 {
^entry:
  // a comment above
  %x = add %a, f32 1.0 : f32
  %y = lt %x, %a : f32
  ; error: [result:bool_shape_of_0] `lt` result: expected the bool shape of `f32`, found `f32`
  return %x
}
";
    assert_eq!(shown, want);
}

#[test]
fn cyclic_types_are_rejected_before_anything_recurses() {
    let mut fx = Fixture::kernel();
    let next = TypeId::new(fx.m.types.len() + 1);
    // An array of the struct interned right after it, which holds the array.
    let arr = fx.m.types.intern(Type::Array { elem: next, len: 2 });
    fx.m.types.intern(Type::Struct { fields: vec![arr], align: 4 });
    let e = fx.block();
    fx.at(e).ret(None);
    let diags = fx.verify();
    assert_eq!(diags.len(), 1, "{}", diag::render(&diags));
    assert_eq!(diags[0].rule, "type-ids");
    assert!(diags[0].message.contains("not defined before it"), "{}", diags[0]);
    for d in &xir_spec::spec().dialects {
        assert!(!xir::dialect::check_module(&fx.m, d).is_empty());
    }
}

/// One failing case per named constraint, written in XIR text: the rule,
/// the kernel's arguments, and the body lines placed after `^entry:` (line
/// 3), so the offending instruction sits on one of the lines from 4 on.
const CONSTRAINT_CASES: &[(&str, &str, &str)] = &[
    ("cases_unique", "%v: i32", "switch %v, merge ^m, default ^m, case 1 ^m, case 1 ^m"),
    ("return_matches_function", "", "return f32 1.0"),
    ("store_exact_type", "", "%s = alloca : f32\n  store %s, u32 1"),
    ("gep_path", "", "%s = alloca : array<f32, 4>\n  %g = gep %s, u32 9 : f32"),
    ("call_signature", "", "call @ext, f32 1.0"),
    ("static_cast_shape", "%a: vec<f32, 2>", "%r = cast.static %a : f32"),
    ("bitcast_same_size", "", "%r = cast.bitwise f32 1.0 : u64"),
    ("operands_same_type", "", "%r = add f32 1.0, f64 2.0 : f32"),
    ("shift_operands", "%a: vec<u32, 2>", "%r = shl %a, u32 1 : vec<u32, 2>"),
    ("select_shape", "%c: vec<bool, 2>", "%r = select %c, f32 1.0, f32 2.0 : f32"),
    ("three_lanes", "%a: vec<f32, 2>", "%r = cross %a, %a : vec<f32, 2>"),
    ("outer_product_shape", "%a: vec<f32, 3>", "%r = outer_product %a, %a : vec<f32, 3>"),
    ("linalg_mul_shape", "%m: mat<f32, 2>, %v: vec<f32, 3>", "%r = matrix_linalg_mul %m, %v : vec<f32, 3>"),
    ("aggregate_members", "", "%r = aggregate f32 1.0 : vec<f32, 2>"),
    ("shuffle_lanes", "%a: vec<f32, 2>", "%r = shuffle %a, u32 0, u32 5 : vec<f32, 2>"),
    ("extract_path", "%a: vec<f32, 2>", "%r = extract %a, u32 1 : u32"),
    ("insert_path", "%a: vec<f32, 2>", "%r = insert %a, u32 1, u32 0 : vec<f32, 2>"),
    ("atomic_path", "%b: buffer<f32>", "%r = atomic.fetch_add %b, f32 1.0, u32 0 : u32"),
    ("alloca_data_type", "", "%s = alloca : byte_buffer"),
    ("phi_incoming_types", "", "br target ^n\n^n:\n  %p = phi [u32 0, ^entry] : f32"),
    ("result_u32", "", "%r = warp.first_active_lane : i32"),
    ("result_u64", "", "%r = clock : u32"),
    ("result_u32_or_u64", "%b: buffer<f32>", "%r = buffer.size %b : i32"),
    ("texture_size_shape", "%t: texture2d<f32>", "%r = texture.size %t, u32 0 : vec<u32, 3>"),
    ("sample_shape", "%a: bindless_array, %uv: vec<f32, 2>", "%r = texture.sample %a, u32 0, %uv, u32 0 : vec<f32, 3>"),
    ("ray_shape", "%acc: accel", "%r = ray.trace_any %acc, f32 1.0, u32 255 : bool"),
    ("texel_read_shape", "%t: texture2d<f32>, %c: vec<i32, 3>", "%r = texture.read %t, %c : vec<f32, 4>"),
    ("texel_write_vec4", "%t: texture2d<f32>, %c: vec<i32, 2>", "texture.write %t, %c, f32 1.0"),
    ("buffer_write_type", "%b: buffer<f32>", "buffer.write %b, u32 0, u32 1"),
    ("buffer_write_part_path", "%b: buffer<vec<f32, 2>>", "buffer.write_part %b, u32 0, u32 1, u32 0"),
];

#[test]
fn every_constraint_rejects_its_case() {
    for &(rule, args, body) in CONSTRAINT_CASES {
        let src = format!(
            "extern @ext(%x: u32) -> void\nkernel @f({args}) block_size(1, 1, 1) {{\n^entry:\n  {body}\n  return\n^m:\n  return\n}}\n"
        );
        // `texture.write` takes a vector; a scalar fails its operand class
        // first, so that case uses a 3-lane vector instead.
        let src = src.replace("texture.write %t, %c, f32 1.0", "texture.write %t, %c, vec<f32, 3> [1.0, 2.0, 3.0]");
        let m = xir::text::parse_module(&src, "case.xir")
            .unwrap_or_else(|e| panic!("`{rule}` fixture does not parse:\n{}", diag::render(&e)));
        let diags = verify_module(&m);
        let hit = diags.iter().find(|d| d.rule == rule);
        let Some(d) = hit else { panic!("`{rule}` not reported for:\n{src}\ngot:\n{}", diag::render(&diags)) };
        let line = d.span.map(|s| s.line);
        let body_lines = body.lines().count() as u32;
        assert!(matches!(line, Some(l) if (4..4 + body_lines).contains(&l)), "`{rule}` at {line:?}: {d}");
        assert_eq!(d.function.as_deref(), Some("f"));
    }
    // Completeness: every registered constraint has a case.
    let covered: Vec<&str> = CONSTRAINT_CASES.iter().map(|c| c.0).collect();
    let missing: Vec<&str> = xir::verify::constraints::names().filter(|n| !covered.contains(n)).collect();
    assert!(missing.is_empty(), "constraints without a failing case: {missing:?}");
}

/// A variable (an `alloca`, a `gep`, a reference argument) is an address:
/// where the spec's operand class asks for a value, it is rejected at its
/// operand, by name; only the lvalue classes and call arguments take one.
#[test]
fn a_variable_where_a_value_belongs_is_rejected_at_the_operand() {
    let src = "\
kernel @k(%out: buffer<u32>) block_size(1, 1, 1) {
^entry:
  %v = alloca : u32
  %w = alloca : u32
  store %w, %v
  %s = add %v, u32 1 : u32
  buffer.write %out, u32 0, %v
  return
}
";
    let m = xir::text::parse_module(src, "t.xir").expect("parses");
    let shown: Vec<String> = verify_module(&m).iter().map(|d| d.to_string()).collect();
    assert_eq!(
        shown,
        [
            "<input>:5:3: error: [operand:any] `store` operand 1 (`value`) must be a value (not a function, not void, \
             not an lvalue), found an lvalue (a variable) of type `u32` (in @k, bb0, inst2)",
            "<input>:6:3: error: [operand:numeric] `add` operand 0 (`lhs`) must be a numeric scalar or vector (integer \
             or non-fp8 float), found an lvalue (a variable) of type `u32` (in @k, bb0, inst3)",
            "<input>:7:3: error: [operand:any] `buffer.write` operand 2 (`value`) must be a value (not a function, not \
             void, not an lvalue), found an lvalue (a variable) of type `u32` (in @k, bb0, inst4)",
        ]
    );
    // Loaded first, the same program verifies.
    let fixed = src
        .replace("  store %w, %v\n", "  store %v, u32 7\n  %l = load %v : u32\n  store %w, %l\n")
        .replace("add %v,", "add %l,")
        .replace("u32 0, %v", "u32 0, %l");
    let m = xir::text::parse_module(&fixed, "t.xir").expect("parses");
    assert_eq!(verify_module(&m), vec![]);
}

/// A call argument passed by value must be a value; by reference, an lvalue.
#[test]
fn call_arguments_follow_the_formal_kind() {
    let src = "\
callable @f(%x: u32) -> u32 {
^entry:
  return %x
}

kernel @k(%out: buffer<u32>) block_size(1, 1, 1) {
^entry:
  %v = alloca : u32
  store %v, u32 1
  %r = call @f, %v : u32
  buffer.write %out, u32 0, %r
  return
}
";
    let m = xir::text::parse_module(src, "t.xir").expect("parses");
    let shown: Vec<String> = verify_module(&m).iter().map(|d| d.to_string()).collect();
    assert_eq!(
        shown,
        ["<input>:10:3: error: [call_signature] `call`: argument 0 is passed by value and must not be an lvalue (in @k, \
          bb0, inst2)"]
    );
}

/// A type whose byte size does not fit in 64 bits is a verifier error (its
/// size would otherwise wrap and pass every size limit).
#[test]
fn a_type_whose_size_overflows_is_rejected() {
    let src = "\
kernel @k(%out: buffer<u32>) block_size(1, 1, 1) {
^entry:
  %v = alloca : struct<align 4>{array<u32, 2305843009213693952>, array<u32, 2305843009213693952>}
  return
}
";
    let m = xir::text::parse_module(src, "t.xir").expect("parses");
    let shown: Vec<String> = verify_module(&m).iter().map(|d| d.to_string()).collect();
    assert_eq!(
        shown,
        ["<input>: error: [type:size_fits_u64] type `struct<align 4>{array<u32, 2305843009213693952>, array<u32, \
          2305843009213693952>}`: its size in bytes does not fit in 64 bits"]
    );
}
