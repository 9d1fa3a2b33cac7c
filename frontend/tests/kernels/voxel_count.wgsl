// inputs: {"dispatch": [16, 1, 1], "args": {"points": [[0.5, 0.5, 0.5], [1.5, 2.5, 3.5], [-0.5, 1.0, 1.0], [3.9, 3.9, 3.9], [4.2, 0.0, 0.0], [2.0, 2.0, 2.0], [1.5, 2.7, 3.1], [0.0, 0.0, -2.5], [3.0, 1.0, 2.0]], "counts": {"fill": 0, "len": 64}, "bounds": [100, 100, 100, -100, -100, -100], "misc": [100, 0, 0], "cell_of": {"fill": [0, 0, 0], "len": 9}}}
// expect: {"buffers":{"bounds":[-1,0,-3,4,3,3],"cell_of":[[0,0,0],[1,2,3],[-1,1,1],[3,3,3],[4,0,0],[2,2,2],[1,2,3],[0,0,-3],[3,1,2]],"counts":[1,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,1,0,0,1,0,0,0,0,0,0,0,0,0,0,0,0,0,0,2,0,0,0,0,0,1],"misc":[97,511,43981],"points":[[0.5,0.5,0.5],[1.5,2.5,3.5],[-0.5,1.0,1.0],[3.9000000953674316,3.9000000953674316,3.9000000953674316],[4.199999809265137,0.0,0.0],[2.0,2.0,2.0],[1.5,2.700000047683716,3.0999999046325684],[0.0,0.0,-2.5],[3.0,1.0,2.0]]},"printed":[]}
// Points binned into a 4x4x4 voxel grid: vec3 storage arrays (16-byte
// stride), i32 atomics (signed min / max of the coordinates), atomicSub,
// atomicExchange and atomicOr, and a helper returning a struct. `counts`
// is a fixed-size storage array given as a fill, which the naga oracle's
// input codec used to refuse ("expected a list of 64 elements").
struct Cell { index: u32, inside: bool }
@group(0) @binding(0) var<storage, read> points: array<vec3<f32>>;
@group(0) @binding(1) var<storage, read_write> counts: array<atomic<u32>, 64>;
@group(0) @binding(2) var<storage, read_write> bounds: array<atomic<i32>, 6>;
@group(0) @binding(3) var<storage, read_write> misc: array<atomic<u32>, 3>;
@group(0) @binding(4) var<storage, read_write> cell_of: array<vec3<i32>>;

fn locate(p: vec3<f32>) -> Cell {
    let c = vec3<i32>(floor(p));
    let inside = all(c >= vec3(0)) && all(c < vec3(4));
    let cc = clamp(c, vec3(0), vec3(3));
    return Cell(u32(cc.x + 4 * (cc.y + 4 * cc.z)), inside);
}

@compute @workgroup_size(8)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if (i >= arrayLength(&points)) { return; }
    let p = points[i];
    let cell = locate(p);
    let c = vec3<i32>(floor(p));
    cell_of[i] = c;
    atomicMin(&bounds[0], c.x); atomicMin(&bounds[1], c.y); atomicMin(&bounds[2], c.z);
    atomicMax(&bounds[3], c.x); atomicMax(&bounds[4], c.y); atomicMax(&bounds[5], c.z);
    if (cell.inside) {
        atomicAdd(&counts[cell.index], 1u);
    } else {
        atomicSub(&misc[0], 1u);
    }
    atomicOr(&misc[1], 1u << (i % 32u));
    if (i == 0u) { atomicExchange(&misc[2], 0xabcdu); }
}
