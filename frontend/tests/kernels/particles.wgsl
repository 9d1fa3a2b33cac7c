// inputs: {"dispatch": [8, 1, 1], "args": {"params": [[0.0, -9.8, 0.0], 0.05, 0.5, 0.0, 0.6, 0.0], "particles": [[[0.0, 1.0, 0.0], 1.0, [1.0, -3.0, 0.0], 1], [[1.0, 0.05, 2.0], 0.01, [0.0, 0.0, 0.0], 1], [[2.0, 0.2, 0.0], 3.0, [0.0, -10.0, 1.0], 1], [[3.0, 4.0, 0.0], 1.0, [0.0, 0.0, 0.0], 0], [[-1.0, 2.0, -1.0], 0.5, [2.0, 0.5, -0.25], 3]]}}
// expect: {"buffers":{"particles":[[[0.04876549541950226,0.8298084139823914,0.0],0.949999988079071,[0.9753099083900452,-3.4038314819335938,0.0],1],[[1.0,5.0,0.0],2.0,[0.5,1.0,-0.5],1],[[2.0,0.18693006038665771,0.04876549541950226],2.950000047683716,[0.0,6.138600826263428,0.9753099083900452],3],[[3.0,4.0,0.0],1.0,[0.0,0.0,0.0],0],[[-0.9024690389633179,2.0004875659942627,-1.0121914148330688],0.44999998807907104,[1.9506198167800903,0.009753089398145676,-0.2438274770975113],3]]},"printed":[]}
// Particle update: array of structs, gravity and drag from a uniform,
// bounce on the floor, a lifetime counter; particles that die respawn.
struct Particle {
    pos: vec3<f32>,
    life: f32,
    vel: vec3<f32>,
    flags: u32,
}
struct SimParams { gravity: vec3<f32>, dt: f32, drag: f32, floor_y: f32, restitution: f32, _pad: f32 }
@group(0) @binding(0) var<uniform> params: SimParams;
@group(0) @binding(1) var<storage, read_write> particles: array<Particle>;

fn respawn(i: u32) -> Particle {
    let fi = f32(i);
    return Particle(vec3<f32>(fi, 5.0, 0.0), 2.0, vec3<f32>(0.5, 1.0, -0.5), 1u);
}

@compute @workgroup_size(4)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if (i >= arrayLength(&particles)) { return; }
    var p = particles[i];
    if ((p.flags & 1u) == 0u) { return; }
    p.life -= params.dt;
    if (p.life <= 0.0) {
        particles[i] = respawn(i);
        return;
    }
    p.vel += params.gravity * params.dt;
    p.vel *= exp(-params.drag * params.dt);
    p.pos += p.vel * params.dt;
    if (p.pos.y < params.floor_y) {
        p.pos.y = params.floor_y + (params.floor_y - p.pos.y) * params.restitution;
        p.vel.y = -p.vel.y * params.restitution;
        p.flags |= 2u;
    }
    particles[i] = p;
}
