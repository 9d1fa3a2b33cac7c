//! The front end's lowering as a tree: exact `--emit ast` prints of small
//! shaders, for what the interpreter's outputs cannot show (which returns
//! stay, the kernel's dispatch model, which writes touch only part of an
//! element).

use xir_frontend::{to_ast, Language, Overrides, Source};

fn ast(path: &str) -> String {
    let full = format!("{}/{path}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&full).expect("shader");
    let arenas = xir_ast::Arenas::default();
    let src = Source { path: &full, text: &text, language: Language::Wgsl };
    let m = to_ast(&arenas, &src, &Overrides::new()).unwrap_or_else(|d| panic!("{d}"));
    xir_ast::print_module(&m)
}

#[test]
fn trailing_returns_go_and_every_other_return_stays() {
    let want = "\
void mark(u32 i, u32 v, buffer<u32> out) {
    if (i < buffer.size(out)) {
        buffer.write(out, min(i, buffer.size(out) - 1u32), v);
    }
}

kernel void main(buffer<u32> out) block_size(4, 1, 1) whole_blocks noalias {
    let u32 i = $dispatch_id.x;
    if (i == 7u32) {
        return;
    }
    switch (i % 3u32) {
        case 0: {
            mark(i, 10u32, out);
        }
        case 1: {
            if (i > 2u32) {
                mark(i, 20u32, out);
                return;
            }
            mark(i, 21u32, out);
        }
        default: {
            buffer.write(out, min(i, buffer.size(out) - 1u32), 30u32);
        }
    }
}
";
    assert_eq!(ast("tests/kernels/tail_returns.wgsl"), want);
}

/// A store to a member or a lane of a buffer element is a partial write of
/// that part (never a read of the element and a write of all of it back),
/// the element index and a dynamic lane clamped as every index is.
#[test]
fn a_store_to_a_member_of_a_buffer_element_writes_only_that_member() {
    let want = "\
kernel void main(buffer<struct<align 8>{vec<f32, 2>, u32}> cells, buffer<vec<u32, 4>> lanes) block_size(8, 1, 1) whole_blocks noalias {
    buffer.write_part(lanes, min($dispatch_id.x / 4u32, buffer.size(lanes) - 1u32), $dispatch_id.x * 7u32 + 1u32, min($dispatch_id.x & 3u32, 3u32));
    let u32 k = $dispatch_id.x / 2u32;
    if (($dispatch_id.x & 1u32) == 0u32) {
        buffer.write_part(cells, min(k, buffer.size(cells) - 1u32), aggregate<vec<f32, 2>>(static_cast<f32>(k), 0.5), 0u32);
    } else {
        buffer.write_part(cells, min(k, buffer.size(cells) - 1u32), k + 10u32, 1u32);
    }
}
";
    assert_eq!(ast("tests/kernels/shared_element_fields.wgsl"), want);
}

/// A storage struct with members beside its runtime array is a buffer per
/// member, named `NAME.member`: a member that is not an array is a
/// one-element buffer reached at index 0 (atomics too), `arrayLength` of the
/// array member is its buffer's size, and a helper that uses the struct
/// gets each member as a parameter of its own.
#[test]
fn a_storage_struct_with_a_header_is_a_buffer_per_member() {
    let want = "\
void count(u32 v, buffer<u32> hist.total, buffer<u32> hist.largest, buffer<u32> hist.bins) {
    let u32 bin = v * buffer.size(hist.bins) / 32u32;
    let u32 _t1 = atomic.fetch_add(hist.bins, 1u32, min(bin, buffer.size(hist.bins) - 1u32));
    let u32 _t2 = atomic.fetch_max(hist.largest, v, 0u32);
}

kernel void main(buffer<u32> values, buffer<u32> hist.total, buffer<u32> hist.largest, buffer<u32> hist.bins) block_size(64, 1, 1) whole_blocks noalias {
    if ($dispatch_id.x < buffer.size(values)) {
        count(buffer.read(values, min($dispatch_id.x, buffer.size(values) - 1u32)), hist.total, hist.largest, hist.bins);
        let u32 _t1 = atomic.fetch_add(hist.total, 1u32, 0u32);
    }
}
";
    assert_eq!(ast("tests/kernels/header_atomics.wgsl"), want);
}
