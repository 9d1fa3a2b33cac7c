// inputs: {"dispatch": [8, 8, 1], "args": {"cam": [[0.0, 0.0, 0.0], 0.6, 8, 6, 3, 0], "spheres": [[[0.0, 0.0, 4.0], 1.0, [1.0, 0.2, 0.2, 1.0]], [[1.5, 0.5, 5.0], 0.8, [0.2, 1.0, 0.3, 1.0]], [[0.0, -101.0, 5.0], 100.0, [0.8, 0.8, 0.8, 1.0]]], "image": {"fill": 0, "len": 48}}}
// expect: {"buffers":{"image":[4286730295,4286730295,4286730295,4286730295,4286730295,4286730295,4286730295,4286730295,4287849551,4287849551,4287849551,4287849551,4287849551,4287849551,4287849551,4287849551,4289693302,4289693302,4278650660,4280295582,4281085147,4281414132,4281310239,4289693302,4291800226,4291800226,4278519066,4279177036,4280032394,4280163991,4291800226,4291800226,4286479998,4286545791,4286545791,4286611584,4286611584,4286677377,4286677377,4286743170,4286611584,4286677377,4286677377,4286677377,4286743170,4286743170,4286743170,4286808963],"spheres":[[[0.0,0.0,4.0],1.0,[1.0,0.20000000298023224,0.20000000298023224,1.0]],[[1.5,0.5,5.0],0.800000011920929,[0.20000000298023224,1.0,0.30000001192092896,1.0]],[[0.0,-101.0,5.0],100.0,[0.800000011920929,0.800000011920929,0.800000011920929,1.0]]]},"printed":[]}
// One primary ray per pixel against a few spheres; Lambert shading with a
// directional light, packed to RGBA8 in a u32 per pixel. The sky is
// `mix(vec3, vec3, f32)`: a scalar factor, which the lowering splats (it
// used to fail as `frontend:internal`, a `lerp` of mixed operand types).
struct Sphere { center: vec3<f32>, radius: f32, color: vec4<f32> }
struct Camera { origin: vec3<f32>, fov: f32, width: u32, height: u32, nspheres: u32, _pad: u32 }
@group(0) @binding(0) var<uniform> cam: Camera;
@group(0) @binding(1) var<storage, read> spheres: array<Sphere>;
@group(0) @binding(2) var<storage, read_write> image: array<u32>;

fn hit_sphere(s: Sphere, ro: vec3<f32>, rd: vec3<f32>) -> f32 {
    let oc = ro - s.center;
    let b = dot(oc, rd);
    let c = dot(oc, oc) - s.radius * s.radius;
    let disc = b * b - c;
    if (disc < 0.0) { return -1.0; }
    let t = -b - sqrt(disc);
    return select(-1.0, t, t > 0.0);
}

fn pack(c: vec3<f32>) -> u32 {
    let q = vec3<u32>(clamp(c, vec3(0.0), vec3(1.0)) * 255.0 + 0.5);
    return q.r | (q.g << 8u) | (q.b << 16u) | (255u << 24u);
}

@compute @workgroup_size(8, 8)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    if (any(gid.xy >= vec2(cam.width, cam.height))) { return; }
    let uv = (vec2<f32>(gid.xy) + 0.5) / vec2<f32>(f32(cam.width), f32(cam.height)) * 2.0 - 1.0;
    let rd = normalize(vec3<f32>(uv.x * cam.fov, -uv.y * cam.fov, 1.0));
    var best_t = 1e30;
    var best = -1;
    for (var i = 0u; i < cam.nspheres; i++) {
        let t = hit_sphere(spheres[i], cam.origin, rd);
        if (t > 0.0 && t < best_t) {
            best_t = t;
            best = i32(i);
        }
    }
    var color = mix(vec3(0.2, 0.3, 0.5), vec3(0.9, 0.9, 1.0), smoothstep(-1.0, 1.0, uv.y));
    if (best >= 0) {
        let s = spheres[best];
        let p = cam.origin + rd * best_t;
        let n = normalize(p - s.center);
        let light = normalize(vec3(1.0, 1.0, -1.0));
        let diffuse = max(dot(n, light), 0.0);
        color = s.color.rgb * (0.1 + 0.9 * diffuse);
    }
    image[gid.y * cam.width + gid.x] = pack(color);
}
