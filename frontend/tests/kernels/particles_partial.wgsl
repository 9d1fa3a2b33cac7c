// inputs: {"dispatch": [4, 1, 1], "args": {"ps": [[[1.0, 2.0, 3.0], 1.0, [2.0, -2.0, 4.0], 1], [[0.0, 0.5, 0.0], 0.5, [0.0, -4.0, 0.0], 0], [[-1.0, 0.0, 8.0], 0.25, [1.0, 1.0, -1.0], 4]]}}
// expect: {"buffers":{"ps":[[[2.0,1.0,5.0],0.75,[7.0,-3.0,4.0],1],[[0.0,0.0,0.0],0.25,[0.0,7.0,0.0],2],[[-0.5,0.5,7.5],0.0,[1.0,0.0,7.0],4]]},"printed":[]}
// Particle update written member by member, as users write it: compound
// assignments to a vector member (`pos += vel * dt`), to one lane
// (`vel.y -= g`) and to a scalar member, and a lane store under a
// condition. Each is a write of that part only (`buffer.write_part`), never
// of the whole element. dt = 0.5 and the inputs keep every result exact.
struct Particle {
    pos: vec3<f32>,
    life: f32,
    vel: vec3<f32>,
    flags: u32,
}
@group(0) @binding(0) var<storage, read_write> ps: array<Particle>;

@compute @workgroup_size(4)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if (i >= arrayLength(&ps)) { return; }
    ps[i].pos += ps[i].vel * 0.5;
    ps[i].vel.y -= 1.0;
    ps[i].life -= 0.25;
    if (ps[i].pos.y < 0.0) {
        ps[i].pos.y = 0.0;
        ps[i].flags |= 2u;
    }
    ps[i].vel[i] = 7.0;
}
