// inputs: {"dispatch": [4, 1, 1], "args": {"particles": [[[1.0, 2.0, 3.0, 0.0], 1, 0.5], [[-1.0, 0.0, 2.0, 0.0], 2, 1.5], [[0.0, 0.0, 0.0, 0.0], 3, -2.0], [[4.0, -4.0, 1.0, 0.0], 4, 0.25]], "params": [[0.5, 1.0, 2.0, 0.0], 3], "lengths": {"fill": 0.0, "len": 4}, "moved": {"fill": [[0.0, 0.0, 0.0, 0.0], 0, 0.0], "len": 4}}}
// expect: {"buffers":{"lengths":[4.879805088043213,4.226136207580566,6.582575798034668,10.773052215576172],"moved":[[[4.0,2.5,1.25,1.0],1056964611,0.5000001788139343],[[5.0,1.5,-0.25,2.0],1069547526,1.5000007152557373],[[-4.0,-2.0,-1.0,3.0],3221225481,1.2611686178923354e-44],[[1.5,-3.75,4.125,4.0],1048576012,0.25000035762786865]],"particles":[[[1.0,2.0,3.0,0.0],1,0.5],[[-1.0,0.0,2.0,0.0],2,1.5],[[0.0,0.0,0.0,0.0],3,-2.0],[[4.0,-4.0,1.0,0.0],4,0.25]]},"printed":[]}
// Buffers of structs and vectors, a uniform struct read as a value, a
// helper taking a struct by value and a vector by pointer, swizzles,
// math built-ins (dot, sqrt, abs, clamp, floor) and bitcast.
struct Particle { pos: vec4<f32>, id: u32, mass: f32 }
struct Params { shift: vec4<f32>, scale: u32 }
@group(0) @binding(0) var<storage, read> particles: array<Particle>;
@group(0) @binding(1) var<uniform> params: Params;
@group(0) @binding(2) var<storage, read_write> lengths: array<f32>;
@group(0) @binding(3) var<storage, read_write> moved: array<Particle>;

fn advance(p: Particle, pos: ptr<function, vec4<f32>>) -> f32 {
    *pos = *pos + params.shift * p.mass;
    (*pos).w = f32(p.id);
    return dot((*pos).xyz, (*pos).xyz);
}

@compute @workgroup_size(4)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let p = particles[gid.x];
    var pos = p.pos;
    let d2 = advance(p, &pos);
    lengths[gid.x] = sqrt(d2) + floor(abs(pos.x)) - clamp(pos.y, -1.0, 1.0);
    let bits = bitcast<u32>(p.mass) ^ (p.id * params.scale);
    moved[gid.x] = Particle(pos.zyxw, bits, bitcast<f32>(bits & 0x3fffffffu));
}
