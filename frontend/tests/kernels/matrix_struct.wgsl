// The WebGPU compute sample's matrix multiply: each matrix is a storage
// struct whose size sits beside its runtime array of numbers. The front end
// holds each member as a buffer of its own (`firstMatrix.size` a one-element
// buffer, `firstMatrix.numbers` the array); A is 4x3, B is 3x5.
// inputs: {"dispatch": [8, 8, 1], "args": {"firstMatrix.size": [[4.0, 3.0]], "firstMatrix.numbers": [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0], "secondMatrix.size": [[3.0, 5.0]], "secondMatrix.numbers": [1.0, -1.0, 0.5, 2.0, 0.0, 3.0, 1.0, -2.0, 0.25, 4.0, -1.0, 2.0, 1.0, 0.5, -3.0], "resultMatrix.size": [[0.0, 0.0]], "resultMatrix.numbers": {"fill": 0.0, "len": 20}}}
// expect: {"buffers":{"firstMatrix.numbers":[1.0,2.0,3.0,4.0,5.0,6.0,7.0,8.0,9.0,10.0,11.0,12.0],"firstMatrix.size":[[4.0,3.0]],"resultMatrix.numbers":[4.0,7.0,-0.5,4.0,-1.0,13.0,13.0,-2.0,12.25,2.0,22.0,19.0,-3.5,20.5,5.0,31.0,25.0,-5.0,28.75,8.0],"resultMatrix.size":[[4.0,5.0]],"secondMatrix.numbers":[1.0,-1.0,0.5,2.0,0.0,3.0,1.0,-2.0,0.25,4.0,-1.0,2.0,1.0,0.5,-3.0],"secondMatrix.size":[[3.0,5.0]]},"printed":[]}
struct Matrix {
  size : vec2f,
  numbers : array<f32>,
}

@group(0) @binding(0) var<storage, read> firstMatrix : Matrix;
@group(0) @binding(1) var<storage, read> secondMatrix : Matrix;
@group(0) @binding(2) var<storage, read_write> resultMatrix : Matrix;

@compute @workgroup_size(8, 8)
fn main(@builtin(global_invocation_id) global_id : vec3u) {
  // Guard against out-of-bounds work group sizes
  if (global_id.x >= u32(firstMatrix.size.x) || global_id.y >= u32(secondMatrix.size.y)) {
    return;
  }

  resultMatrix.size = vec2(firstMatrix.size.x, secondMatrix.size.y);

  let resultCell = vec2(global_id.x, global_id.y);
  var result = 0.0;
  for (var i = 0u; i < u32(firstMatrix.size.y); i = i + 1u) {
    let a = i + resultCell.x * u32(firstMatrix.size.y);
    let b = resultCell.y + i * u32(secondMatrix.size.y);
    result = result + firstMatrix.numbers[a] * secondMatrix.numbers[b];
  }

  let index = resultCell.y + resultCell.x * u32(secondMatrix.size.y);
  resultMatrix.numbers[index] = result;
}
