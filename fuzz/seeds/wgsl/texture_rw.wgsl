// Twin of tests/corpus/texture_rw.xir: storage textures. Invocation (x, y)
// reads texel (x, y) of a read-write 2D rgba32float texture, writes a scaled
// copy back in place, writes a u32 texel built from it to a 2D rgba32uint
// texture, and writes an i32 texel to slice y of a 3D rgba32sint texture.
// Invocation (0, 0) records the sizes at levels 0, 1 and 40.
//
// Storage textures have a single level and textureDimensions takes no level
// for them, so the XIR kernel's `texture.size` at level l (max(size >> l,
// 1)) is computed from the level-0 size; the shift amount is clamped to 31
// because WGSL takes shift amounts modulo 32 (40 would shift by 8).
@group(0) @binding(0) var src: texture_storage_2d<rgba32float, read_write>;
@group(0) @binding(1) var dst: texture_storage_2d<rgba32uint, write>;
@group(0) @binding(2) var vol: texture_storage_3d<rgba32sint, write>;
@group(0) @binding(3) var<storage, read_write> sizes: array<u32>;

fn size_at_level_2d(size: vec2<u32>, level: u32) -> vec2<u32> {
    return max(size >> vec2<u32>(min(level, 31u)), vec2<u32>(1u));
}

fn size_at_level_3d(size: vec3<u32>, level: u32) -> vec3<u32> {
    return max(size >> vec3<u32>(min(level, 31u)), vec3<u32>(1u));
}

@compute @workgroup_size(4, 2, 1)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let x = gid.x;
    let y = gid.y;
    let c = vec2<u32>(x, y);
    let t = textureLoad(src, c);
    let scaled = t * vec4<f32>(2.0, -1.0, 0.5, 1.0);
    textureStore(src, c, scaled);
    let ru = u32(t.x);
    let lin = y * 4u + x;
    textureStore(dst, c, vec4<u32>(ru, lin, x, 0xffffffffu));
    let xi = bitcast<i32>(x);
    let yi = bitcast<i32>(y);
    let neg = 0 - xi;
    textureStore(vol, vec3<i32>(xi, 1, yi), vec4<i32>(neg, yi, i32(-2147483648), 7));
    if lin == 0u {
        let s0 = size_at_level_2d(textureDimensions(src), 0u);
        let s1 = size_at_level_3d(textureDimensions(vol), 1u);
        let s40 = size_at_level_2d(textureDimensions(dst), 40u);
        sizes[0] = s0.x;
        sizes[1] = s0.y;
        sizes[2] = s1.x;
        sizes[3] = s1.y;
        sizes[4] = s1.z;
        sizes[5] = s40.x;
    }
}
