// The CUDA engine's entry points in a build without CUDA: no devices, and a clear error.

#include "mtdesk/cuda/cuda_engine.h"
#include "mtdesk/error.h"

namespace mtdesk::cuda {
namespace {
[[noreturn]] void unavailable(const std::filesystem::path& model_dir) {
    throw UnsupportedError(model_dir.string(),
                           "this mtdesk was built without CUDA; use the CPU engine");
}
}  // namespace

std::vector<DeviceInfo> devices() {
    return {};
}

std::optional<DeviceInfo> device_info(int) {
    return std::nullopt;
}

std::unique_ptr<TranslationEngine> make_cuda_engine(const std::filesystem::path& model_dir,
                                                    const CudaEngineOptions&, const LoadProgress&) {
    unavailable(model_dir);
}

std::unique_ptr<Translator> open_cuda_translator(const std::filesystem::path& model_dir,
                                                 const CudaEngineOptions&) {
    unavailable(model_dir);
}

std::unique_ptr<TranslationEngine> make_synthetic_cuda_engine(
    const std::filesystem::path& tokenizer_dir, const ModelConfig&, const CudaEngineOptions&) {
    unavailable(tokenizer_dir);
}

double copy_bandwidth(int) {
    throw Error("this mtdesk was built without CUDA");
}

std::unique_ptr<CausalLM> load_cuda_causal_lm(const std::filesystem::path& model_dir,
                                              const CudaEngineOptions&) {
    unavailable(model_dir);
}

}  // namespace mtdesk::cuda
