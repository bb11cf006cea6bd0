// Shim <cuda_pipeline_primitives.h> of leap's CUDA-on-CPU emulation: see <cuda_pipeline.h>.
// Included by emulated candidates only.
#pragma once
#include "cuda_pipeline.h"
