#pragma once
// The CC seam: what a scheme class must provide, checked hook by hook where
// the scheme is registered (src/cc/registry.h), so a missing or misspelt hook
// fails there with a message naming the hook, not deep inside txn.h.
//
// Hooks are member templates over the transaction (`auto& t` is Txn<CC>&,
// `auto& a` is Access<CC>&), so scheme headers need not include txn.h. The
// checks below call each hook with Txn<CC> and Access<CC>; a hook declared
// with the return type Rc is checked by its signature, not its body.
#include <concepts>
#include <cstdint>
#include <vector>

#include "cc/traits.h"
#include "common/config.h"
#include "common/knob.h"
#include "common/types.h"
#include "txn/access.h"
#include "txn/txn.h"

namespace abyss::cc {

// The types a scheme keeps, and its traits.
template <class CC>
concept SchemeTypes = requires {
  typename CC::RowMeta;     // kept in each row header; value-initialised on load and insert
  typename CC::AccessMeta;  // kept in each access-set entry
  typename CC::TxnMeta;     // kept per transaction, across restarts
  { CC::kTraits } -> std::convertible_to<SchemeTraits>;
};

template <class CC>
concept HasBegin = requires(CC& cc, Txn<CC>& t) {
  { cc.begin(t, true) } -> std::same_as<Rc>;
};
template <class CC>
concept HasRead = requires(CC& cc, Txn<CC>& t, Access<CC>& a) {
  { cc.read(t, a) } -> std::same_as<Rc>;
};
template <class CC>
concept HasWrite = requires(CC& cc, Txn<CC>& t, Access<CC>& a) {
  { cc.write(t, a) } -> std::same_as<Rc>;
};
template <class CC>
concept HasUpgrade = requires(CC& cc, Txn<CC>& t, Access<CC>& a) {
  { cc.upgrade(t, a) } -> std::same_as<Rc>;
};
template <class CC>
concept HasInsert = requires(CC& cc, Txn<CC>& t, Access<CC>& a) {
  { cc.insert(t, a) } -> std::same_as<Rc>;
};
template <class CC>
concept HasCommit = requires(CC& cc, Txn<CC>& t) {
  { cc.commit(t) } -> std::same_as<Rc>;
};
template <class CC>
concept HasAbort = requires(CC& cc, Txn<CC>& t) {
  { cc.abort(t) } -> std::same_as<void>;
};
template <class CC>
concept HasConstructor = std::constructible_from<CC, const Config&, uint32_t>;

// A scheme with flags of its own lists them as knob rows (common/knob.h),
// whose accessors reach a settings struct in its folder through
// Config::settings<S>(); the registry marks each row with the scheme's name
// (scheme_knobs in cc/schemes.h). A scheme without flags declares nothing.
template <class CC>
concept DeclaresKnobs = requires {
  CC::knobs();
};
template <class CC>
concept HasKnobs = requires {
  { CC::knobs() } -> std::same_as<std::vector<Knob>>;
};

// One static_assert per requirement, so the compiler names the one missing.
template <class CC>
consteval bool check_scheme() {
  static_assert(SchemeTypes<CC>,
                "a scheme defines RowMeta, AccessMeta, TxnMeta and `static constexpr SchemeTraits kTraits`");
  static_assert(HasConstructor<CC>, "a scheme is constructible from (const Config&, uint32_t workers)");
  static_assert(HasBegin<CC>, "a scheme defines Rc begin(auto& txn, bool restart)");
  static_assert(HasRead<CC>, "a scheme defines Rc read(auto& txn, auto& access)");
  static_assert(HasWrite<CC>, "a scheme defines Rc write(auto& txn, auto& access)");
  static_assert(HasUpgrade<CC>, "a scheme defines Rc upgrade(auto& txn, auto& access)");
  static_assert(HasInsert<CC>, "a scheme defines Rc insert(auto& txn, auto& access)");
  static_assert(HasCommit<CC>, "a scheme defines Rc commit(auto& txn)");
  static_assert(HasAbort<CC>, "a scheme defines void abort(auto& txn)");
  static_assert(!DeclaresKnobs<CC> || HasKnobs<CC>, "a scheme's own flags are `static std::vector<Knob> knobs()`");
  static_assert(!CC::kTraits.name.empty(), "a scheme's kTraits.name is its --cc name");
  return true;
}

template <class CC>
concept Scheme = SchemeTypes<CC> && HasConstructor<CC> && HasBegin<CC> && HasRead<CC> && HasWrite<CC> &&
    HasUpgrade<CC> && HasInsert<CC> && HasCommit<CC> && HasAbort<CC>;

}  // namespace abyss::cc
