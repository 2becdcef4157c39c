#pragma once
// NONE: no concurrency control at all. The throughput upper bound (CC overhead
// = 1 - tput(x) / tput(none)) and the proof that the serializability checker
// can fail: under contention its histories contain lost updates, dirty reads
// and cycles. A write changes the row in place at once, for every reader to
// see, and names its writer there (dirty_writes); a rollback puts the row
// back, even over a later writer's data.
#include <string_view>

#include "cc/traits.h"
#include "common/config.h"
#include "common/types.h"

namespace abyss::cc {

class None final {
 public:
  static constexpr SchemeTraits kTraits{
      .name = "none",
      .summary = "no concurrency control: the throughput upper bound and the checker's negative control",
      .paper = "Abyss §3",
      .family = Family::None,
      .aborts = false,  // nothing ever conflicts: a row is read and written in place
      .writes_in_place = true,
      .dirty_writes = true,
  };
  struct RowMeta {};
  struct AccessMeta {};
  struct TxnMeta {};

  None(const Config& /*config*/, uint32_t /*workers*/) {}

  Rc begin(auto& /*t*/, bool /*restart*/) { return Rc::Ok; }
  Rc read(auto& t, auto& a) {
    t.view_in_place(a);
    return Rc::Ok;
  }
  Rc write(auto& t, auto& a) {
    t.write_in_place(a);
    return Rc::Ok;
  }
  Rc upgrade(auto& /*t*/, auto& /*a*/) { return Rc::Ok; }
  Rc insert(auto& /*t*/, auto& /*a*/) { return Rc::Ok; }
  Rc commit(auto& t) {
    t.install_all();
    return Rc::Ok;
  }
  void abort(auto& /*t*/) {}
};

}  // namespace abyss::cc
