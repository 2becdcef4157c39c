#pragma once
// The settings of each workload and each scheme (YcsbConfig, TpccConfig,
// DlDetectConfig, ...), one value per type, held in Config without common/
// knowing the types: a workload's or a scheme's folder defines its struct and
// its knob rows reach it with Config::settings<S>(). Adding a workload or a
// scheme with settings of its own therefore touches its folder and its
// registry only.
#include <any>
#include <map>
#include <typeindex>
#include <typeinfo>

namespace abyss {

class Settings {
 public:
  // The settings of type S, value-initialised on first use.
  template <class S>
  S& get() {
    std::any& slot = slots_[std::type_index(typeid(S))];
    if (!slot.has_value()) slot.emplace<S>();
    return *std::any_cast<S>(&slot);
  }
  // The settings of type S; S's defaults if none were set.
  template <class S>
  const S& get() const {
    const auto it = slots_.find(std::type_index(typeid(S)));
    if (it == slots_.end()) {
      static const S kDefaults{};
      return kDefaults;
    }
    return *std::any_cast<S>(&it->second);
  }

 private:
  std::map<std::type_index, std::any> slots_;
};

}  // namespace abyss
