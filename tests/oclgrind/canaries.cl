// SPDX-License-Identifier: Apache-2.0
// Negative controls for the Oclgrind runner: each kernel has exactly the defect its name says, so the tests
// that run them prove Oclgrind's checks are live (their CTest tests pass only when Oclgrind reports it).

// Reads one element past the end of `in` (n elements) in the last work-item.
__kernel void canary_out_of_bounds(__global const float* in, __global float* out, const int n) {
  const int i = (int)get_global_id(0);
  out[i] = in[i + 1 < n + 1 ? i + 1 : 0];
}

// Work-item l writes scratch[l] and reads scratch[l + 1] of its neighbour with no barrier between.
__kernel void canary_local_race(__global float* out) {
  __local float scratch[16];
  const int l = (int)get_local_id(0);
  scratch[l] = (float)l;
  out[get_global_id(0)] = scratch[(l + 1) % 16];
}
