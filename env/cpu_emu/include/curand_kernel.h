// Shim <curand_kernel.h> of leap's CUDA-on-CPU emulation: not supported; stops the build with a clear error.
// Included by emulated candidates only.
#pragma once
#error "leap CPU emulation does not support cuRAND device API"
