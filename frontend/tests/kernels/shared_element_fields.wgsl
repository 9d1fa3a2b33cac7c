// inputs: {"dispatch": [8, 1, 1], "args": {"cells": [[[0.0, 0.0], 0], [[0.0, 0.0], 0], [[0.0, 0.0], 0], [[0.0, 0.0], 0]]}}
// expect: {"buffers":{"cells":[[[0.0,0.5],10],[[1.0,0.5],11],[[2.0,0.5],12],[[3.0,0.5],13]]},"printed":[]}
// Two invocations write different members of one element at once: even
// invocation 2k its position, odd invocation 2k+1 its count. naga stores
// each member through its own access chain, and so do we
// (`buffer.write_part`): both writes survive. Writing the whole element
// back (read, change one member, write) would race and lose one of them.
struct Cell {
    pos: vec2<f32>,
    count: u32,
}
@group(0) @binding(0) var<storage, read_write> cells: array<Cell>;

@compute @workgroup_size(8)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let k = gid.x / 2u;
    if ((gid.x & 1u) == 0u) {
        cells[k].pos = vec2<f32>(f32(k), 0.5);
    } else {
        cells[k].count = k + 10u;
    }
}
