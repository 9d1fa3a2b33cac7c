// inputs: {"dispatch": [4, 2, 1], "args": {"src": {"size": [4, 2], "texels": [[0.0, 0.0, -1.5, 100.0], [1.0, 0.25, -1.5, 101.0], [2.0, 0.5, -1.5, 102.0], [3.0, 0.75, -1.5, 103.0], [4.0, 1.0, -1.5, 104.0], [5.0, 1.25, -1.5, 105.0], [6.0, 1.5, -1.5, 106.0], [7.0, 1.75, -1.5, 107.0]]}, "dst": {"size": [4, 2], "fill": [0, 0, 0, 0]}, "sizes": {"fill": 0, "len": 2}}}
// expect: {"buffers":{"dst":{"size":[4,2],"texels":[[0,0,0,4294967295],[1,1,1,4294967295],[2,2,2,4294967295],[3,3,3,4294967295],[4,4,0,4294967295],[5,5,1,4294967295],[6,6,2,4294967295],[7,7,3,4294967295]]},"sizes":[4,2],"src":{"size":[4,2],"texels":[[0.0,"-0.0",-0.75,100.0],[2.0,-0.25,-0.75,101.0],[4.0,-0.5,-0.75,102.0],[6.0,-0.75,-0.75,103.0],[8.0,-1.0,-0.75,104.0],[10.0,-1.25,-0.75,105.0],[12.0,-1.5,-0.75,106.0],[14.0,-1.75,-0.75,107.0]]}},"printed":[]}
@group(0) @binding(0) var src: texture_storage_2d<rgba32float, read_write>;
@group(0) @binding(1) var dst: texture_storage_2d<rgba32uint, write>;
@group(0) @binding(2) var<storage, read_write> sizes: array<u32>;
@compute @workgroup_size(4, 2, 1)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let c = vec2<i32>(gid.xy);
    let t = textureLoad(src, c);
    textureStore(src, c, t * vec4<f32>(2.0, -1.0, 0.5, 1.0));
    textureStore(dst, c, vec4<u32>(u32(t.x), gid.y * 4u + gid.x, gid.x, 0xffffffffu));
    textureStore(dst, vec2<i32>(-1, 0), vec4<u32>(9u));
    if (all(gid == vec3<u32>(0u))) {
        let s = textureDimensions(src);
        sizes[0] = s.x; sizes[1] = s.y;
    }
}
