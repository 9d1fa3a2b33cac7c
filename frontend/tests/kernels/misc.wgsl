// inputs: {"dispatch": [8, 1, 1], "args": {"src": [0, 1, 2, 3, 4, 5, -7, 2147483647], "out": {"fill": 0, "len": 32}, "hist": [0, 0, 0, 0], "pairs": {"fill": [0, 0], "len": 8}}}
// expect: {"buffers":{"hist":[2,3,1,2],"out":[2,0,0,4,4,-2147483648,1000000000,6,6,2,2000000000,7,-2147483640,6,2147483520,9,14,16,2147483520,9,-14,40,2147483520,11,-2,-58720256,-2147483648,40,-2147483648,-536870912,2147483520,42],"pairs":[[0,1],[2,2],[4,3],[6,4],[8,5],[10,6],[-14,4294967290],[-2,2147483648]],"src":[0,1,2,3,4,5,-7,2147483647]},"printed":[]}
struct Pair { a: i32, b: u32 }
@group(0) @binding(0) var<storage, read> src: array<i32>;
@group(0) @binding(1) var<storage, read_write> out: array<i32>;
@group(0) @binding(2) var<storage, read_write> hist: array<atomic<u32>, 4>;
@group(0) @binding(3) var<storage, read_write> pairs: array<Pair>;
var<workgroup> tile: array<i32, 8>;
var<private> bias: i32 = 3;
override SCALE: i32 = 2;

fn bump(v: i32) -> i32 { bias = bias + 1; return v + bias; }

@compute @workgroup_size(8)
fn main(@builtin(local_invocation_id) lid: vec3<u32>, @builtin(global_invocation_id) gid: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    let v = src[gid.x];
    tile[lid.x] = v;
    workgroupBarrier();
    let neighbour = tile[(lid.x + 1u) % 8u];
    var r: i32;
    switch (v & 3) {
        case 0: { r = v / (v & 0); }
        case 1, 2: { r = v % (v & 0); }
        default: { r = (-2147483647 - 1) / select(1, -1, v < 100); }
    }
    atomicAdd(&hist[u32(v) & 3u], 1u);
    let sh = v << (u32(v) + 30u);
    let f = f32(v) * 1e9;
    let sat = i32(f);
    out[gid.x * 4u] = r + neighbour * SCALE;
    out[gid.x * 4u + 1u] = sh;
    out[gid.x * 4u + 2u] = sat;
    out[gid.x * 4u + 3u] = bump(bitcast<i32>(li)) + i32(countOneBits(u32(v)));
    pairs[gid.x] = Pair(v * 2, u32(v) + 1u);
}
