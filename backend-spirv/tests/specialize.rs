//! `callable_specialization` on raw CFG: call sites passing resources the
//! callee uses, or shared-memory pointers, are inlined (value returns meet
//! in a Phi); call sites passing only values, Function-storage pointers and
//! unused resources stay calls, the unused resources deleted.

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
  buffer.write %b, u32 0, u32 1
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

/// A buffer passed through `@pass` to `@ignore`, which never touches it
/// (only a dead `gep` on it). Argument usage says unused, so no call is
/// inlined; both formals are deleted with their call operands.
const UNUSED: &str = r#"
callable @ignore(%b: buffer<u32>, %i: u32) -> u32 {
^entry:
  %e = gep %b, %i : u32
  %r = mul %i, u32 3 : u32
  return %r
}

callable @pass(%i: u32, %b: buffer<u32>) -> u32 {
^entry:
  %r = call @ignore, %b, %i : u32
  %s = add %r, u32 1 : u32
  return %s
}

kernel @k(%out: buffer<u32>) block_size(4, 1, 1) {
^entry:
  %t = extract $dispatch_id, u32 0 : u32
  %r = call @pass, %t, %out : u32
  buffer.write %out, %t, %r
  return
}
"#;

#[test]
fn unused_resource_arguments_force_no_inlining_and_are_deleted() {
    let mut m = parse(UNUSED);
    let k = kernel_of(&m);
    assert_eq!(xir_spirv::specialize::specialize_module(&mut m), Ok(0));
    let raw = xir_spec::spec().dialect("xir.raw").unwrap();
    let diags = xir::dialect::check_module(&m, raw);
    assert!(diags.is_empty(), "{}", xir::diag::render(&diags));
    assert_eq!(calls(&m, k), 1);
    let printed = xir::text::print_module(&m);
    let want = r#"callable @ignore(%i: u32) -> u32 {
^entry:
  %r = mul %i, u32 3 : u32
  return %r
}

callable @pass(%i: u32) -> u32 {
^entry:
  %r = call @ignore, %i : u32
  %s = add %r, u32 1 : u32
  return %s
}

kernel @k(%out: buffer<u32>) block_size(4, 1, 1) {
^entry:
  %t = extract $dispatch_id, u32 0 : u32
  %r = call @pass, %t : u32
  buffer.write %out, %t, %r
  return
}
"#;
    assert_eq!(printed, want);
    assert!(xir::verify::verify_module(&m).is_empty());
}

/// A used resource still inlines its call site; the call to an unused one
/// that inlining brings into the kernel stays, without the resource.
#[test]
fn a_used_resource_still_inlines_its_call_site() {
    let src = r#"
callable @use(%b: buffer<u32>, %i: u32) -> void {
^entry:
  call @ignore, %b
  buffer.write %b, %i, %i
  return
}

callable @ignore(%b: buffer<u32>) -> void {
^entry:
  return
}

kernel @k(%out: buffer<u32>) block_size(4, 1, 1) {
^entry:
  %t = extract $dispatch_id, u32 0 : u32
  call @use, %out, %t
  return
}
"#;
    let mut m = parse(src);
    let k = kernel_of(&m);
    assert_eq!(xir_spirv::specialize::specialize_module(&mut m), Ok(1), "only @use's call site");
    assert_eq!(calls(&m, k), 1, "the inlined call to @ignore stays, without its operand");
    let printed = xir::text::print_module(&m);
    assert!(printed.contains("callable @ignore() -> void {"), "{printed}");
    assert!(printed.contains("  call @ignore\n"), "{printed}");
}
