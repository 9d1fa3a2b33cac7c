// Twin of tests/corpus/do_while.xir: Collatz step count with a do-while
// (`loop` whose `continuing` ends with `break if`): n = n even ? n / 2 :
// 3n + 1, counting steps until n == 1. The body runs at least once, so
// n = 1 takes 3 steps (1 -> 4 -> 2 -> 1).
@group(0) @binding(0) var<storage, read> start: array<u32>;
@group(0) @binding(1) var<storage, read_write> steps: array<u32>;

@compute @workgroup_size(8, 1, 1)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let t = gid.x;
    var n = start[t];
    var count = 0u;
    loop {
        if (n & 1u) == 0u {
            n = n >> 1u;
        } else {
            n = n * 3u + 1u;
        }
        count++;
        continuing {
            break if n == 1u;
        }
    }
    steps[t] = count;
}
