#pragma once
// A test that counts a rare event (a rollback, an insert, an acknowledged
// commit, an anomaly) after a short run: a sanitizer build or a loaded
// machine may run too little in the window for the count to say anything,
// and a longer window is the remedy that keeps the count's meaning.

namespace abyss::test {

// Calls `once(duration_s)` and, until `enough(result)` holds, calls it
// again with a window `factor` times longer, at most `runs` calls in all.
// Returns the last call's result, which the test then asserts on.
template <class Once, class Enough>
auto grow_window(double duration_s, Once once, Enough enough, int runs = 4, double factor = 4) {
  auto result = once(duration_s);
  for (int call = 1; call < runs && !enough(result); call++) {
    duration_s *= factor;
    result = once(duration_s);
  }
  return result;
}

}  // namespace abyss::test
