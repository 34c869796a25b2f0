#pragma once
// CudaModel as a single-sequence CausalLM (see cuda_causal_lm.cpp).

#include <memory>

#include "cuda/cuda_model.h"
#include "mtdesk/runtime/causal_lm.h"

namespace mtdesk::cuda {

/// A CausalLM over `model`, sharing its KV block pool (states take blocks from it and give
/// them back when destroyed). Not thread-safe: use it on the thread that owns the model.
std::unique_ptr<CausalLM> make_cuda_causal_lm(std::shared_ptr<CudaModel> model);

}  // namespace mtdesk::cuda
