#pragma once
// Shared fixtures for the engine suites: small TorchScript models written in C++, temp files.
#include <torch/script.h>

#include <filesystem>
#include <string>

namespace kforge::test {

// A temporary folder removed at destruction.
class TempDir {
public:
    TempDir();
    ~TempDir();
    std::filesystem::path path(const std::string& name) const { return m_dir / name; }

private:
    std::filesystem::path m_dir;
};

// Root(Any) -> child "act" whose forward applies `body` (TorchScript expression over x), e.g. "torch.relu(x)".
torch::jit::Module twoLevelModel(const std::string& childBody, const std::string& rootBody = "self.act.forward(x)");
void saveModule(const torch::jit::Module& module, const std::filesystem::path& path);
void writeBytes(const std::filesystem::path& path, const std::string& bytes);

} // namespace kforge::test
