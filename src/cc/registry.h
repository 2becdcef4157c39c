#pragma once
// The one list of concurrency-control schemes. A scheme is registered here and
// nowhere else: its include and its entry in `Registry`. The `--cc` names, the
// dispatch to a template instantiation, the notes about flags a scheme does
// not use, the conformance test suites, `abyss describe` and through it the
// harness and its plots all read this list. Every entry is checked against the
// scheme seam (cc/scheme.h) here, hook by hook.
//
// The order is the order of tables and plot legends: the no-CC bound, the
// schemes of Abyss §2 as that paper lists them, the two of the Tale (§4), the
// serial reference, then the schemes published since.
#include <array>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <tuple>

#include "cc/scheme.h"
#include "cc/traits.h"

#include "cc/bamboo/bamboo.h"
#include "cc/cicada/cicada.h"
#include "cc/dl_detect/dl_detect.h"
#include "cc/global_lock/global_lock.h"
#include "cc/hekaton/hekaton.h"
#include "cc/hstore/hstore.h"
#include "cc/mocc/mocc.h"
#include "cc/mvcc/mvcc.h"
#include "cc/no_wait/no_wait.h"
#include "cc/none/none.h"
#include "cc/occ/occ.h"
#include "cc/plor/plor.h"
#include "cc/polaris/polaris.h"
#include "cc/silo/silo.h"
#include "cc/ssn/ssn.h"
#include "cc/tictoc/tictoc.h"
#include "cc/timestamp/timestamp.h"
#include "cc/vll/vll.h"
#include "cc/wait_die/wait_die.h"
#include "cc/wound_wait/wound_wait.h"

namespace abyss::cc {

template <class... S>
struct SchemeList {
  static_assert((check_scheme<S>() && ...));

  static constexpr std::array<SchemeTraits, sizeof...(S)> kTraits{S::kTraits...};

  // Calls fn.template operator()<CC>() with the scheme named `name` (the
  // canonical, lower-case name) and returns its result: the one switch from
  // a run-time name to a monomorphic instantiation.
  template <class Fn>
  static auto dispatch(std::string_view name, Fn&& fn) {
    using R = decltype(fn.template operator()<std::tuple_element_t<0, std::tuple<S...>>>());
    std::optional<R> out;
    const bool found = ((S::kTraits.name == name ? (out.emplace(fn.template operator()<S>()), true) : false) || ...);
    if (!found) throw std::invalid_argument("unknown scheme '" + std::string(name) + "'");
    return std::move(*out);
  }
};

using Registry = SchemeList<  //
    None,                     //
    NoWait,                   //
    WaitDie,                  //
    DlDetect,                 //
    WoundWait,                //
    BasicTimestampOrdering,   //
    Mvcc,                     //
    Occ,                      //
    Hstore,                   //
    Silo,                     //
    Tictoc,                   //
    GlobalLock,               //
    Polaris,                  //
    Hekaton,                  //
    Ssn,                      //
    Mocc,                     //
    Cicada,                   //
    Plor,                     //
    Bamboo,                   //
    Vll>;

}  // namespace abyss::cc
