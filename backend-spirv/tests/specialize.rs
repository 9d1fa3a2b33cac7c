//! `callable_specialization` on raw CFG: call sites passing resources or
//! shared-memory pointers are inlined (value returns meet in a Phi); call
//! sites passing only values and Function-storage pointers stay calls.

mod common;

use common::*;
use xir::Opcode;

const RAW: &str = r#"
callable @store1(%b: buffer<u32>, %i: u32) -> u32 {
^entry:
  %c = gt %i, u32 3 : bool
  cond_br %c, true ^big, false ^small
^big:
  buffer.write %b, %i, u32 1
  return u32 7
^small:
  return %i
}

callable @bump(%p: ref u32) -> void {
^entry:
  %v = load %p : u32
  %w = add %v, u32 1 : u32
  store %p, %w
  return
}

kernel @k(%out: buffer<u32>) block_size(4, 1, 1) {
^entry:
  %s = alloca.shared : u32
  %l = alloca : u32
  %t = extract $dispatch_id, u32 0 : u32
  %r = call @store1, %out, %t : u32
  call @bump, %s
  call @bump, %l
  %r2 = add %r, u32 1 : u32
  %lv = load %l : u32
  %r3 = add %r2, %lv : u32
  buffer.write %out, u32 0, %r3
  return
}
"#;

fn calls(m: &xir::Module, k: xir::FuncId) -> usize {
    let f = m.func(k);
    f.all_insts().filter(|&(_, i)| f.inst(i).opcode == Opcode::Call).count()
}

#[test]
fn resource_and_shared_pointer_call_sites_are_inlined_others_stay() {
    let mut m = parse(RAW);
    let k = kernel_of(&m);
    let raw = xir_spec::spec().dialect("xir.raw").unwrap();
    assert!(xir::dialect::check_module(&m, raw).is_empty());
    assert_eq!(calls(&m, k), 3);
    let n = xir_spirv::specialize::specialize_module(&mut m).expect("specializes");
    assert_eq!(n, 2, "the buffer call and the shared-pointer call");
    assert_eq!(calls(&m, k), 1, "the Function-pointer call stays");
    let diags = xir::dialect::check_module(&m, raw);
    assert!(diags.is_empty(), "{}", xir::diag::render(&diags));
    let f = m.func(k);
    let phis: Vec<_> = f.all_insts().filter(|&(_, i)| f.inst(i).opcode == Opcode::Phi).collect();
    assert_eq!(phis.len(), 1, "the two returns of @store1 meet in one Phi");
    assert_eq!(f.inst(phis[0].1).operands.len(), 2);
    // Idempotent: a second run finds nothing to do.
    assert_eq!(xir_spirv::specialize::specialize_module(&mut m), Ok(0));
}

#[test]
fn recursive_resource_callee_is_refused() {
    let src = r#"
callable @r(%b: buffer<u32>) -> void {
^entry:
  call @r, %b
  return
}
kernel @k(%out: buffer<u32>) block_size(1, 1, 1) {
^entry:
  call @r, %out
  return
}
"#;
    let mut m = parse(src);
    let e = xir_spirv::specialize::specialize_module(&mut m).unwrap_err();
    assert!(e.contains("recursive"), "{e}");
}
