// Shim <vector_functions.h> of leap's CUDA-on-CPU emulation: everything lives in the shim <cuda_runtime.h>.
// Included by emulated candidates only (compiled with g++ -I<env/cpu_emu/include>).
#pragma once
#include "cuda_runtime.h"
