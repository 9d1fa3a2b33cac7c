// Twin of tests/corpus/simple_loop_continue.xir: odd decimal digits of
// nums[4t .. 4t+3], summed per invocation: a `for` loop over the four
// numbers around a `loop` (no continuing block: a do-while) over the digits,
// whose even-digit path `continue`s to the start of its body and which
// breaks after the last digit.
@group(0) @binding(0) var<storage, read> nums: array<u32>;
@group(0) @binding(1) var<storage, read_write> odd: array<u32>;

@compute @workgroup_size(4, 1, 1)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let t = gid.x;
    let base = t * 4u;
    var count = 0u;
    for (var k = 0u; k < 4u; k++) {
        var n = nums[base + k];
        loop {
            let d = n % 10u;
            let rest = n / 10u;
            n = rest;
            let last = rest == 0u;
            let is_odd = (d & 1u) != 0u;
            if !is_odd {
                if last {
                    break;
                }
                continue;
            }
            count = count + 1u;
            if last {
                break;
            }
        }
    }
    odd[t] = count;
}
