// inputs: {"dispatch": [8, 1, 1], "args": {"cells": [[[0.0, 0.0], 0], [[0.0, 0.0], 0], [[0.0, 0.0], 0], [[0.0, 0.0], 0]], "lanes": [[0, 0, 0, 0], [0, 0, 0, 0]]}}
// expect: {"buffers":{"cells":[[[0.0,0.5],10],[[1.0,0.5],11],[[2.0,0.5],12],[[3.0,0.5],13]],"lanes":[[1,8,15,22],[29,36,43,50]]},"printed":[]}
// Several invocations write different parts of one element at once: even
// invocation 2k element k's position, odd invocation 2k+1 its count; and
// invocation t lane t % 4 of vector t / 4, all four lanes of a vector from
// one statement. naga stores each part through its own access chain, and so
// do we (`buffer.write_part`): every write survives. Writing whole elements
// back (read, change one part, write) would race and lose writes (on
// lavapipe all but one lane of each vector).
struct Cell {
    pos: vec2<f32>,
    count: u32,
}
@group(0) @binding(0) var<storage, read_write> cells: array<Cell>;
@group(0) @binding(1) var<storage, read_write> lanes: array<vec4<u32>>;

@compute @workgroup_size(8)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    lanes[gid.x / 4u][gid.x & 3u] = gid.x * 7u + 1u;
    let k = gid.x / 2u;
    if ((gid.x & 1u) == 0u) {
        cells[k].pos = vec2<f32>(f32(k), 0.5);
    } else {
        cells[k].count = k + 10u;
    }
}
