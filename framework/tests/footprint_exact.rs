//! `Function::footprint` is the function's heap to the byte: a clone of a
//! parsed function keeps exactly what its account says, measured by a
//! counting allocator. The function covers every part of the account:
//! more instructions than one table chunk, names (interned, and a block's
//! name equal to a value's), comments, locations and spill marks in the
//! sparse tables, use lists empty, inline and on the heap.
//!
//! One test in this binary: the counting allocator counts every thread.

use std::fmt::Write;

use xir::text::parse_module;
use xir_testgen::heap::measure;

#[global_allocator]
static ALLOC: xir_testgen::heap::Counting = xir_testgen::heap::Counting;

fn source(n: usize) -> String {
    let mut s = String::from("kernel @k(%out: buffer<u32>, %n: u32) block_size(1, 1, 1) {\n^entry:\n");
    s.push_str("  // a spill slot\n  %slot = alloca : u32 !spill(phi)\n");
    s.push_str("  %v0 = add %n, u32 1 : u32 !loc(\"src.cpp\", 3, 7)\n");
    for k in 1..n {
        if k % 100 == 0 {
            let _ = write!(s, "  br target ^v{k}\n^v{k}:\n");
        }
        if k % 50 == 0 {
            let _ = writeln!(s, "  // note {k}\n  // and a second line");
        }
        let p = k - 1;
        match k % 4 {
            // Named, used once (by the next).
            0 => {
                let _ = writeln!(s, "  %v{k} = add %v{p}, %n : u32");
            }
            // Unnamed in the text, used twice.
            1 => {
                let _ = writeln!(s, "  %v{k} = mul %v{p}, %v{p} : u32");
            }
            // Stored (the slot's list grows), then a named load.
            2 => {
                let _ = writeln!(s, "  store %slot, %v{p}\n  %v{k} = load %slot : u32 !loc(\"a.cpp\", {k}, 1)");
            }
            _ => {
                let _ = writeln!(s, "  %v{k} = sub %v{p}, %v{p} : u32");
            }
        }
    }
    let _ = writeln!(s, "  buffer.write %out, u32 0, %v{}\n  return\n}}", n - 1);
    s
}

#[test]
fn a_clone_keeps_exactly_what_its_account_says() {
    let m = parse_module(&source(20_000), "k.xir").expect("parses");
    let f = &m.functions[0];
    assert!(f.inst_capacity() > 1 << 14, "more than one table chunk");
    let (copy, _, kept) = measure(|| f.clone());
    let fp = copy.footprint();
    assert_eq!(fp.total(), kept, "{fp}");
    // And after a rename and shrinking (tables exact, names compacted).
    let mut copy = copy;
    let slot = copy.all_insts().map(|(_, i)| i).next().unwrap();
    copy.set_inst_name(slot, Some("renamed"));
    copy.shrink_to_fit();
    let (again, _, kept) = measure(|| copy.clone());
    assert_eq!(again.footprint().total(), kept);
    assert_eq!(again.inst_name(slot), Some("renamed"));
}
