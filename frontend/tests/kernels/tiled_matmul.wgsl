// inputs: {"dispatch": [8, 8, 1], "args": {"dims": [6, 5, 7, 0], "a": [-2.0, 1.0, -1.0, 2.0, 0.0, -2.0, 1.0, -1.0, 2.0, 0.0, -2.0, 1.0, -1.0, 2.0, 0.0, -2.0, 1.0, -1.0, 2.0, 0.0, -2.0, 1.0, -1.0, 2.0, 0.0, -2.0, 1.0, -1.0, 2.0, 0.0, -2.0, 1.0, -1.0, 2.0, 0.0, -2.0, 1.0, -1.0, 2.0, 0.0, -2.0, 1.0], "b": [-1.5, -0.5, 0.5, 1.5, -1.0, 0.0, 1.0, -1.5, -0.5, 0.5, 1.5, -1.0, 0.0, 1.0, -1.5, -0.5, 0.5, 1.5, -1.0, 0.0, 1.0, -1.5, -0.5, 0.5, 1.5, -1.0, 0.0, 1.0, -1.5, -0.5, 0.5, 1.5, -1.0, 0.0, 1.0], "c": {"fill": 0.0, "len": 30}}}
// expect: {"buffers":{"a":[-2.0,1.0,-1.0,2.0,0.0,-2.0,1.0,-1.0,2.0,0.0,-2.0,1.0,-1.0,2.0,0.0,-2.0,1.0,-1.0,2.0,0.0,-2.0,1.0,-1.0,2.0,0.0,-2.0,1.0,-1.0,2.0,0.0,-2.0,1.0,-1.0,2.0,0.0,-2.0,1.0,-1.0,2.0,0.0,-2.0,1.0],"b":[-1.5,-0.5,0.5,1.5,-1.0,0.0,1.0,-1.5,-0.5,0.5,1.5,-1.0,0.0,1.0,-1.5,-0.5,0.5,1.5,-1.0,0.0,1.0,-1.5,-0.5,0.5,1.5,-1.0,0.0,1.0,-1.5,-0.5,0.5,1.5,-1.0,0.0,1.0],"c":[3.0,5.5,-2.5,-3.5,6.0,5.5,3.0,-10.0,1.5,6.0,3.0,-9.5,2.5,4.0,-1.5,-2.0,-2.0,5.0,1.5,-9.0,-9.5,3.0,5.0,-3.5,-1.5,3.0,5.5,-2.5,-3.5,6.0]},"printed":[]}
// Tiled matrix multiply C = A * B with 4x4 shared tiles; sizes in a uniform.
struct Dims { M: u32, N: u32, K: u32, _pad: u32 }
const TILE: u32 = 4u;
@group(0) @binding(0) var<uniform> dims: Dims;
@group(0) @binding(1) var<storage, read> a: array<f32>;
@group(0) @binding(2) var<storage, read> b: array<f32>;
@group(0) @binding(3) var<storage, read_write> c: array<f32>;
var<workgroup> tileA: array<array<f32, 4>, 4>;
var<workgroup> tileB: array<array<f32, 4>, 4>;

@compute @workgroup_size(4, 4)
fn main(@builtin(global_invocation_id) gid: vec3<u32>,
        @builtin(local_invocation_id) lid: vec3<u32>) {
    let row = gid.y;
    let col = gid.x;
    var acc: f32 = 0.0;
    let tiles = (dims.K + TILE - 1u) / TILE;
    for (var t = 0u; t < tiles; t++) {
        let ak = t * TILE + lid.x;
        let bk = t * TILE + lid.y;
        tileA[lid.y][lid.x] = select(0.0, a[row * dims.K + ak], row < dims.M && ak < dims.K);
        tileB[lid.y][lid.x] = select(0.0, b[bk * dims.N + col], bk < dims.K && col < dims.N);
        workgroupBarrier();
        for (var k = 0u; k < TILE; k++) {
            acc += tileA[lid.y][k] * tileB[k][lid.x];
        }
        workgroupBarrier();
    }
    if (row < dims.M && col < dims.N) {
        c[row * dims.N + col] = acc;
    }
}
