// The table itself: vectors keyed by (operation, format, recipe or packing
// layout, backend), behind a mutex, copied on write once a reader has seen
// them (registry.h "Thread safety").
#include "lowbit/registry/registry.h"

#include <mutex>
#include <utility>

namespace lowbit::registry {
namespace {

// One list of rows. `versions.back()` is the current version; a version
// handed to a reader (`shared` set) is never written again, so an Add after
// a read first copies it. Older versions stay alive for the readers that
// hold references into them.
template <typename Entry>
class CopyOnReadList {
 public:
  CopyOnReadList() { versions_.push_back(std::make_unique<std::vector<Entry>>()); }

  // Caller holds the registry's mutex.
  template <typename SameKey>
  void Put(Entry entry, SameKey same_key) {
    if (shared_) {
      versions_.push_back(std::make_unique<std::vector<Entry>>(*versions_.back()));
      shared_ = false;
    }
    std::vector<Entry>& rows = *versions_.back();
    for (Entry& existing : rows) {
      if (same_key(existing, entry)) {
        existing = std::move(entry);
        return;
      }
    }
    rows.push_back(std::move(entry));
  }

  // Caller holds the registry's mutex. The result never changes again.
  const std::vector<Entry>& Read() {
    shared_ = true;
    return *versions_.back();
  }

 private:
  std::vector<std::unique_ptr<std::vector<Entry>>> versions_;
  bool shared_ = false;
};

}  // namespace

struct Registry::Tables {
  std::mutex mutex;
  CopyOnReadList<KernelEntry> kernels;
  CopyOnReadList<RecipeEntry> recipes;
  CopyOnReadList<PackingEntry> packings;
  CopyOnReadList<MatmulEntry> matmuls;
  CopyOnReadList<TensorCoreEntry> tensor_cores;
};

Registry::Registry() : tables_(std::make_unique<Tables>()) {}
Registry::~Registry() = default;
Registry::Registry(Registry&&) noexcept = default;
Registry& Registry::operator=(Registry&&) noexcept = default;

Registry& Registry::Global() {
  static Registry registry;  // initialised once, thread-safely (C++11 statics)
  return registry;
}

void Registry::Add(KernelEntry entry) {
  std::lock_guard<std::mutex> lock(tables_->mutex);
  tables_->kernels.Put(std::move(entry), [](const KernelEntry& a, const KernelEntry& b) {
    return a.operation == b.operation && a.format == b.format && a.backend == b.backend;
  });
}

const std::vector<KernelEntry>& Registry::Entries() const {
  std::lock_guard<std::mutex> lock(tables_->mutex);
  return tables_->kernels.Read();
}

const KernelEntry* Registry::Find(Operation operation, FormatId format,
                                  std::string_view backend) const {
  std::lock_guard<std::mutex> lock(tables_->mutex);
  for (const KernelEntry& entry : tables_->kernels.Read()) {
    if (entry.operation == operation && entry.format == format && entry.backend == backend) {
      return &entry;
    }
  }
  return nullptr;
}

void Registry::AddRecipe(RecipeEntry entry) {
  std::lock_guard<std::mutex> lock(tables_->mutex);
  tables_->recipes.Put(std::move(entry), [](const RecipeEntry& a, const RecipeEntry& b) {
    return a.operation == b.operation && a.recipe == b.recipe && a.backend == b.backend;
  });
}

const std::vector<RecipeEntry>& Registry::RecipeEntries() const {
  std::lock_guard<std::mutex> lock(tables_->mutex);
  return tables_->recipes.Read();
}

const RecipeEntry* Registry::FindRecipe(RecipeOperation operation, std::string_view recipe,
                                        std::string_view backend) const {
  std::lock_guard<std::mutex> lock(tables_->mutex);
  for (const RecipeEntry& entry : tables_->recipes.Read()) {
    if (entry.operation == operation && entry.recipe == recipe && entry.backend == backend) {
      return &entry;
    }
  }
  return nullptr;
}

void Registry::AddPacking(PackingEntry entry) {
  std::lock_guard<std::mutex> lock(tables_->mutex);
  tables_->packings.Put(std::move(entry), [](const PackingEntry& a, const PackingEntry& b) {
    return a.layout == b.layout && a.direction == b.direction && a.backend == b.backend;
  });
}

const std::vector<PackingEntry>& Registry::PackingEntries() const {
  std::lock_guard<std::mutex> lock(tables_->mutex);
  return tables_->packings.Read();
}

const PackingEntry* Registry::FindPacking(PackingLayout layout, PackDirection direction,
                                          std::string_view backend) const {
  std::lock_guard<std::mutex> lock(tables_->mutex);
  for (const PackingEntry& entry : tables_->packings.Read()) {
    if (entry.layout == layout && entry.direction == direction && entry.backend == backend) {
      return &entry;
    }
  }
  return nullptr;
}

namespace {
bool SameMatmulRow(const MatmulEntry& a, MatmulOperation operation, std::string_view weight,
                   matmul::ActivationType activation, matmul::OutputType output, std::string_view backend) {
  return a.operation == operation && a.weight == weight && a.activation == activation && a.output == output &&
         a.backend == backend;
}
}  // namespace

void Registry::AddMatmul(MatmulEntry entry) {
  // Rows speak the weight kinds' canonical names (matmul_entry.h): a row
  // registered under an older name is stored under the name it means.
  entry.weight = std::string(CanonicalMatmulWeightName(entry.weight));
  std::lock_guard<std::mutex> lock(tables_->mutex);
  tables_->matmuls.Put(std::move(entry), [](const MatmulEntry& a, const MatmulEntry& b) {
    return SameMatmulRow(a, b.operation, b.weight, b.activation, b.output, b.backend);
  });
}

const std::vector<MatmulEntry>& Registry::MatmulEntries() const {
  std::lock_guard<std::mutex> lock(tables_->mutex);
  return tables_->matmuls.Read();
}

const MatmulEntry* Registry::FindMatmul(MatmulOperation operation, std::string_view weight,
                                        matmul::ActivationType activation, matmul::OutputType output,
                                        std::string_view backend) const {
  weight = CanonicalMatmulWeightName(weight);  // an older name finds its row
  std::lock_guard<std::mutex> lock(tables_->mutex);
  for (const MatmulEntry& entry : tables_->matmuls.Read()) {
    if (SameMatmulRow(entry, operation, weight, activation, output, backend)) return &entry;
  }
  return nullptr;
}

void Registry::AddTensorCore(TensorCoreEntry entry) {
  std::lock_guard<std::mutex> lock(tables_->mutex);
  tables_->tensor_cores.Put(std::move(entry), [](const TensorCoreEntry& a, const TensorCoreEntry& b) {
    return a.instruction == b.instruction && a.n == b.n && a.backend == b.backend;
  });
}

const std::vector<TensorCoreEntry>& Registry::TensorCoreEntries() const {
  std::lock_guard<std::mutex> lock(tables_->mutex);
  return tables_->tensor_cores.Read();
}

const TensorCoreEntry* Registry::FindTensorCore(TensorCoreId instruction, int n, std::string_view backend) const {
  std::lock_guard<std::mutex> lock(tables_->mutex);
  for (const TensorCoreEntry& entry : tables_->tensor_cores.Read()) {
    if (entry.instruction == instruction && entry.n == n && entry.backend == backend) return &entry;
  }
  return nullptr;
}

}  // namespace lowbit::registry
