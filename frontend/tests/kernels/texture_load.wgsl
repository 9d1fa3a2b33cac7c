// Sampled textures read texel by texel: a 3x3 box sum of a 2D float
// texture (edges clamped) into a storage texture, and a 3D unsigned
// texture's texels and sizes into a buffer. An XIR texture has one mip
// level: `textureLoad` at level 0, `textureNumLevels` 1.
// inputs: {"dispatch": [4, 2, 1], "args": {"src": {"size": [3, 2], "texels": [[0.0, 0.0, 1.0, 0.0], [1.0, 0.0, 1.0, -1.0], [2.0, 0.0, 1.0, -2.0], [4.0, 0.0, 1.0, 0.0], [5.0, 1.0, 1.0, -1.0], [6.0, 2.0, 1.0, -2.0]]}, "dst": {"fill": [0.0, 0.0, 0.0, 0.0], "size": [3, 2]}, "vol": {"size": [2, 2, 2], "texels": [[0, 0, 0, 7], [1, 0, 0, 7], [2, 0, 0, 7], [3, 0, 0, 7], [4, 0, 0, 7], [5, 0, 0, 7], [6, 0, 0, 7], [7, 0, 0, 7]]}, "out": {"fill": 0, "len": 8}}}
// expect: {"buffers":{"dst":{"size":[3,2],"texels":[[15.0,1.0,9.0,-3.0],[21.0,3.0,9.0,-9.0],[27.0,5.0,9.0,-15.0],[27.0,2.0,9.0,-3.0],[33.0,6.0,9.0,-9.0],[39.0,10.0,9.0,-15.0]]},"out":[1007,1017,1027,1037,1047,1057,1067,1077],"src":{"size":[3,2],"texels":[[0.0,0.0,1.0,0.0],[1.0,0.0,1.0,-1.0],[2.0,0.0,1.0,-2.0],[4.0,0.0,1.0,0.0],[5.0,1.0,1.0,-1.0],[6.0,2.0,1.0,-2.0]]},"vol":{"size":[2,2,2],"texels":[[0,0,0,7],[1,0,0,7],[2,0,0,7],[3,0,0,7],[4,0,0,7],[5,0,0,7],[6,0,0,7],[7,0,0,7]]}},"printed":[]}
@group(0) @binding(0) var src: texture_2d<f32>;
@group(0) @binding(1) var dst: texture_storage_2d<rgba32float, write>;
@group(0) @binding(2) var vol: texture_3d<u32>;
@group(0) @binding(3) var<storage, read_write> out: array<u32>;

@compute @workgroup_size(4, 2)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
  let dims = textureDimensions(src);
  if id.x < dims.x && id.y < dims.y {
    var acc = vec4<f32>(0.0);
    for (var dy = -1; dy <= 1; dy++) {
      for (var dx = -1; dx <= 1; dx++) {
        let p = clamp(vec2<i32>(id.xy) + vec2<i32>(dx, dy), vec2<i32>(0), vec2<i32>(dims) - 1);
        acc += textureLoad(src, p, 0);
      }
    }
    textureStore(dst, id.xy, acc);
  }
  let v = textureDimensions(vol, 0);
  let i = id.y * 4u + id.x;
  if i < v.x * v.y * v.z {
    let p = vec3<i32>(vec3<u32>(i % v.x, (i / v.x) % v.y, i / (v.x * v.y)));
    out[i] = textureLoad(vol, p, 0).x * 10u + textureLoad(vol, p, 0).w + textureNumLevels(vol) * 1000u;
  }
}
