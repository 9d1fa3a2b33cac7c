// Twin of tests/corpus/struct_gep.xir: a local struct addressed member by
// member: a vector member, one lane of it, an element of an array member
// (dynamic index), whole-struct copies, a member replaced in a copy; and a
// storage array of structs read member by member and updated through an
// atomic on a member.
//
// The record's u32 member is atomic<u32> because the XIR kernel adds to it
// atomically; WGSL cannot load a struct holding an atomic as one value, so
// the record is read member by member (atomicLoad for the tag). Each
// invocation touches only its own record.
//
// The XIR value argument `w: array<f32, 4>` cannot be a uniform (4-byte
// stride), so it is a read-only storage binding of the same name.
struct Rec {
    f: f32,
    tag: atomic<u32>,
}

struct Local {
    pos: vec3<f32>,
    tag: u32,
    arr: array<f32, 4>,
}

@group(0) @binding(0) var<storage, read_write> recs: array<Rec>;
@group(0) @binding(1) var<storage, read> w: array<f32, 4>;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;
@group(0) @binding(3) var<storage, read_write> tags: array<u32>;

@compute @workgroup_size(4, 1, 1)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let t = gid.x;
    var s: Local;
    s.pos = vec3<f32>(1.0, 2.0, 3.0);
    s.tag = t;
    // pos.y = 10 + t
    s.pos.y = f32(t) + 10.0;
    for (var k = 0u; k < 4u; k++) {
        // arr[k] = w[k] * k
        s.arr[k] = w[k] * f32(k);
    }
    let whole = s;
    let sum = whole.arr[3] + whole.pos.y;
    let base = t * 2u;
    out[base] = sum;
    // Replace the tag in a copy and store the whole struct back.
    var tagged = whole;
    tagged.tag = 99u;
    s = tagged;
    let tv = s.tag;
    let rf = recs[t].f;
    let rtag = atomicLoad(&recs[t].tag);
    tags[t] = tv + rtag;
    out[base + 1u] = rf;
    // Bump the record's u32 member in place.
    atomicAdd(&recs[t].tag, 1000u);
}
