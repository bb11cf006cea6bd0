// Shim <curand_kernel.h> of leap's CUDA-on-CPU emulation, which does not support the cuRAND device API: it declares
// nothing, so an include the code never uses costs nothing. The rewriter rejects uses of the
// feature by name (after preprocessing); any other use fails the g++ compile, which leap also
// reports as emulation_unsupported. Included by emulated candidates only.
#pragma once
