#include "index/index.h"

namespace abyss {

void Index::refuse(uint64_t key) const {
  throw std::logic_error("index " + name_ + " refused key " + std::to_string(key) + ": it is the end key");
}

}  // namespace abyss
