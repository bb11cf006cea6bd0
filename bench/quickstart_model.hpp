// The decoder dimensions of configs/quickstart.toml's [policy] section, shared by the model
// benchmarks (bench_sampling, bench_learner) so that they measure the model `make run` trains.
// Header-only, no LibTorch: model_config is a plain struct.
#pragma once

#include "policy/model/model_config.hpp"

namespace leap::bench {

inline policy::model_config quickstart_model_config() {
  policy::model_config c;
  c.vocab_size = 2048;
  c.d_model = 192;
  c.n_layers = 3;
  c.n_heads = 6;
  c.n_kv_heads = 3;
  c.d_ff = 512;
  c.max_seq_len = 2048;
  return c;
}

} // namespace leap::bench
