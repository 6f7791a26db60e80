#include "test_helpers.h"

#include <fstream>
#include <random>

namespace kforge::test {

TempDir::TempDir()
{
    std::random_device rd;
    m_dir = std::filesystem::temp_directory_path() / ("kforge-test-" + std::to_string(rd()));
    std::filesystem::create_directories(m_dir);
}

TempDir::~TempDir()
{
    std::error_code ec;
    std::filesystem::remove_all(m_dir, ec);
}

torch::jit::Module twoLevelModel(const std::string& childBody, const std::string& rootBody)
{
    auto cu = std::make_shared<torch::jit::CompilationUnit>();
    torch::jit::Module child(c10::QualifiedName("__torch__.Act"), cu, true);
    child.define("def forward(self, x: Tensor) -> Tensor:\n    return " + childBody + "\n");
    torch::jit::Module root(c10::QualifiedName("__torch__.Root"), cu, true);
    root.register_module("act", child);
    root.define("def forward(self, x: Tensor) -> Tensor:\n    return " + rootBody + "\n");
    root.eval();
    return root;
}

void saveModule(const torch::jit::Module& module, const std::filesystem::path& path) { module.save(path.string()); }

void writeBytes(const std::filesystem::path& path, const std::string& bytes)
{
    std::ofstream out(path, std::ios::binary);
    out << bytes;
}

} // namespace kforge::test
