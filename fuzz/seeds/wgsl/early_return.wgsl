// Twin of tests/corpus/early_return.xir: a linear search that returns from
// inside its loop (0xffffffff when absent); then, if the key was found at
// `at`, the invocation copies keys[at..8] into copy[8t..] until it meets a
// zero, where it returns from inside the loop (the final write to done[t]
// is skipped).
//
// The XIR callable takes the key buffer as an argument; a WGSL function
// cannot take a storage buffer, so `find` reads the module-scope `keys`.
@group(0) @binding(0) var<storage, read> keys: array<u32>;
@group(0) @binding(1) var<storage, read> queries: array<u32>;
@group(0) @binding(2) var<storage, read_write> pos: array<u32>;
@group(0) @binding(3) var<storage, read_write> copy: array<u32>;
@group(0) @binding(4) var<storage, read_write> done: array<u32>;

fn find(key: u32) -> u32 {
    let n = arrayLength(&keys);
    for (var i = 0u; i < n; i++) {
        if keys[i] == key {
            return i;
        }
    }
    return 0xffffffffu;
}

@compute @workgroup_size(4, 1, 1)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let t = gid.x;
    let at = find(queries[t]);
    pos[t] = at;
    if at == 0xffffffffu {
        return;
    }
    let base = t * 8u;
    for (var j = at; j < 8u; j++) {
        let kv = keys[j];
        if kv == 0u {
            return;
        }
        copy[base + (j - at)] = kv;
    }
    done[t] = 1u;
}
